package operator

import (
	"strings"
	"testing"
)

// TestPersonOnly: laserbrain's person-only commands are refused in every
// presence however they are spelled (wrappers, paths, nested shells,
// go run), with a reason that says no authorization helps; their
// neighbours that change nothing (help, dry runs, reading commands, a
// mention in data) are not.
func TestPersonOnly(t *testing.T) {
	person := []string{
		"laserbrain authorize --run 9d14 -- git push -f origin HEAD:main",
		"laserbrain authorize --list",
		"laserbrain authorize --revoke 01J9",
		"/usr/local/bin/laserbrain authorize --write .claude/settings.json",
		"./bin/laserbrain supervise release bob --reason x",
		"laserbrain supervise --repo . release bob",
		"laserbrain supervise accept-journal --reason \"the agent emptied it\"",
		"laserbrain uninstall claude",
		"laserbrain install claude --scope user",
		"laserbrain store migrate --from local --to postgres://x/y",
		"laserbrain store init",
		"laserbrain-gate authorize -- npm publish",
		"sudo -u me env A=1 nice laserbrain authorize -- npm publish",
		`\laserbrain authorize -- ls`,
		`bash -c "laserbrain authorize -- npm publish"`,
		"echo 'laserbrain authorize -- npm publish' | sh",
		"git status && laserbrain authorize -- npm publish",
		"echo authorize | xargs laserbrain",
		"go run ./cmd/laserbrain authorize -- npm publish",
		"go run -tags netgo ./cmd/laserbrain/ supervise release bob",
		"go run github.com/laserkit/laserkit/cmd/laserbrain@latest store init",
		"go run cmd/laserbrain/main.go cmd/laserbrain/root.go install claude",
		"laserbrain authorize -- --help",
		"laserbrain ui --addr 127.0.0.1:8377",
		"nohup laserbrain ui &",
		"laserbrain loop cancel 2f9c0a1d7e3b",
		"laserbrain loop cancel --wait 1s 2f9c0a1d7e3b",
		"laserbrain undo --run 2f9c0a1d7e3b --last",
		"laserbrain undo --to toolu_01 --force",
		"laserbrain undo prune --keep 1",
	}
	for _, cmd := range person {
		r := classify(cmd)
		f, ok := r.PersonOnly()
		if !ok || r.Decision != Deny {
			t.Errorf("%q: %s, person-only %v (%s); want a person's command, denied", cmd, r.Decision, ok, r.Why)
			continue
		}
		for _, p := range []Presence{PresenceUnknown, Attended, Unattended} {
			a := r.answerFor(p, "")
			if a.Action != Deny || !strings.Contains(a.Reason, "not something a person authorizes for an agent") || a.Context != "" {
				t.Errorf("%q %s: %s %q", cmd, p, a.Action, a.Reason)
			}
			if strings.Contains(a.Reason, "authorize it") {
				t.Errorf("%q %s: the reason offers an authorization: %q", cmd, p, a.Reason)
			}
		}
		if !strings.HasPrefix(f.Label, "parsed: laserbrain ") {
			t.Errorf("%q: label %q", cmd, f.Label)
		}
	}
	others := []string{
		"laserbrain check --goal x --distance 3",
		"laserbrain supervise",
		"laserbrain supervise log",
		"laserbrain store status",
		"laserbrain store flush",
		"laserbrain authorize --help",
		"laserbrain ui --help",
		"laserbrain install claude --dry-run",
		"laserbrain runs",
		"laserbrain loop list --json",
		"laserbrain loop status 2f9c0a1d7e3b",
		"laserbrain loop cancel --help",
		"laserbrain undo --list",
		"laserbrain undo --run 2f9c0a1d7e3b --list --json",
		"laserbrain undo prune --dry-run",
		"git commit -m 'document laserbrain authorize'",
		"grep -r 'laserbrain install' README.md",
		"go run ./cmd/ponder install",
		"go run ./cmd/laserbrain classify -- ls",
	}
	for _, cmd := range others {
		r := classify(cmd)
		if _, ok := r.PersonOnly(); ok || r.Decision == Deny {
			t.Errorf("%q: %s, person-only %v (%s); want neither", cmd, r.Decision, ok, r.Why)
		}
	}
}
