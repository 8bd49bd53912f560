// Package confine puts an agent's process tree on the far side of a
// boundary the kernel keeps, so that nothing the agent runs — under any
// name, from any script, after any fork — can write what supervision
// stands on (the laserbrain home's records, the installed binaries, the
// clients' settings and hook files whether they exist yet or not, a
// repository's .git/hooks and .git/config, the project's policy) or
// anything outside the places an agent works, read the credentials a
// person keeps, or reach the network but where the project's policy
// allows. A refused agent that writes a program and runs it instead meets
// the same boundary: what an effect needs is not there.
//
// Credentials: the places they are kept are covered inside the tree
// (CredentialPaths, Spec.Mask) and the variables that hold them taken out
// of its environment (ScrubEnv), but what the agent's client reaches its
// model with and what a person passes through.
//
// The network: the tree has a namespace of its own with only its loopback
// up. The setup step opens the listeners the supervisor serves there (Net)
// and hands them out of the tree; the supervisor's Mediator decides each
// connection by one pure function of the policy (NetPolicy.Decide) and
// records it (Attempt). A unix socket crosses the namespaces; nothing else
// does.
//
// Two kernel features make it, and each covers the other's gap:
//
//   - A mount namespace of the agent's own, in which every protected path
//     is bound read-only onto itself (a write is EROFS, a rename or an
//     unlink of it EBUSY) and every directory above one that the agent
//     could otherwise rename is bound onto itself (EBUSY): a directory
//     moved aside would take the protected one with it and let a fresh
//     one be made in its place. Landlock rules are additive — a grant on
//     a directory covers its whole tree — so they cannot carve .git/hooks
//     out of a writable repository; bind mounts can.
//   - Landlock, which keeps writes to the places an agent works in (the
//     repository, $HOME, the temporary directories, a few devices), and
//     — what keeps the mounts in place — forbids the confined tree to
//     mount, unmount or remount anything, to ptrace or read /proc of a
//     process outside it (the supervisor's /proc/PID/root would lead
//     around the mounts), and, where the kernel has it (ABI 6), to signal
//     one.
//
// Go cannot run code between fork and exec, so the setup is a step of its
// own: Wrap makes the command run this binary again (HelperArg) in a new
// mount namespace — and, when not root, a user namespace mapping the user
// to itself, so that it may mount — which makes the mounts, drops what
// root could use to undo them (the capability bounding set), restricts
// itself with Landlock (no_new_privs set) and execs the agent.
//
// What the hooks must write goes through supercode/broker, which the
// unconfined parent owns. Inside tells a person's command whether it runs
// inside a confined tree (the mounts are visible in its own mountinfo, and
// nothing inside can take them away) or below a supervising laserbrain
// run or loop, which are subreapers, so that a double fork stays below
// them.
package confine
