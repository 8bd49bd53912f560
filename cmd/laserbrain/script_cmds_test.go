package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/laserkit/laserkit/internal/cli/clitest"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/ponder/ledger"
)

// scriptCmds are the scripts' own commands for reading JSON output:
//
//	jsonout PATH VALUE   the JSON in stdout has VALUE (a JSON literal) at PATH
//	jsonlen PATH N       the array at PATH has N elements
//	jsonkeys PATH KEY…   the object at PATH (. for the top) has exactly these keys
//	setjson VAR PATH     sets VAR to the string at PATH
//	forgephantom SLUG UNIT  appends a phantom delete of UNIT to the session's
//	                        ledger behind ponder's back, chained and anchored
//	                        as ponder would (a forger using ponder's own library)
//	cutlast DIR          drops the last record of the one journal in DIR and
//	                     rewrites its .head to match (records, hash, size)
//	forgerelease DIR     appends to the one journal in DIR a release of its
//	                     first halt with a hash that is not its own (what
//	                     an agent writes by hand), and moves the .head to it
//
// PATH is dot-separated: object keys, array indexes, and key=value to pick
// the first array element whose key is value (agents.agent=ponder:x.steps).
// stdout holding several JSON lines is read by its last line.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"jsonout": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 {
				ts.Fatalf("usage: jsonout PATH VALUE")
			}
			got, ok := stdoutAt(ts, args[0])
			var want any
			if err := json.Unmarshal([]byte(args[1]), &want); err != nil {
				ts.Fatalf("jsonout: %q is not a JSON literal", args[1])
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if equal := ok && bytes.Equal(gb, wb); equal == neg {
				ts.Fatalf("%s is %s; want %s%s", args[0], gb, map[bool]string{true: "anything but ", false: ""}[neg], wb)
			}
		},
		"jsonlen": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 {
				ts.Fatalf("usage: jsonlen PATH N")
			}
			got, ok := stdoutAt(ts, args[0])
			arr, isArr := got.([]any)
			n, _ := strconv.Atoi(args[1])
			if !ok || !isArr || (len(arr) == n) == neg {
				b, _ := json.Marshal(got)
				ts.Fatalf("%s is %s; want %d element(s)", args[0], b, n)
			}
		},
		"jsonkeys": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) < 1 || neg {
				ts.Fatalf("usage: jsonkeys PATH KEY...")
			}
			got, ok := stdoutAt(ts, args[0])
			obj, isObj := got.(map[string]any)
			if !ok || !isObj {
				ts.Fatalf("%s is not an object", args[0])
			}
			if keys, want, same := clitest.SameKeys(obj, args[1:]); !same {
				ts.Fatalf("keys of %s are [%s]; want [%s]", args[0], keys, want)
			}
		},
		"forgephantom": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 || neg {
				ts.Fatalf("usage: forgephantom SLUG UNIT")
			}
			dir := ts.MkAbs(filepath.Join(".ponder", args[0]))
			var sess ponder.Session
			data, err := os.ReadFile(filepath.Join(dir, "session.json"))
			ts.Check(err)
			ts.Check(json.Unmarshal(data, &sess))
			path := filepath.Join(dir, "ledger.jsonl")
			l, err := ledger.Read(path, sess.Chain(), nil)
			ts.Check(err)
			recs := []ledger.Record{{Type: ledger.UnitDelete, Voice: ledger.Skeptic, UnitID: args[1], Phantom: true}}
			ledger.Stamp(recs, l.NextSeq(), sess.CurrentPass, time.Now())
			a, err := ledger.Append(path, l, recs)
			ts.Check(err)
			sess.Ledger = &a.Anchor
			out, err := json.MarshalIndent(&sess, "", "  ")
			ts.Check(err)
			ts.Check(os.WriteFile(filepath.Join(dir, "session.json"), append(out, '\n'), 0o644))
		},
		"cutlast": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 1 || neg {
				ts.Fatalf("usage: cutlast DIR")
			}
			journal, data := oneJournal(ts, "cutlast", args[0])
			lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
			kept := strings.Join(lines[:len(lines)-1], "")
			var last struct {
				Seq  int64  `json:"seq"`
				Hash string `json:"hash"`
			}
			ts.Check(json.Unmarshal([]byte(lines[len(lines)-2]), &last))
			ts.Check(os.WriteFile(journal, []byte(kept), 0o644))
			setJournalHead(ts, journal, last.Seq, last.Hash, len(kept))
		},
		"forgerelease": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 1 || neg {
				ts.Fatalf("usage: forgerelease DIR")
			}
			journal, data := oneJournal(ts, "forgerelease", args[0])
			var halt, last map[string]any
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var r map[string]any
				ts.Check(json.Unmarshal([]byte(l), &r))
				if r["kind"] == "halt" && halt == nil {
					halt = r
				}
				last = r
			}
			if halt == nil {
				ts.Fatalf("forgerelease: no halt in %s", journal)
			}
			halt["kind"], halt["seq"], halt["prev"], halt["hash"] = "release", last["seq"].(float64)+1, last["hash"], strings.Repeat("0", 64)
			line, err := json.Marshal(halt)
			ts.Check(err)
			line = append(line, '\n')
			ts.Check(os.WriteFile(journal, append(data, line...), 0o644))
			setJournalHead(ts, journal, halt["seq"], halt["hash"], len(data)+len(line))
		},
		"samecollisions": func(ts *testscript.TestScript, neg bool, args []string) {
			// samecollisions A B: the "collisions" lists of the JSON files A
			// and B name the same pairs, grounds and lenses (in any order).
			if len(args) != 2 || neg {
				ts.Fatalf("usage: samecollisions FILE FILE")
			}
			list := func(file string) []string {
				var doc struct {
					Collisions []struct {
						Agents  [2]string `json:"agents"`
						Grounds [2]string `json:"grounds"`
						Lenses  [2]string `json:"lenses"`
						Overlap float64   `json:"overlap"`
					} `json:"collisions"`
				}
				ts.Check(json.Unmarshal([]byte(ts.ReadFile(file)), &doc))
				var out []string
				for _, c := range doc.Collisions {
					out = append(out, fmt.Sprintf("%s + %s on %q/%q (lenses %q/%q, overlap %v)", c.Agents[0], c.Agents[1], c.Grounds[0], c.Grounds[1], c.Lenses[0], c.Lenses[1], c.Overlap))
				}
				sort.Strings(out)
				return out
			}
			a, b := list(args[0]), list(args[1])
			fmt.Fprintf(ts.Stdout(), "%s\n", strings.Join(a, "\n"))
			if strings.Join(a, "\n") != strings.Join(b, "\n") {
				ts.Fatalf("%s lists\n  %s\nbut %s lists\n  %s", args[0], strings.Join(a, "\n  "), args[1], strings.Join(b, "\n  "))
			}
		},
		"setjson": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 || neg {
				ts.Fatalf("usage: setjson VAR PATH")
			}
			got, ok := stdoutAt(ts, args[1])
			s, isStr := got.(string)
			if !ok || !isStr {
				ts.Fatalf("%s is not a string in stdout", args[1])
			}
			ts.Setenv(args[0], s)
		},
	}
}

