// Package loop is `laserbrain loop`: the verified fixpoint loop (ralph). A
// POSIX shell script owns the control flow, run by an embedded interpreter
// (mvdan.cc/sh/v3/interp); `./ci` is the verifier; models appear only as
// the `agent` builtin (a fresh session per call: the repairer or the
// worker) and the `judge` builtin (one session pinned per run, answering
// through a schema-checked verdict — package verdict). Completion is never
// read off prose.
//
// Every external command SCRIPT runs passes the operator gate in the
// interpreter's exec handler: a command the gate denies is refused (its
// reason on stderr, status 126, journaled) unless a person authorized that
// exact command, and always while the loop's own run drifts. Agent and
// judge sessions run under our hooks, each on a run of its own. Each
// judge call, and each agent call that is not a judge's work order, is a
// step of the loop's own drift run, read off ./ci and the
// verdict (drift.go), so `laserbrain supervise` sees a circling loop.
//
// # Builtins
//
//	agent NAME [INSTR...]   stdin is context, the arguments the instruction
//	  0 the session completed (says nothing about the task)
//	  3 it escalated (escalate tool; a command service: exit 3)
//	  5 transport: the service failed, could not start, or crashed
//	  7 config: unknown or disabled service, its program not found on
//	    PATH, DEFAULT_AGENT missing
//	judge NAME [--jury N | --soak N [--soak-pending S]] [--goldfish] [--pedantic] [INSTR...]
//	  0 the verdict passes (all N jurors; N consecutive soak passes)
//	  1 it does not: a rejection, whose rendered verdict is a work order;
//	    or it passes short of --soak N, rendered as "passed, soak k of N:
//	    no work to do; the judge looks again" (the protocol ralph.sid
//	    is written to, so such scripts run unchanged: the work order they hand to an agent
//	    says to change nothing, and that agent call is not a no-op)
//	  S with --soak-pending S (1, 2 or 9-125): a pass short of --soak N,
//	    for a script that would rather judge again than call an agent
//	  3 escalated   5 transport   6 malformed: a second malformed verdict
//	  after the one bounce (a schema error, or a rejection without
//	  blocker/required), or a second turn without a verdict after the one
//	  re-ask (a messages judge's: the conversation sent again with the
//	  verdict tool mandated; any other's: in words). The two are separate
//	  strikes.
//	  7 config: unknown service, one without verdict in its _TOOLS, or
//	    its program not found
//
// Statuses 0 and 1 are verdicts and 3 and up never are, so
// `judge && break || agent task` loops on verdicts; a script that must
// tell an escalation or a failure from a rejection uses `case $?`.
//
// The rendered verdict (markdown) is the judge's stdout, its transcript
// goes to stderr. SCRIPT's stdout is the loop's (Options.Stdout);
// `laserbrain loop --json` points it at stderr, so that stdout holds one
// JSON document, the summary. Loop-level --soak, --jury, --goldfish and --pedantic are
// the defaults of every judge call; the call's own flags win.
//
// # Exit codes of laserbrain loop
//
// The loop exits with SCRIPT's own status (0 when it ends normally, and
// whatever it passes on: the reference loop exits 3 when an agent or the
// judge escalates, and passes a builtin's 5, 6 or 7 on as it is — never 4,
// which stays the loop's "exhausted"), except when the loop itself stops
// SCRIPT, which it always says on stderr, journals (a "halt" record) and
// puts in the summary:
//
//	2    bad usage: flags, no SCRIPT, --soak with --jury; an input file
//	     that is not there or cannot be read (SCRIPT, --agents, --thread);
//	     --resume of a run that does not exist, is over, or is being run
//	     by another process; nothing ran (the shared exit-code table's 2)
//	4    exhausted: --max-iters reached before another iteration could
//	     start, the token --budget spent, the wall-clock --timeout, or two
//	     agent calls in a row that changed nothing while there was work
//	     to do (a run stopped so can go on with --resume)
//	7    config: agents.conf or SCRIPT invalid; an agent/judge SCRIPT names
//	     literally is unknown, disabled, a judge without verdict, or its
//	     program (claude, or _COMMAND's first word) is not found from the
//	     working directory with the loop's PATH; SCRIPT runs ./ci and ./ci
//	     is missing or not executable (all found before anything runs and
//	     listed together, so no model is asked to make a missing verifier
//	     pass); --resume of a run whose copy of SCRIPT was changed
//	8    internal: the journal, the run directory, the store or a
//	     checkpoint could not be read or written
//	128+N a signal stopped the run (130 SIGINT, 143 SIGTERM, 129 SIGHUP):
//	     the step in flight was killed, the journal is intact, --resume
//	     goes on from the last completed step
//
// Inside SCRIPT a command the gate refuses returns 126 and one not found
// 127; SCRIPT decides what they mean.
//
// # Iterations
//
// Iterations are started by the judge: every judge call opens the next
// one, and the run starts in an implicit iteration 0, so the repairs
// before the judge's first look are grouped there and every agent call
// belongs to the iteration it runs in. --max-iters N gives the judge N
// looks: the run stops when look N+1 would start, so a pass on the last
// allowed look is a success. So that a ./ci that never goes green (and
// so never reaches the judge) stops too, at most N agent calls that are
// not a judge's work order run between two looks.
//
// # Run directory
//
// $LASERBRAIN_HOME/loop/<run>/ (exported to SCRIPT as $RUN_DIR): run.json,
// script.sh (the copy --resume replays), steps.jsonl, suggestions.md,
// ci-NNN.log (a context over 64 KiB + 16 KiB, in full; the session gets
// the head, "[truncated: full log at …]" and the tail), ops/ (recorded
// output SCRIPT reads back), calls/ (each session's prompt files, MCP
// config, transcript, verdict), judges/ (pinned judge transcripts),
// seed.md. suggestions.md is the suggestions ledger: every suggestion of a
// passing verdict once (the same where and what, whitespace and case
// aside, is one entry), naming the judges and steps that made it; it is
// rendered from suggestions.json, and both are rewritten whole, atomically.
// Runs never share state: two loops on one repository each have
// their own directory, checkpoints and drift run. Before every agent and
// judge call the tree (tracked and untracked, not ignored, through a
// private index) is committed to refs/laserkit/loop/<run>/<step>; the
// judge's prompt names the checkpoint of its previous verdict and its own,
// so git diff A B shows what changed, new untracked files too (git diff A
// alone reads only the index's files). Prune
// (`laserbrain loop prune`) removes the checkpoints of runs that are over
// (SCRIPT ended on its own); those of a resumable run and of a run with no
// journal in this home only with All; a run a process holds keeps its own
// always. The journal is left as it is.
//
// # Seeing and stopping loops
//
// A running loop holds its run directory's lock (gofrs/flock) for as long
// as it runs, and names itself in run.json: its pid and that pid's start
// time (/proc). List and Status (`laserbrain loop list`, `loop status
// RUN`) read whether a run is running off the lock alone, and its
// iteration, soak count, last steps, verdict and budgets left off the
// journal. Cancel (`loop cancel RUN`, a person's command the gate refuses
// to agents) sends the loop SIGINT only while the lock is held and the
// pid still names the process that started when the loop said, through a
// handle on that process (a pidfd), so a reused pid is never signalled;
// the loop then stops as on Ctrl-C (130, resumable).
//
// # Resume
//
// --resume RUN re-runs the run's own copy of SCRIPT (SCRIPT may be named
// too, as in `loop SCRIPT --resume RUN`, when it holds the same bytes;
// another file is refused), answering every step
// the journal completed from the journal (status, recorded output, the
// loop's state: iteration, soak counters, the pinned judge session,
// tokens) without running it, until the first step it has no record of:
// that one (the step in flight when the run stopped) and all after it run
// live. Settings given with --resume override the run's own (so a run
// stopped at --max-iters can go on with a higher one); --timeout counts
// from the start of each invocation. Steps are matched by where in SCRIPT
// they run and their argv; the first step that does not match runs live,
// and replay ends there.
//
// # Services
//
// agents.conf (--agents FILE, else ./agents.conf, over the starter fix,
// task and judge services) is rc.conf-style shell: <svc>_ENABLED (YES,
// MANUAL: ask on the terminal, NO — the default for a new service), _KIND
// (claude, the default, or command), _COMMAND, _TOOLS, _MODEL, _PROMPT
// (colon-separated files), _SYSTEM, _DESC, _NAME, _MAX_TOKENS, _BASE_URL,
// _API_KEY (file:// allowed), _THINKING, _AUTO_COMPACT, _ALIASES,
// _INHERIT, _SKILLS (read, not used), and DEFAULT_AGENT. Only assignments
// are allowed; values expand as in the shell, without command
// substitution.
//
// A claude service runs `claude -p` (stream-json, rendered on stderr) with
// our hooks (--settings) and `laserbrain mcp --loop-call DIR` (escalate;
// verdict for a judge); _TOOLS map to --tools and --allowedTools (bash,
// edit, read, search, git_status, git_diff, verdict, escalate; other names
// pass through); agents run in acceptEdits, judges in dontAsk. The judge's
// session is started with --session-id and continued with --resume.
// A messages service (a judge only) is asked by the loop itself through
// the Messages API (_BASE_URL, else ANTHROPIC_BASE_URL; _API_KEY, else
// ANTHROPIC_API_KEY; _MODEL required), offered the read-only tools read,
// search and git_diff and verdict and escalate as _TOOLS names them; its
// pinned conversation is judges/<name>.messages.json.
//
// A command service gets the prompt as its last argument and the context
// on stdin, with LASERBRAIN_ROLE, LASERBRAIN_ESCALATE (write a reason
// there, or exit 3), LASERBRAIN_USAGE (write {"input_tokens","output_tokens",
// "cache_read_input_tokens","cache_creation_input_tokens"} there to count
// against --budget), and for a judge
// LASERBRAIN_JUDGE_SESSION, LASERBRAIN_JUDGE_TRANSCRIPT and
// LASERBRAIN_VERDICT_SCHEMA; its verdict is the last line of its stdout.
//
// Where the kernel can (Options.Confine), each session runs behind the
// same boundary as laserbrain run's agent: it cannot write the laserbrain
// home (the loop's journal among it), the binaries or the clients' and
// git's hook files; its hooks, its MCP server (its own call only) and its
// checks go through the loop's broker; LASERBRAIN_ESCALATE and
// LASERBRAIN_USAGE then name a writable place of the call's own, copied
// into the journal after. SCRIPT itself, the person's, is not confined:
// its commands pass the gate.
package loop
