package shell

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// r repeats s n times: the fixtures' tokens are built, so that no file of
// the project holds one in a secret's shape.
func r(s string, n int) string { return strings.Repeat(s, n) }

// secretFixtures: each kind found, its near misses not found, a line that
// allows its secret, files a scan of a tree passes over, bytes that are
// not UTF-8 and line ends a scanner reads as "\n".
var secretFixtures = map[string]string{
	"bot.env":           "TOKEN_LINE " + "123456789:AA" + r("x", 33) + "\n",
	"openai.txt":        "k1 sk-" + r("a", 32) + "\nk2 sk-proj-" + r("b", 24) + "\nshort sk-" + r("a", 19) + "\n",
	"anthropic.txt":     "sk-ant-" + r("c", 24) + "\n",
	"gh.md":             "ghp_" + r("b", 36) + " gho_" + r("b", 20) + " ghx_" + r("b", 36) + " ghs_" + r("b", 19) + "\n",
	"pat.yml":           "github_pat_" + r("x", 30) + "\n",
	"conf.py":           "api_key = \"" + r("z", 24) + "\"\nkey = \"sk-" + r("a", 32) + "\"  # lb-secrets: allow\nAKIA" + r("C", 16) + "\n",
	"aws-near.txt":      "AKIA" + r("C", 15) + " AKIA" + r("c", 16) + " AKIA" + r("C", 17) + "\n",
	"pypi.cfg":          "pypi-" + r("d", 24) + "\n",
	"slack.json":        `{"t": "xoxb-` + r("1", 12) + `", "n": "xoxz-` + r("1", 12) + `"}` + "\n",
	"stripe.txt":        "sk_live_" + r("e", 24) + " rk_live_" + r("e", 20) + " pk_live_" + r("e", 24) + "\n",
	"google.js":         "const k = 'AIza" + r("f", 35) + "';\n",
	"keys.pem":          "-----BEGIN RSA PRIVATE KEY-----\n-----BEGIN PRIVATE KEY-----\n-----BEGIN PUBLIC KEY-----\n",
	"jwt.txt":           "eyJ" + r("g", 12) + ".eyJ" + r("h", 12) + ".sig eyJ" + r("g", 9) + ".eyJ" + r("h", 12) + ".x\n",
	"zenodo.txt":        r("Z", 55) + " # zenodo\n" + r("y", 50) + r(" ", 40) + "ZENODO\n" + r("w", 52) + r(" ", 41) + "zenodo\n" + r("v", 70) + " zenodo\n" + r("u", 55) + "\nzenodo\n" + r("t", 55) + "\r\nzenodo\n" + r("s", 55) + "\rzenodo\n",
	"assigned.ini":      "password = \"" + r("p", 16) + "\"\nTOKEN: '" + r("q", 20) + "'\nsecret_key = \"" + r("p", 20) + "\"\npasswd=\"" + r("p", 15) + "\"\nAPI-KEY=\"" + r("k", 18) + "\"\n",
	"allowed.sh":        "# lb-secrets: allow\nexport K=AKIA" + r("D", 16) + "\nexport J=AKIA" + r("E", 16) + " #lb-secrets:allow\n",
	"notutf8.txt":       "AKIA\xff\xfe" + r("C", 16) + "\n",
	"img.PNG":           "AKIA" + r("C", 16) + "\n",
	"node_modules/x.js": "ghp_" + r("b", 36) + "\n",
	"dist/a.txt":        "ghp_" + r("b", 36) + "\n",
	"src/build/b.txt":   "ghp_" + r("b", 36) + "\n",
	"src/ok.go":         "package ok // the secret_key field is read from the environment\n",
}

// The same tree, scanned here and by the reference's scanner, gives the
// same findings: the same kind in the same file, as many times.
func TestSecretsAgreeWithTheReference(t *testing.T) {
	scanner := filepath.Join(testenv.Shared(t, "reference/laserbrain-sdk-0.53.0"), "laserbrain", "hooks", "lb_secrets.py")
	py := testenv.LookPath(t, "python3")
	root := t.TempDir()
	for name, body := range secretFixtures {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, scanner, root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("the reference's scanner exited %d (%v), want 1 (findings): %s%s", code, err, out, stderr.String())
	}
	var want []string
	for line := range strings.Lines(string(out)) {
		rest, ok := strings.CutPrefix(line, "    ")
		if !ok || strings.HasPrefix(rest, " ") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 2 {
			want = append(want, f[0]+" "+f[1])
		}
	}
	var got []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if SecretSkipped(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		for _, k := range Secrets(SecretText(data)) {
			got = append(got, k+" "+filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) < 20 {
		t.Fatalf("the reference found only %d secrets in the fixtures (its output changed?):\n%s", len(want), out)
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings differ\nhere:      %q\nreference: %q", got, want)
	}
	kinds := map[string]bool{}
	for _, f := range want {
		kinds[strings.Fields(f)[0]] = true
	}
	if len(kinds) != len(secretShapes.Get()) {
		t.Errorf("the fixtures show %d kinds of the %d: %v", len(kinds), len(secretShapes.Get()), kinds)
	}
}

// BenchmarkSecrets scans the largest file the gate reads for secrets: a
// MiB of source-like text.
func BenchmarkSecrets(b *testing.B) {
	line := "\tif err := client.Do(ctx, req, &resp); err != nil { return fmt.Errorf(\"token = %q\", name) } // 0123456789\n"
	text := r(line, (maxSecretFile)/len(line))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Secrets(text)
	}
}