// oneJournal is the one supervise journal (*.jsonl) in dir, and its
// bytes; cmd names the script command that asks.
func oneJournal(ts *testscript.TestScript, cmd, dir string) (string, []byte) {
	paths, err := filepath.Glob(filepath.Join(ts.MkAbs(dir), "*.jsonl"))
	ts.Check(err)
	if len(paths) != 1 {
		ts.Fatalf("%s: %d journals in %s", cmd, len(paths), dir)
	}
	data, err := os.ReadFile(paths[0])
	ts.Check(err)
	return paths[0], data
}

// setJournalHead makes the head beside journal (.head) say the journal
// holds records records, ending at hash, in size bytes.
func setJournalHead(ts *testscript.TestScript, journal string, records, hash any, size int) {
	headPath := strings.TrimSuffix(journal, ".jsonl") + ".head"
	var head map[string]any
	hd, err := os.ReadFile(headPath)
	ts.Check(err)
	ts.Check(json.Unmarshal(hd, &head))
	head["records"], head["hash"], head["size"] = records, hash, size
	out, err := json.Marshal(head)
	ts.Check(err)
	ts.Check(os.WriteFile(headPath, out, 0o644))
}

func stdoutAt(ts *testscript.TestScript, path string) (any, bool) {
	out := strings.TrimSpace(ts.ReadFile("stdout"))
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		lines := strings.Split(out, "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
			ts.Fatalf("stdout is not JSON: %v\n%s", err, out)
		}
	}
	return clitest.JSONAt(v, path)
}

// ponderBinary is the directory of the ponder command, built once, for the
// scripts that drive both binaries.
func ponderBinary(t testing.TB) string {
	t.Helper()
	return filepath.Dir(ponderBuild.path(t))
}
