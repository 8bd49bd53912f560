#!/usr/bin/env bash
# skip-summary.sh CMD [ARGS...] — run CMD (make test's go test) and end with
# what it skipped.
#
# go test prints nothing of a package that passed, so a suite skipped for a
# missing tool reads "ok" like one that ran. Every such skip goes through
# internal/testenv, which appends a line (reason, package, test) to the file
# $LASERKIT_TEST_SKIPS names; this script points that at a fresh file, runs
# CMD, and prints one line per reason: how many tests, in which packages.
# It exits with CMD's status.
set -uo pipefail

skips="$(mktemp "${TMPDIR:-/tmp}/laserkit-skips.XXXXXX")"
trap 'rm -f "$skips"' EXIT
export LASERKIT_TEST_SKIPS="$skips"

"$@"
rc=$?

if [[ -s "$skips" ]]; then
	echo "--- SKIPPED for want of what they need (under CI=true these fail instead):"
	awk -F'\t' '
		!(($1, $2, $3) in test) { test[$1, $2, $3] = 1; n[$1]++ }
		!(($1, $2) in pkg) { pkg[$1, $2] = 1; pkgs[$1] = pkgs[$1] (pkgs[$1] == "" ? "" : ", ") $2 }
		END { for (why in n) printf "%d\t%s\t%s\n", n[why], why, pkgs[why] }
	' "$skips" | sort -t $'\t' -k1,1nr -k2,2 |
		awk -F'\t' '{ printf "SKIPPED %s in %s: %s\n", ($1 == 1 ? "1 test" : $1 " tests"), $3, $2 }'
else
	echo "--- no test was skipped for want of a tool, a server or the reference material"
fi
exit "$rc"
