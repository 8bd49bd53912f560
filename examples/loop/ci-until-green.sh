#!/bin/sh
# ci-until-green.sh — the reference loop for `laserbrain loop` (seed 002's
# ralph): ./ci is the verifier, a fresh `fix` agent repairs a red build, a
# pinned `judge` examines a green one, and its work order goes to a fresh
# `task` agent. Completion is the judge's verdict after ./ci passes, never
# an agent's own word.
#
#   laserbrain loop examples/loop/ci-until-green.sh [--max-iters 25] [--goal TEXT]
#
# Variables: PLAN (default PLAN.md) is what the judge checks the tree
# against; SOAK (default 3) is how many passing verdicts in a row end it.
PLAN=${PLAN:-PLAN.md}
SOAK=${SOAK:-3}

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
		case $? in
		0) continue ;;
		3) echo "ci-until-green: the fix agent escalated" >&2; exit 3 ;;
		*) echo "ci-until-green: the fix agent failed" >&2; exit 4 ;;
		esac
	fi

	findings=$(judge judge --soak "$SOAK" "CI passes. Is $PLAN complete given the current tree? You are mid-soak; vary your scrutiny.")
	case $? in
	0) break ;;
	1)
		printf '%s\n' "$findings" | agent task "Execute this work order against $PLAN."
		case $? in
		0) ;;
		3) echo "ci-until-green: the task agent escalated" >&2; exit 3 ;;
		*) echo "ci-until-green: the task agent failed" >&2; exit 4 ;;
		esac
		;;
	3) echo "ci-until-green: the judge escalated" >&2; exit 3 ;;
	*) echo "ci-until-green: the judge malfunctioned" >&2; exit 4 ;;
	esac
done

# Sweep the run's suggestions ledger once, after the fixpoint converged.
if test -s "$RUN_DIR/suggestions.md"; then
	agent task "The plan is complete. Triage these non-blocking suggestions; act only on the worthwhile ones:" < "$RUN_DIR/suggestions.md"
fi
exit 0
