#!/usr/bin/env bash
# Builds a small live fleet and takes laserbrain ui's page of it: three
# Claude Code sessions (their hooks fed by hand) on one throwaway
# repository — two on the same job, the one that yields halted by a
# supervisor round, and one leaving its ground and refused `npm publish` by
# the gate — then `laserbrain ui` on it and a screenshot of its first
# screen in headless Chromium: the README's picture.
#
#   scripts/ui-example.sh OUT.png
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
png=${1:?usage: ui-example.sh OUT.png}
case $png in /*) ;; *) png=$PWD/$png ;; esac

work=$(mktemp -d)
ui=
cleanup() {
  if [ -n "$ui" ]; then kill -INT "$ui" 2>/dev/null || true; wait "$ui" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
export LASERBRAIN_HOME=$work/home LASERBRAIN_FLEET=example-shop PONDER_OCA=off
export PATH=$root/bin:$PATH
repo=$work/shop
mkdir -p "$repo/src" "$repo/deploy"
for f in src/parser.py src/lexer.py deploy/run.sh README.md; do echo "# $f" > "$repo/$f"; done
cd "$repo"
git init -q && git add -A && git -c user.name=x -c user.email=x@x commit -qm init

# hook AGENT SESSION EVENT [TOOL KEY VALUE]: one hook event of the agent's
# Claude Code session, as Claude Code sends it.
hook() {
  local agent=$1 session=$2 event=$3 tool=${4:-} key=${5:-} value=${6:-} name
  case $event in
    session-start) name=SessionStart ;; pre-tool-use) name=PreToolUse ;; post-tool-use) name=PostToolUse ;;
  esac
  local body="\"session_id\":\"$session\",\"cwd\":\"$repo\",\"hook_event_name\":\"$name\""
  if [ -n "$tool" ]; then
    body="$body,\"tool_name\":\"$tool\",\"tool_use_id\":\"toolu_$(date +%s%N)\",\"tool_input\":{\"$key\":\"$value\"},\"tool_response\":{}"
  else
    body="$body,\"source\":\"startup\""
  fi
  echo "{$body}" | LASERBRAIN_AGENT=$agent laserbrain hook "$event" >/dev/null 2>&1 || true
}
check() { laserbrain check --run "$1" --goal "$2" --progress "$3" --distance "$4" >/dev/null || true; }

p1=7f3a9c2e51b0 p2=2b8d41e6c903 dp=c41e07a9d2f5
hook parser-1 $p1 session-start
hook parser-2 $p2 session-start
hook deployer $dp session-start

hook parser-1 $p1 post-tool-use Write file_path "$repo/src/parser.py"
check $p1 "write a JSON parser in Python" advancing 7
hook parser-2 $p2 post-tool-use Write file_path "$repo/src/parser.py"
check $p2 "write a fast JSON parser in Python" advancing 8
hook deployer $dp post-tool-use Edit file_path "$repo/deploy/run.sh"
check $dp "document the deploy scripts" advancing 3
hook parser-1 $p1 post-tool-use Edit file_path "$repo/src/lexer.py"
check $p1 "write a JSON parser in Python" advancing 6
check $p2 "write a fast JSON parser in Python" stuck 8
check $p1 "write a JSON parser in Python" advancing 5
hook parser-1 $p1 post-tool-use Bash command "python3 -m pytest tests/test_parser.py"
check $p1 "write a JSON parser in Python" advancing 4
check $dp "publish the package to npm" advancing 3
hook deployer $dp pre-tool-use Bash command "npm publish"
check $dp "publish the package to npm" advancing 2

laserbrain supervise --repo "$repo" >/dev/null

laserbrain ui --repo "$repo" >"$work/ui.out" 2>"$work/ui.err" &
ui=$!
link=
for _ in $(seq 1 100); do
  link=$(grep -m1 '^http://' "$work/ui.out" || true)
  [ -n "$link" ] && break
  sleep 0.1
done
if [ -z "$link" ]; then cat "$work/ui.err" >&2; echo "laserbrain ui printed no link" >&2; exit 1; fi

cd "$root" && go run ./scripts/screenshot -width 1280 -height 1040 \
  -ready "document.getElementById('conn').textContent === 'live' && document.querySelectorAll('tr[data-agent]').length === 3" \
  "$link" "$png"
echo "wrote $png"
