#!/usr/bin/env bash
# install-claude.sh — the real Claude Code CLI for the end-to-end tests: the
# claude row of install-agents.sh, kept for `make claude` and old habits.
#
#   scripts/install-claude.sh            install (or reuse) it; print the binary's absolute path
#   scripts/install-claude.sh --path     print where it is (or would be), install nothing
set -euo pipefail
here="$(dirname "$0")"
case "${1:-}" in
"") exec "$here/install-agents.sh" claude ;;
--path) exec "$here/install-agents.sh" --path claude ;;
*)
	echo "install-claude: unknown argument $1 (use no argument, or --path)" >&2
	exit 2
	;;
esac
