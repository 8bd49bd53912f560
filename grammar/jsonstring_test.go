package grammar

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// jsonStringCases cover every escape rule: the short escapes, other
// control characters, DEL, the bidirectional overrides, non-BMP text.
var jsonStringCases = []string{
	"", "plain", `quote " and backslash \`, "line\nfeed\rreturn\ttab\bback\fform",
	"\x00\x01\x1f", "del \x7f", "é ü ß", "\u202e rtl", "emoji 😀 and 𝄞", "mixed \"é\"\n😀",
}

// WriteJSONString agrees byte for byte with its two oracles: Python's
// json.dumps (ensure_ascii true and false: the reference's files) and
// JavaScript's JSON.stringify (Claude Code's settings, written without
// ensure_ascii), into a strings.Builder and a bytes.Buffer alike.
func TestWriteJSONStringOracles(t *testing.T) {
	in, _ := json.Marshal(jsonStringCases)
	oracles := []struct {
		name  string
		cmd   []string
		ascii bool
	}{
		{"python ensure_ascii=True", []string{"python3", "-c", "import json,sys\nfor s in json.load(sys.stdin): print(json.dumps(s))"}, true},
		{"python ensure_ascii=False", []string{"python3", "-c", "import json,sys\nsys.stdout.reconfigure(encoding='utf-8')\nfor s in json.load(sys.stdin): print(json.dumps(s, ensure_ascii=False))"}, false},
		{"node JSON.stringify", []string{"node", "-e", "let d='';process.stdin.on('data',c=>d+=c).on('end',()=>{for(const s of JSON.parse(d))console.log(JSON.stringify(s))})"}, false},
	}
	for _, o := range oracles {
		if _, err := exec.LookPath(o.cmd[0]); err != nil {
			testenv.SkipPartOrFail(t, "%s is not on PATH: the %s oracle did not run", o.cmd[0], o.name)
			continue
		}
		cmd := exec.Command(o.cmd[0], o.cmd[1:]...)
		cmd.Stdin = bytes.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		for i, s := range jsonStringCases {
			var sb strings.Builder
			WriteJSONString(&sb, s, o.ascii)
			var bb bytes.Buffer
			WriteJSONString(&bb, s, o.ascii)
			if sb.String() != want[i] || bb.String() != want[i] {
				t.Errorf("%s: %q → %s (buffer %s), want %s", o.name, s, sb.String(), bb.String(), want[i])
			}
		}
	}
}
