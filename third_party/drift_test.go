package thirdparty

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// jsonschema is the fork of github.com/santhosh-tekuri/jsonschema/v5.
const (
	jsonschemaPath    = "github.com/santhosh-tekuri/jsonschema/v5"
	jsonschemaVersion = "v5.3.1"
	jsonschemaDir     = "jsonschema/v5"
	// The release's checksums (sum.golang.org), for the programs built
	// against it below.
	jsonschemaSum = "github.com/santhosh-tekuri/jsonschema/v5 v5.3.1 h1:lZUw3E0/J3roVtGQ+SCrUrg3ON6NgVqpn3+iol9aGu4=\n" +
		"github.com/santhosh-tekuri/jsonschema/v5 v5.3.1/go.mod h1:uToXkOrWAZ6/Oc07xWQrPOhJotwFIyu2bBVN41fcDUY=\n"
)

// need returns the path of a tool, or skips loudly; under CI=true a
// missing tool fails the test.
func need(t *testing.T, tool string) string {
	t.Helper()
	return testenv.LookPath(t, tool)
}

// skipOrFail: the upstream release cannot be had (the Go module proxy or
// git is out of reach).
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	fmt.Fprintln(os.Stderr, "\n"+strings.Repeat("!", 78)+"\n!! FORK DRIFT TEST NOT RUN: "+why+"\n"+strings.Repeat("!", 78))
	testenv.SkipOrFail(t, "the fork's upstream cannot be compared: %s", why)
}

// upstream downloads the release into the module cache (outside this
// module, so its replace does not apply) and returns its directory.
func upstream(t *testing.T) string {
	t.Helper()
	goTool := need(t, "go")
	cmd := exec.Command(goTool, "mod", "download", "-json", jsonschemaPath+"@"+jsonschemaVersion)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOWORK=off", "GOFLAGS=")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); err != nil || jerr != nil || info.Dir == "" {
		skipOrFail(t, fmt.Sprintf("go mod download %s@%s: %v %s %s", jsonschemaPath, jsonschemaVersion, err, info.Error, out))
	}
	return info.Dir
}

