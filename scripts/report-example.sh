#!/usr/bin/env bash
# Builds a small real fleet and draws it: three agents under `laserbrain run`
# on one throwaway repository (two of them on the same job, one leaving its
# ground and refused a force-push by the gate) and two ponder sessions (one
# converging with churn forecasts), then `laserbrain report --fleet` and a
# screenshot of the page in headless Chromium.
#
#   scripts/report-example.sh OUT.html [OUT.png]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
html=${1:?usage: report-example.sh OUT.html [OUT.png]}
png=${2:-}
case $html in /*) ;; *) html=$PWD/$html ;; esac
case $png in /*|"") ;; *) png=$PWD/$png ;; esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LASERBRAIN_HOME=$work/home LASERBRAIN_FLEET=example-shop PONDER_OCA=off
export PATH=$root/bin:$PATH
repo=$work/shop
mkdir -p "$repo/src" "$repo/deploy"
for f in src/parser.py src/lexer.py src/cli.py deploy/run.sh README.md; do echo "# $f" > "$repo/$f"; done
cd "$repo"
git init -q && git add -A && git -c user.name=x -c user.email=x@x commit -qm init

# hook EVENT TOOL KEY VALUE: feed the agent's hook one tool call.
cat > "$work/hook" <<'HOOK'
#!/bin/sh
case $1 in pre-tool-use) ev=PreToolUse ;; *) ev=PostToolUse ;; esac
printf '{"session_id":"s-%s","cwd":"%s","hook_event_name":"'$ev'","tool_name":"%s","tool_use_id":"%s-%s","tool_input":{"%s":"%s"},"tool_response":{}}' \
  "$LASERBRAIN_AGENT" "$PWD" "$2" "$LASERBRAIN_AGENT" "$(date +%s%N)" "$3" "$4" | laserbrain hook "$1" >/dev/null 2>&1 || true
HOOK
chmod +x "$work/hook"
export HOOK=$work/hook

laserbrain run --agent parser-1 --goal "write a JSON parser in Python" -- sh -c '
  c() { laserbrain check --run "$LASERBRAIN_RUN" --goal "$1" --progress "$2" --distance "$3" >/dev/null || true; }
  c "write a JSON parser in Python" advancing 7; $HOOK post-tool-use Write file_path "$PWD/src/parser.py"
  c "write a JSON parser in Python" advancing 6; $HOOK post-tool-use Edit file_path "$PWD/src/lexer.py"
  c "write a JSON parser in Python" advancing 5; c "write a JSON parser in Python" stuck 5
  c "restyle the landing page" advancing 5
  $HOOK pre-tool-use Bash command "git push --force origin main"
  c "write a JSON parser in Python" advancing 4; c "write a JSON parser in Python" advancing 3
  c "write a JSON parser in Python" advancing 2; c "write a JSON parser in Python" advancing 1' >/dev/null 2>&1 || true

laserbrain run --agent parser-2 --goal "write a fast JSON parser in Python" -- sh -c '
  c() { laserbrain check --run "$LASERBRAIN_RUN" --goal "$1" --progress "$2" --distance "$3" >/dev/null || true; }
  $HOOK post-tool-use Write file_path "$PWD/src/parser.py"
  for d in 8 8 8 8 8 8; do c "write a fast JSON parser in Python" advancing $d; done' >/dev/null 2>&1 || true

laserbrain run --agent deployer --goal "document the deploy scripts" -- sh -c '
  c() { laserbrain check --run "$LASERBRAIN_RUN" --goal "$1" --progress "$2" --distance "$3" >/dev/null || true; }
  $HOOK post-tool-use Edit file_path "$PWD/deploy/run.sh"
  c "document the deploy scripts" advancing 3; c "publish the package to npm" advancing 3
  $HOOK pre-tool-use Bash command "npm publish"
  c "publish the package to npm" advancing 2; c "document the deploy scripts" circling 3' >/dev/null 2>&1 || true

voices='{"voices": {"skeptic": "re-read every claim", "builder": "all concrete", "dreamer": "nothing missed", "empath": "calibrated"}}'
ponder start "the parser architecture" --lens arch >/dev/null
ponder units --scan src >/dev/null
echo "$voices" | ponder deliberate - >/dev/null
printf '%s\n' '{"voice":"dreamer","op":"add","unitId":"u0001","severity":"must","confidence":0.8,"text":"errors lose their position"}' \
  '{"voice":"dreamer","op":"add","unitId":"u0002","severity":"should","confidence":0.7,"text":"the lexer copies every token"}' | ponder delta - >/dev/null
ponder grade u0003 >/dev/null
ponder judge >/dev/null && ponder decide continue >/dev/null
ponder predict --churn 0.3 >/dev/null
echo "$voices" | ponder deliberate - >/dev/null
echo '{"voice":"builder","op":"edit","findingId":"f0001","recommendation":"carry line and column in ParseError"}' | ponder delta - >/dev/null
ponder judge >/dev/null && ponder decide continue >/dev/null
for churn in 0.1 0; do
  ponder predict --churn $churn >/dev/null
  echo "$voices" | ponder deliberate - >/dev/null
  ponder judge >/dev/null
  ponder decide continue >/dev/null 2>&1 || ponder decide stop >/dev/null
done
ponder start "the command line" >/dev/null
ponder units --scan src >/dev/null

laserbrain report --fleet "$repo" --html "$html"
if [ -n "$png" ]; then
  cd "$root" && go run ./scripts/screenshot -width 960 -height 1180 "$html" "$png"
  echo "wrote $png"
fi
