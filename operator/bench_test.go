package operator

import (
	"testing"

	"github.com/laserkit/laserkit/operator/shell"
)

var benchCommands = []struct{ name, cmd string }{
	{"ls", "ls -la"},
	{"git-status", "git status"},
	{"push-force", "git push --force origin main"},
	{"push-refspec", "git push origin +main"},
	{"sudo-git-C", "sudo -u deploy /usr/bin/git -C /srv/repo push --force origin main"},
	{"commit-message", "git commit -m 'refuse rm -rf and git push --force in the gate'"},
	{"pipeline", "go test ./... 2>&1 | tee test.log | grep -v '^ok' && git status --short"},
	{"sh-c-nested", `bash -c "sh -c 'cd repo && git push -f'"`},
	{"heredoc-python", "python3 <<'EOF'\nimport shutil\nshutil.rmtree('/tmp/x')\nEOF"},
	{"find-xargs", "find . -name '*.tmp' -print0 | xargs -0 rm -f"},
	{"long-script", longScript},
}

var longScript = func() string {
	s := ""
	for i := 0; i < 50; i++ {
		s += "echo step; go build ./... && go vet ./... || exit 1\n"
	}
	return s
}()

// BenchmarkClassify is the full classifier per command; BenchmarkClassifyGrammar
// is the reference layer alone, the baseline the parsed view adds to.
func BenchmarkClassify(b *testing.B) {
	for _, c := range benchCommands {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				classify(c.cmd)
			}
		})
	}
}

func BenchmarkClassifyGrammar(b *testing.B) {
	for _, c := range benchCommands {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				shell.ClassifyGrammar(c.cmd, true, false)
			}
		})
	}
}
