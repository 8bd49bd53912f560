#!/usr/bin/env bash
# install-agents.sh — the real agent clients the end-to-end tests drive.
#
#   scripts/install-agents.sh [CLIENT…]          install (or reuse) them; print each binary's absolute path
#   scripts/install-agents.sh --path [CLIENT…]   print where they are (or would be), install nothing
#   scripts/install-agents.sh --list             print the pinned table: name package version dir bin
#
# CLIENT is laserbrain's name for it (claude codex gemini qwen opencode cline
# copilot); none means all seven. Each is one npm package at one pinned
# version (internal/agenttest pins the same; a test checks they agree), and
# goes into a cache outside the work tree, one directory per version:
#
#   ${LASERKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/laserkit}/<dir>/<version>/node_modules/.bin/<bin>
#
# Their native binaries are large (100–430 MB each), so a finished install
# leaves a stamp (.installed) and is reused without touching the network; a
# failed or half-finished one has no stamp and is redone from scratch. Several
# clients install at once; two runs installing the same client (parallel CI
# steps) take turns on a lock, and the second reuses the first's install.
# Nothing here talks to a model: the tests point each client at a scripted
# server on 127.0.0.1.
set -euo pipefail

# name         npm package                 version   cache dir    bin
TABLE="\
claude   @anthropic-ai/claude-code 2.1.328 claude-code claude
codex    @openai/codex             0.171.0 codex       codex
gemini   @google/gemini-cli        0.61.0  gemini-cli  gemini
qwen     @qwen-code/qwen-code      0.24.4  qwen-code   qwen
opencode opencode-ai               1.18.33 opencode    opencode
cline    cline                     3.0.65  cline       cline
copilot  @github/copilot           1.0.102 copilot     copilot"

# Another table of npm tools (scripts/install-clis.sh: the hosted services'
# CLIs) installs the same way.
TABLE="${LASERKIT_NPM_TABLE:-$TABLE}"

CACHE="${LASERKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/laserkit}"

log() { echo "install-agents: $*" >&2; }

# row NAME: sets pkg version dir bin, or fails naming the known clients.
row() {
	local line
	line="$(awk -v n="$1" '$1 == n' <<<"$TABLE")"
	if [[ -z "$line" ]]; then
		log "unknown client '$1' (known: $(awk '{printf "%s ", $1}' <<<"$TABLE"))"
		return 2
	fi
	read -r _ pkg version dir bin <<<"$line"
}

binpath() { echo "$CACHE/$dir/$version/node_modules/.bin/$bin"; }

# install NAME: one client, under a lock; prints nothing (the caller prints paths).
install_one() {
	local name="$1" pkg version dir bin
	row "$name"
	local dest="$CACHE/$dir/$version" b
	b="$(binpath)"
	mkdir -p "$CACHE/$dir"
	exec {lock}>"$CACHE/$dir/.$version.lock"
	flock "$lock"
	if [[ -f "$dest/.installed" && -x "$b" ]]; then
		log "$name: reusing $dest"
		return 0
	fi
	# What a killed install left (we hold the lock: nobody else is installing this version).
	rm -rf "$CACHE/$dir/.$version".??????
	command -v npm >/dev/null || {
		log "$name: npm is not installed (Debian: apt-get install npm); cannot install $pkg"
		return 1
	}
	local tmp
	tmp="$(mktemp -d "$CACHE/$dir/.$version.XXXXXX")"
	chmod 755 "$tmp"
	log "$name: npm install $pkg@$version into $dest"
	if ! (
		cd "$tmp"
		echo '{"name":"laserkit-agent-cache","private":true}' >package.json
		npm install --no-audit --no-fund --no-update-notifier --save-exact --loglevel=error \
			"$pkg@$version" >install.log 2>&1
	); then
		log "$name: npm install failed:"
		tail -20 "$tmp/install.log" >&2 || true
		rm -rf "$tmp"
		return 1
	fi
	# The version the binary reports, in a throwaway HOME (some clients write
	# their config on first start).
	local home got
	home="$(mktemp -d)"
	got="$(HOME="$home" "$tmp/node_modules/.bin/$bin" --version 2>/dev/null </dev/null || true)"
	rm -rf "$home"
	if [[ "$got" != *"$version"* ]]; then
		log "$name: the installed binary reports '$got', want $version"
		rm -rf "$tmp"
		return 1
	fi
	touch "$tmp/.installed"
	rm -rf "$dest"
	mv "$tmp" "$dest"
	log "$name: installed $version"
}

mode=install
case "${1:-}" in
--list)
	[[ $# -eq 1 ]] || { log "--list takes no client"; exit 2; }
	echo "$TABLE"
	exit 0
	;;
--path) mode=path; shift ;;
-*) log "unknown option $1 (use --path or --list)"; exit 2 ;;
esac

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
	read -r -a names <<<"$(awk '{printf "%s ", $1}' <<<"$TABLE")"
fi
for n in "${names[@]}"; do row "$n" || exit 2; done

if [[ $mode == install ]]; then
	pids=()
	for n in "${names[@]}"; do
		install_one "$n" &
		pids+=($!)
	done
	failed=()
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || failed+=("${names[$i]}")
	done
	if [[ ${#failed[@]} -gt 0 ]]; then
		log "failed: ${failed[*]} (rerun to retry; a finished install is kept)"
		exit 1
	fi
fi
for n in "${names[@]}"; do
	row "$n"
	binpath
done
