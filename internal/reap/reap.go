// Package reap keeps a subreaper's collecting of the orphans it inherits
// from taking the exit status of a child the process waits for itself.
// laserbrain run is the subreaper of an agent's tree and collects the
// orphans that exit there; it also starts children of its own (the broker's
// operations, git for the undo checkpoints) and waits for each. A reaper
// that collected one of those first would leave its Wait with "no child
// processes" — a hook failing closed, a checkpoint lost. Every child this
// process waits for is started here, and the reaper asks here before it
// collects one.
package reap

import (
	"os/exec"
	"sync"
)

var (
	mu     sync.Mutex
	waited = map[int]bool{}
)

// Start starts cmd as a child this process waits for itself (Wait, or
// Done after the caller's own Wait): the reaper leaves it alone.
func Start(cmd *exec.Cmd) error {
	mu.Lock()
	defer mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	waited[cmd.Process.Pid] = true
	return nil
}

// Done says the child cmd was waited for.
func Done(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	mu.Lock()
	delete(waited, cmd.Process.Pid)
	mu.Unlock()
}

// Wait waits for a child Start started.
func Wait(cmd *exec.Cmd) error {
	defer Done(cmd)
	return cmd.Wait()
}

// Run starts cmd and waits for it, as exec.Cmd.Run does.
func Run(cmd *exec.Cmd) error {
	if err := Start(cmd); err != nil {
		return err
	}
	return Wait(cmd)
}

// Collect runs a reaper's collecting with no child being started
// meanwhile; waitedFor tells it which exited children to leave alone.
func Collect(collect func(waitedFor func(pid int) bool)) {
	mu.Lock()
	defer mu.Unlock()
	collect(func(pid int) bool { return waited[pid] })
}
