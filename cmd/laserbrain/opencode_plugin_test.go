package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// nodeBinary is node, for running the opencode plugin. Without it the
// test is skipped loudly, and fails under CI=true.
func nodeBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err == nil {
		return p
	}
	fmt.Fprintln(os.Stderr, "## NO NODE: the opencode plugin tests are SKIPPED (install Node 20)")
	testenv.SkipOrFail(t, "node is not on PATH: the opencode plugin cannot run (install Node 20)")
	return ""
}

// pluginDriver imports the installed plugin as opencode would (an ES
// module exporting a plugin function) and calls one of its hooks with
// opencode's arguments; it prints {"threw":…,"message":…}.
const pluginDriver = `
const [plugin, hook, input, output] = process.argv.slice(2);
const mod = await import(plugin);
const hooks = await mod.LaserbrainPlugin({ directory: process.cwd() });
try {
  await hooks[hook](JSON.parse(input), JSON.parse(output));
  console.log(JSON.stringify({ threw: false }));
} catch (e) {
  console.log(JSON.stringify({ threw: true, message: e.message }));
}
`

// The opencode plugin laserbrain installs, run by node with the real
// laserbrain behind it: a force push throws our reason (opencode makes a
// thrown error the tool error the model reads), ls does not, a finished
// call is recorded on the session's run, and with the binary gone every
// call throws, telling to run laserbrain doctor.
func TestOpenCodePlugin(t *testing.T) {
	node := nodeBinary(t)
	root := t.TempDir()
	home, dir := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lb := copyBinary(t, filepath.Join(root, "bin"))
	env := append(os.Environ(), "HOME="+home, "LASERBRAIN_HOME="+filepath.Join(home, "lb"), "LASERBRAIN_FLEET=plugin-fleet",
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	run(lb, "install", "opencode")
	// opencode (Bun) loads .js plugins as ES modules; node needs the
	// module type said, so the driver imports a copy named .mjs.
	src, err := os.ReadFile(filepath.Join(dir, ".opencode", "plugin", "laserbrain.js"))
	if err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(root, "laserbrain.mjs")
	driver := filepath.Join(root, "driver.mjs")
	if err := os.WriteFile(plugin, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(driver, []byte(pluginDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(hook string, input, output map[string]any) (threw bool, message string) {
		t.Helper()
		in, _ := json.Marshal(input)
		out, _ := json.Marshal(output)
		var v struct {
			Threw   bool   `json:"threw"`
			Message string `json:"message"`
		}
		got := run(node, driver, plugin, hook, string(in), string(out))
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
			t.Fatalf("driver: %v\n%s", err, got)
		}
		return v.Threw, v.Message
	}
	before := func(id, command string) (bool, string) {
		return call("tool.execute.before", map[string]any{"tool": "bash", "sessionID": "ses_plugin", "callID": id},
			map[string]any{"args": map[string]any{"command": command}})
	}
	if threw, msg := before("c1", "git push --force origin main"); !threw || !strings.Contains(msg, "git push --force") {
		t.Fatalf("force push: threw=%v %q", threw, msg)
	}
	if threw, msg := before("c2", "ls -la"); threw {
		t.Fatalf("ls was refused: %q", msg)
	}
	if threw, msg := call("tool.execute.after", map[string]any{"tool": "bash", "sessionID": "ses_plugin", "callID": "c2", "args": map[string]any{"command": "ls -la"}},
		map[string]any{"title": "ls", "output": "a.go", "metadata": map[string]any{"exit": 0}}); threw {
		t.Fatalf("the observer threw: %q", msg)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(run(lb, "runs", "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0]["run"] != "ses_plugin" {
		t.Fatalf("runs after the plugin's calls: %v", rows)
	}
	if err := os.Rename(lb, lb+".old"); err != nil {
		t.Fatal(err)
	}
	if threw, msg := before("c3", "ls -la"); !threw || !strings.Contains(msg, "laserbrain doctor") {
		t.Fatalf("with the binary gone: threw=%v %q; want a refusal naming laserbrain doctor", threw, msg)
	}
	if threw, msg := call("tool.execute.after", map[string]any{"tool": "bash", "sessionID": "ses_plugin", "callID": "c3", "args": map[string]any{}},
		map[string]any{"output": "x"}); threw {
		t.Fatalf("an observer must not stop the session: %q", msg)
	}
}
