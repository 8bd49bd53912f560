#!/usr/bin/env bash
# install-claude.sh — the real Claude Code CLI for the end-to-end tests.
#
#   scripts/install-claude.sh            install (or reuse) it; print the binary's absolute path
#   scripts/install-claude.sh --path     print where it is (or would be), install nothing
#
# The CLI is the npm package @anthropic-ai/claude-code at one pinned version
# (CLAUDE_CODE_VERSION, default below; the facts in shared/spec/agents.md were
# observed with it). Its optional dependency carries a native linux binary of
# ~373 MB, so it goes into a cache directory outside the work tree, one
# directory per version, and a second run with the same version reuses it
# without touching the network:
#
#   ${LASERKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/laserkit}/claude-code/<version>/
#
# The tests find it through internal/agenttest (LASERKIT_CLAUDE names a binary
# explicitly; otherwise this cache path, then `claude` on PATH at the pinned
# version). Nothing here talks to a model: the tests point the CLI at a
# scripted server on 127.0.0.1.
set -euo pipefail

VERSION="${CLAUDE_CODE_VERSION:-2.1.328}"
CACHE="${LASERKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/laserkit}"
DIR="$CACHE/claude-code/$VERSION"
BIN="$DIR/node_modules/.bin/claude"

log() { echo "install-claude: $*" >&2; }

if [[ "${1:-}" == "--path" ]]; then
	echo "$BIN"
	exit 0
fi
if [[ $# -gt 0 ]]; then
	log "unknown argument $1 (use no argument, or --path)"
	exit 2
fi

# A finished install leaves a stamp; a half-finished one (killed download) does not,
# and is redone from scratch.
if [[ -f "$DIR/.installed" && -x "$BIN" ]]; then
	log "reusing $DIR"
	echo "$BIN"
	exit 0
fi

command -v npm >/dev/null || {
	log "npm is not installed (Debian: apt-get install npm); cannot install the Claude Code CLI"
	exit 1
}

mkdir -p "$CACHE/claude-code"
tmp="$(mktemp -d "$CACHE/claude-code/.$VERSION.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
log "npm install @anthropic-ai/claude-code@$VERSION into $DIR (about 373 MB, once)"
(
	cd "$tmp"
	echo '{"name":"laserkit-claude-cache","private":true}' >package.json
	npm install --no-audit --no-fund --no-update-notifier --loglevel=error \
		"@anthropic-ai/claude-code@$VERSION" >&2
)
got="$("$tmp/node_modules/.bin/claude" --version 2>/dev/null || true)"
case "$got" in
"$VERSION"*) ;;
*)
	log "installed CLI reports version '$got', want $VERSION"
	exit 1
	;;
esac
touch "$tmp/.installed"
rm -rf "$DIR"
mv "$tmp" "$DIR"
trap - EXIT
log "installed $got"
echo "$BIN"
