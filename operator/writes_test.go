package operator

import (
	"github.com/laserkit/laserkit/operator/shell"

	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAnalyzeWrites: each way a command line writes a file, read in the
// one walk; expected paths derived by hand from bash's and each tool's
// semantics. complete: every path it writes is known (a program the gate
// does not know, or code, may write anywhere) and the walk followed
// everything.
func TestAnalyzeWrites(t *testing.T) {
	cases := []struct {
		cmd      string
		want     []string
		complete bool
	}{
		{`echo '{"seq":9}' >> .ponder/s/ledger.jsonl`, []string{".ponder/s/ledger.jsonl"}, true},
		{`echo hi > a.txt 2>&1`, []string{"a.txt"}, true},
		{`ls &> log.txt; ls >| forced; cat <> both`, []string{"log.txt", "forced", "both"}, true},
		{`printf x >&out.txt`, []string{"out.txt"}, true},
		{`ls 2>&1 >&2`, nil, true},
		{`echo x | tee -a one "two words" | cat`, []string{"one", "two words"}, true},
		{`sed -i 's/a/b/' f1 f2`, []string{"f1", "f2"}, true},
		{`sed -Ei.bak -e 's/a/b/' f`, []string{"f"}, true},
		{`sed --in-place=.orig 's/a/b/' g`, []string{"g"}, true},
		{`sed 's/a/b/' notwritten > out`, []string{"out"}, true},
		{`sed -n 'w copy.txt' f`, []string{"copy.txt"}, true},
		{`cp -r src dst/`, []string{"dst"}, true},
		{`cp -t .ponder/s a b`, []string{".ponder/s", ".ponder/s/a", ".ponder/s/b"}, true},
		{`mv old new`, []string{"new", "old"}, true},
		{`mv -t .git/hooks pre-commit`, []string{".git/hooks", "pre-commit"}, true},
		{`install -m 644 f /usr/local/bin/f`, []string{"/usr/local/bin/f"}, true},
		{`ln -sf /tmp/x .git/hooks/pre-commit`, []string{".git/hooks/pre-commit"}, true},
		{`dd if=/dev/zero of=disk.img bs=1M`, []string{"disk.img"}, true},
		{`truncate -s 0 ledger.jsonl`, []string{"ledger.jsonl"}, true},
		{`rm -f x y; touch z`, []string{"x", "y", "z"}, true},
		{`chmod +x .git/hooks/pre-commit`, []string{".git/hooks/pre-commit"}, true},
		{`sudo -u root tee /etc/hosts`, []string{"/etc/hosts"}, true},
		{`env A=1 timeout 5 cp a b`, []string{"b"}, true},
		{`cd .ponder/s && echo x >> ledger.jsonl`, []string{".ponder/s/ledger.jsonl"}, true},
		{`pushd .claude && echo x > settings.json`, []string{".claude/settings.json"}, true},
		{`(cd sub; echo x > f); echo y > g`, []string{"sub/f", "g"}, true},
		{`bash -c 'echo x >> .ponder/s/ledger.jsonl'`, []string{".ponder/s/ledger.jsonl"}, true},
		{`eval "echo x > e.txt"`, []string{"e.txt"}, true},
		{`echo $(echo x > inner.txt)`, []string{"inner.txt"}, true},
		{`curl -o .git/hooks/pre-commit https://example.org/h`, []string{".git/hooks/pre-commit"}, true},
		{`curl -fsSLO https://example.org/dl/pre-commit --output-dir .git/hooks`, []string{".git/hooks/pre-commit"}, true},
		{`wget -O .claude/settings.json https://example.org/s`, []string{".claude/settings.json"}, true},
		{`wget -P .git/hooks https://example.org/pre-push`, []string{".git/hooks/pre-push"}, true},
		{`tar -C .git/hooks -xf hooks.tar`, []string{".git/hooks"}, true},
		{`tar xzf a.tgz`, []string{"."}, true},
		{`unzip -d .ponder x.zip`, []string{".ponder"}, true},
		{`patch .mcp.json < p.diff`, []string{".mcp.json"}, true},
		{`rsync -a src/ .claude/`, []string{".claude"}, true},
		{`echo x > "$D/.ponder/s/ledger.jsonl"`, []string{"$D/.ponder/s/ledger.jsonl"}, false},
		{`cd "$X" && echo x > f`, []string{"f"}, false},
		{`python3 -c "open('.ponder/s/ledger.jsonl','a').write('x')"`, nil, false},
		{`find .ponder -name '*.jsonl' -delete`, []string{".ponder"}, true},
		{`cat .ponder/s/ledger.jsonl | wc -l`, nil, true},
		{`git status && go test ./...`, nil, false},
		{`echo "unterminated`, nil, false},
	}
	for _, c := range cases {
		an := shell.Analyze(c.cmd, "")
		var got []string
		complete := an.Complete
		for _, w := range an.Writes {
			if w.Path != "" {
				got = append(got, w.Path)
			}
			complete = complete && w.Known
		}
		if !slices.Equal(got, c.want) || complete != c.complete {
			t.Errorf("Analyze(%s).Writes = %q, complete %v; want %q, %v (%+v)", c.cmd, got, complete, c.want, c.complete, an.Writes)
		}
	}
}

// TestRecursiveRmWithoutTerminal: real GNU rm, with standard input not a
// terminal (as an agent's is), removes a tree holding a write-protected
// file without asking, in every recursive spelling; the gate denies each,
// while rm -f of one file stays allowed.
func TestRecursiveRmWithoutTerminal(t *testing.T) {
	rm, err := exec.LookPath("rm")
	if err != nil {
		t.Skip("no rm on PATH")
	}
	for _, flags := range [][]string{{"-r"}, {"-R"}, {"--recursive"}, {"--rec"}, {"-rv"}} {
		dir := t.TempDir()
		tree := filepath.Join(dir, "d")
		if err := os.MkdirAll(filepath.Join(tree, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, "sub", "f"), []byte("x"), 0o444); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{}, flags...), "d")
		cmd := exec.Command(rm, args...)
		cmd.Dir = dir // stdin: the null device, not a terminal
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("rm %v: %v\n%s", args, err, out)
		}
		if _, err := os.Stat(tree); !os.IsNotExist(err) {
			t.Fatalf("rm %v without a terminal left the tree (%v): the policy's premise does not hold", args, err)
		}
		line := "rm " + strings.Join(args, " ")
		if r := classify(line); r.Decision != Deny {
			t.Errorf("Classify(%q) = %s (%s), want deny", line, r.Decision, r.Why)
		}
	}
	for _, line := range []string{"rm -f build/out.o", "rm -r", "rm --help -r d"} {
		if r := classify(line); r.Decision != Allow {
			t.Errorf("Classify(%q) = %s (%s), want allow", line, r.Decision, r.Why)
		}
	}
}