// files lists every regular file under dir, slash-separated, relative.
func files(t *testing.T, dir string) map[string]bool {
	t.Helper()
	set := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			set[filepath.ToSlash(rel)] = true
		} else if !d.IsDir() {
			return fmt.Errorf("%s: not a regular file or directory", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// patchDiff is the diff block of PATCH.md.
func patchDiff(t *testing.T, doc []byte) []byte {
	t.Helper()
	m := regexp.MustCompile("(?s)\n```diff\n(.*?)```\n").FindSubmatch(doc)
	if m == nil {
		t.Fatal("PATCH.md has no ```diff block")
	}
	return m[1]
}

// TestJSONSchemaForkIsUpstreamPlusPatch: upstream v5.3.1 with PATCH.md's
// diff applied by git is this directory, every byte of every file; and no
// file is here that upstream does not have, but PATCH.md.
func TestJSONSchemaForkIsUpstreamPlusPatch(t *testing.T) {
	up := upstream(t)
	git := need(t, "git")
	doc, err := os.ReadFile(filepath.Join(jsonschemaDir, "PATCH.md"))
	if err != nil {
		t.Fatal(err)
	}
	diff := patchDiff(t, doc)
	if !bytes.Contains(diff, []byte("+var metaOnce sync.Once")) {
		t.Fatalf("PATCH.md's diff does not add the sync.Once:\n%s", diff)
	}

	// A copy of upstream, patched.
	patched := filepath.Join(t.TempDir(), "v5")
	if err := os.CopyFS(patched, os.DirFS(up)); err != nil {
		t.Fatal(err)
	}
	if err := filepath.WalkDir(patched, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chmod(p, 0o755)
	}); err != nil {
		t.Fatal(err)
	}
	apply := exec.Command(git, "apply", "-p1", "--whitespace=nowarn", "-")
	apply.Dir, apply.Stdin = patched, bytes.NewReader(diff)
	apply.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(patched))
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("git apply of PATCH.md's diff to upstream %s: %v\n%s", jsonschemaVersion, err, out)
	}

	want, got := files(t, patched), files(t, jsonschemaDir)
	delete(got, "PATCH.md")
	for f := range want {
		if !got[f] {
			t.Errorf("%s: in upstream %s, missing from the fork", f, jsonschemaVersion)
		}
	}
	for f := range got {
		if !want[f] {
			t.Errorf("%s: in the fork, not in upstream %s", f, jsonschemaVersion)
			continue
		}
		a, err := os.ReadFile(filepath.Join(patched, f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(jsonschemaDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the fork differs from upstream %s with PATCH.md's diff applied (update the diff in PATCH.md, or undo the change)", f, jsonschemaVersion)
		}
	}
}

// probe compiles one schema (or the meta-schema URL itself) in a fresh
// process and prints the errors in both forms upstream prints them, and
// whether an instance is valid: run against upstream and against the fork,
// the output must be the same.
const probe = `package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

var schemas = map[string]string{
	"broken-2020":       ` + "`" + `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"strng","minLength":-1,"properties":{"a":{"pattern":5}}}` + "`" + `,
	"broken-default":    ` + "`" + `{"type":["string","string"],"required":"a"}` + "`" + `,
	"broken-2019":       ` + "`" + `{"$schema":"https://json-schema.org/draft/2019-09/schema","items":7}` + "`" + `,
	"broken-07":         ` + "`" + `{"$schema":"http://json-schema.org/draft-07/schema#","if":"x","maxItems":1.5}` + "`" + `,
	"broken-06":         ` + "`" + `{"$schema":"http://json-schema.org/draft-06/schema#","enum":[]}` + "`" + `,
	"broken-04":         ` + "`" + `{"$schema":"http://json-schema.org/draft-04/schema#","exclusiveMinimum":3}` + "`" + `,
	"broken-format":     ` + "`" + `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"not a uri ref \\"}` + "`" + `,
	"valid-2020":        ` + "`" + `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["a"],"properties":{"a":{"type":"integer","minimum":1}}}` + "`" + `,
}

func main() {
	name := os.Args[1]
	var (
		s   *jsonschema.Schema
		err error
	)
	if name == "meta-2020" {
		// The meta-schema's URL compiled first, before any other schema.
		s, err = jsonschema.Compile("https://json-schema.org/draft/2020-12/schema")
	} else {
		s, err = jsonschema.CompileString("schema.json", schemas[name])
	}
	if err != nil {
		fmt.Printf("compile:\n%#v\n", err)
		return
	}
	for _, doc := range []string{` + "`" + `{"a":0}` + "`" + `, ` + "`" + `{"a":2}` + "`" + `, ` + "`" + `{"type":"strng"}` + "`" + `, ` + "`" + `{}` + "`" + `} {
		var v interface{}
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			panic(err)
		}
		if err := s.Validate(v); err != nil {
			fmt.Printf("%s: %#v\n", doc, err)
		} else {
			fmt.Printf("%s: valid\n", doc)
		}
	}
}
`

var probeCases = []string{"meta-2020", "broken-2020", "broken-default", "broken-2019", "broken-07", "broken-06", "broken-04", "broken-format", "valid-2020"}

// buildProbe builds the probe against upstream, or against the fork when
// fork is its directory.
func buildProbe(t *testing.T, goTool, fork string) string {
	t.Helper()
	dir := t.TempDir()
	mod := "module probe\n\ngo 1.19\n\nrequire " + jsonschemaPath + " " + jsonschemaVersion + "\n"
	if fork != "" {
		mod += "\nreplace " + jsonschemaPath + " => " + fork + "\n"
	}
	for name, text := range map[string]string{"go.mod": mod, "go.sum": jsonschemaSum, "main.go": probe} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command(goTool, "build", "-o", "probe", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GO111MODULE=on", "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the probe (fork %q): %v\n%s", fork, err, out)
	}
	return filepath.Join(dir, "probe")
}

// canon sorts every node's children in an indented tree of errors: the
// package lists a schema's failed keywords in map order, which differs from
// run to run, upstream's and the fork's alike.
func canon(out []byte) string {
	type node struct {
		text string
		kids []*node
	}
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	root := &node{}
	stack, depth := []*node{root}, []int{-1}
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		d := indent(l)
		for depth[len(depth)-1] >= d {
			stack, depth = stack[:len(stack)-1], depth[:len(depth)-1]
		}
		n := &node{text: l}
		stack[len(stack)-1].kids = append(stack[len(stack)-1].kids, n)
		stack, depth = append(stack, n), append(depth, d)
	}
	var render func(n *node) string
	render = func(n *node) string {
		kids := make([]string, len(n.kids))
		for i, k := range n.kids {
			kids[i] = render(k)
		}
		slices.Sort(kids)
		return n.text + "\n" + strings.Join(kids, "")
	}
	return render(root)
}

// TestJSONSchemaForkValidatesAsUpstream: the meta-schemas compiled on first
// use still reject what upstream's, compiled at init, reject, with the same
// errors — each case in a fresh process, so each is the first use.
func TestJSONSchemaForkValidatesAsUpstream(t *testing.T) {
	upstream(t) // in the module cache, or skipped
	goTool := need(t, "go")
	fork, err := filepath.Abs(jsonschemaDir)
	if err != nil {
		t.Fatal(err)
	}
	up, ours := buildProbe(t, goTool, ""), buildProbe(t, goTool, fork)
	for _, c := range probeCases {
		want, err := exec.Command(up, c).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: upstream probe: %v\n%s", c, err, want)
		}
		got, err := exec.Command(ours, c).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: fork probe: %v\n%s", c, err, got)
		}
		if canon(got) != canon(want) {
			t.Errorf("%s: the fork answers\n%s\nupstream answers\n%s", c, got, want)
		}
		if strings.HasPrefix(c, "broken-") && !bytes.HasPrefix(want, []byte("compile:\n")) {
			t.Errorf("%s: upstream compiled a schema meant to break its meta-schema:\n%s", c, want)
		}
		t.Logf("%s:\n%s", c, got)
	}
}
