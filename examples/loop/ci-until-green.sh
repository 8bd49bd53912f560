#!/bin/sh
# ci-until-green.sh — the reference loop for `laserbrain loop` (ralph.sid's
# shape): ./ci is the verifier, a fresh `fix` agent repairs a red build, a
# pinned `judge` examines a green one, and its work order goes to a fresh
# `task` agent. Completion is the judge's verdict after ./ci passes, never
# an agent's own word.
#
#   laserbrain loop examples/loop/ci-until-green.sh [--max-iters 25] [--goal TEXT]
#
# Variables: PLAN (default PLAN.md) is what the judge checks the tree
# against; SOAK, when set, is how many passing verdicts in a row end it
# (unset: the loop's --soak, else one passing verdict).
#
# Exit status: 0 the work converged; 3 an agent or the judge escalated to
# a person; otherwise the failing builtin's own code, passed on as it is:
# 5 a service failed (transport), 6 the judge gave no valid verdict, 7 a
# configuration problem. 4 is never this script's: it is the loop's
# "exhausted" (a budget ran out; --resume goes on). The loop itself refuses
# to start (7) when ./ci is missing or not executable, or a service's
# program is not installed.
PLAN=${PLAN:-PLAN.md}

# failed names a builtin's failure status.
failed() {
	case $1 in
	5) echo "its service failed, could not start or crashed (transport, exit 5)" ;;
	6) echo "it gave no valid verdict after the one bounce allowed (malformed, exit 6)" ;;
	7) echo "it is not configured right (config, exit 7)" ;;
	*) echo "exit $1" ;;
	esac
}

while :; do
	# Stream CI live, and keep its combined output for the fix agent.
	ci_log="$RUN_DIR/ci-latest.log"
	ci_status="$RUN_DIR/ci-latest.status"
	rm -f "$ci_log" "$ci_status"
	{ ./ci 2>&1; echo $? > "$ci_status"; } | tee "$ci_log"
	ci_rc=$(cat "$ci_status")
	rm -f "$ci_status"

	if test "x$ci_rc" != x0; then
		agent fix "CI is failing. Make ./ci pass. Do not expand scope." < "$ci_log"
		rc=$?
		case $rc in
		0) continue ;;
		3) echo "ci-until-green: the fix agent escalated" >&2; exit 3 ;;
		*) echo "ci-until-green: the fix agent failed: $(failed $rc)" >&2; exit $rc ;;
		esac
	fi

	# --soak-pending 2: a pass short of the soak count is 2 here, not the
	# protocol's 1, so this script verifies and judges again without
	# calling the task agent to be told there is nothing to do.
	findings=$(judge judge ${SOAK:+--soak "$SOAK"} --soak-pending 2 "CI passes. Is $PLAN complete given the current tree?")
	rc=$?
	case $rc in
	0) break ;;
	2) continue ;;
	1)
		printf '%s\n' "$findings" | agent task "Execute this work order against $PLAN."
		rc=$?
		case $rc in
		0) ;;
		3) echo "ci-until-green: the task agent escalated" >&2; exit 3 ;;
		*) echo "ci-until-green: the task agent failed: $(failed $rc)" >&2; exit $rc ;;
		esac
		;;
	3) echo "ci-until-green: the judge escalated" >&2; exit 3 ;;
	*) echo "ci-until-green: the judge failed: $(failed $rc)" >&2; exit $rc ;;
	esac
done

# Sweep the run's suggestions ledger once, after the fixpoint converged.
if test -s "$RUN_DIR/suggestions.md"; then
	agent task "The plan is complete. Triage these non-blocking suggestions; act only on the worthwhile ones:" < "$RUN_DIR/suggestions.md"
	rc=$?
	case $rc in
	0) ;;
	3) echo "ci-until-green: the task agent escalated" >&2; exit 3 ;;
	*) echo "ci-until-green: the suggestions sweep failed: $(failed $rc)" >&2; exit $rc ;;
	esac
fi
exit 0