// sh -c SCRIPT NAME ARGS: NAME is $0 and ARGS are $1…. Real bash decides
// which directory goes; the gate must name that one (a policy rule that
// lets ./dist be deleted must not cover what $1 really is), and a rule for
// ./dist must not let the command through.
func TestShellCArgumentsStartAtZero(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"dist", "src", ".git"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := `bash -c 'rm -rf "$1"' ./dist ./src`
	an := shell.Analyze(cmd, dir)
	run := exec.Command("bash", "-c", cmd)
	run.Dir = dir
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("bash: %v %s", err, out)
	}
	var gone []string
	for _, d := range []string{"dist", "src"} {
		if _, err := os.Stat(filepath.Join(dir, d)); os.IsNotExist(err) {
			gone = append(gone, filepath.Join(dir, d))
		}
	}
	var named []string
	for _, f := range an.Findings {
		named = append(named, f.Paths...)
	}
	if !slices.Equal(gone, named) {
		t.Errorf("bash removed %v; the analysis names %v", gone, named)
	}
	pol := Policy{Root: dir, Allow: []AllowRule{{ID: "build", Reason: "build output", Deletes: []string{"./dist"}}}}
	if d := Decide(an, Unattended, RunState{Read: true}, pol); d.Action == Allow {
		t.Errorf("%q let through by a rule for ./dist (%s)", cmd, d.Rule)
	}
}
