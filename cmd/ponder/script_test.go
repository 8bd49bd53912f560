package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/shell"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/cli/clitest"
	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/ponder/ledger"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"ponder": func() {
			// Scripts pin the clock so that slugs (<lens>-<date>) are known.
			if v := os.Getenv("PONDER_TEST_NOW"); v != "" {
				t, err := time.Parse(time.RFC3339, v)
				if err != nil {
					fmt.Fprintln(os.Stderr, "PONDER_TEST_NOW:", err)
					os.Exit(99)
				}
				clock = func() time.Time { return t }
			}
			code, cmd := runCmd(os.Args[1:], cli.System())
			clitest.Record(cmd, code)
			os.Exit(code)
		},
	})
}

// unobservedExits are the exit codes ponder's commands document that no
// script in testdata/script provokes, and why.
var unobservedExits = map[string]string{
	"ponder exit-codes 2": "a help topic: cobra prints it whatever follows",
	// Reading a real database back: testdata/script-oca (TestOCAScripts,
	// against PostgreSQL) runs each of them.
	"ponder oca init 0": "needs PostgreSQL (script-oca)", "ponder oca sessions 0": "needs PostgreSQL (script-oca)",
	"ponder oca session 0": "needs PostgreSQL (script-oca)", "ponder oca ledger 0": "needs PostgreSQL (script-oca)",
	"ponder oca self-model 0": "needs PostgreSQL (script-oca)", "ponder oca perspectives 0": "needs PostgreSQL (script-oca)",
	"ponder oca observations 0": "needs PostgreSQL (script-oca)", "ponder oca events 0": "needs PostgreSQL (script-oca)",
	"ponder oca prior 0": "needs PostgreSQL (script-oca)", "ponder oca sync 0": "needs PostgreSQL (script-oca)",
}

// preparedRoot is ponder's command tree as it runs.
func preparedRoot(t *testing.T) *cobra.Command {
	return clitest.Prepared(t, func(s *cli.IOStreams) *cobra.Command { return newRootCmd(newApp(s)) })
}

// Every command has examples and a long help that explains; the root's
// commands are grouped.
func TestHelpStyle(t *testing.T) { clitest.CheckHelp(t, preparedRoot(t)) }

// TestScripts drives the real binary through the scenarios under
// testdata/script. Expected values in the scripts come from ponder's
// reference (ponder/SPEC.md) or are derived by hand in the scripts' comments.
func TestScripts(t *testing.T) {
	exitLog := filepath.Join(t.TempDir(), "exits.log")
	// After every script: each command exited only with codes its help
	// documents, and each documented code was seen (see clitest).
	t.Cleanup(func() { clitest.CheckExits(t, preparedRoot(t), exitLog, unobservedExits) })
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv(clitest.LogEnv, exitLog)
			return setupScript(env)
		},
		Cmds:      scriptCmds(nil),
		Condition: scriptCondition,
	})
}

// setupScript gives every script a pinned clock, a HOME of its own and, by
// default, a DSN nothing listens on, so that no script talks to a stray
// local PostgreSQL by accident.
func setupScript(env *testscript.Env) error {
	env.Setenv("PONDER_TEST_NOW", "2026-08-24T15:00:00Z")
	env.Setenv("PONDER_OCA_DSN", "postgres://127.0.0.1:1/nope")
	env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
	return os.MkdirAll(filepath.Join(env.WorkDir, "home"), 0o755)
}

// scriptCmds are the scripts' own commands, plus extra.
func scriptCmds(extra map[string]func(ts *testscript.TestScript, neg bool, args []string)) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"json":        cmdJSON,
		"jsonkeys":    cmdJSONKeys,
		"jsonlen":     cmdJSONLen,
		"layout":      cmdLayout,
		"truncate":    cmdTruncate,
		"lines":       cmdLines,
		"listener":    cmdListener,
		"grepcount":   cmdGrepCount,
		"rawfile":     cmdRawFile,
		"rawrm":       cmdRawRm,
		"ledit":       cmdLedit,
		"tmpfs":       cmdTmpfs,
		"fill":        cmdFill,
		"jsonset":     cmdJSONSet,
		"forgeappend": cmdForgeAppend,
		"examples":    cmdExamples,
	}
	for k, v := range extra {
		cmds[k] = v
	}
	return cmds
}

// lookup walks a JSON document along a dotted path: .a.b.0.c ("." = the
// document itself).
func lookup(ts *testscript.TestScript, file, path string) (any, bool) {
	var doc any
	data := ts.ReadFile(file)
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		ts.Fatalf("%s is not JSON: %v\n%s", file, err, data)
	}
	return clitest.JSONAt(doc, path)
}

// json FILE PATH VALUE: the value at PATH equals VALUE (a JSON literal;
// numbers compare as numbers). With !, it does not (or is absent).
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: json FILE PATH VALUE")
	}
	got, ok := lookup(ts, args[0], args[1])
	var want any
	dec := json.NewDecoder(strings.NewReader(args[2]))
	dec.UseNumber()
	if err := dec.Decode(&want); err != nil {
		ts.Fatalf("json: VALUE %q is not a JSON literal: %v", args[2], err)
	}
	equal := ok && jsonEqual(got, want)
	switch {
	case !ok && !neg:
		ts.Fatalf("%s: no value at %s", args[0], args[1])
	case neg && equal:
		ts.Fatalf("%s: %s is %s, want anything else", args[0], args[1], args[2])
	case !neg && !equal:
		b, _ := json.Marshal(got)
		ts.Fatalf("%s: %s is %s, want %s", args[0], args[1], b, args[2])
	}
}

func jsonEqual(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		af, err1 := an.Float64()
		bf, err2 := bn.Float64()
		return err1 == nil && err2 == nil && af == bf
	}
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	return bytes.Equal(ab, bb)
}

// jsonset FILE PATH VALUE: set the value at PATH (an object key, dotted)
// to VALUE (a JSON literal) and write FILE back indented, as ponder writes
// its files — a hand edit behind ponder's back.
func cmdJSONSet(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: jsonset FILE PATH VALUE")
	}
	var doc any
	dec := json.NewDecoder(strings.NewReader(ts.ReadFile(args[0])))
	dec.UseNumber()
	ts.Check(dec.Decode(&doc))
	var val any
	vdec := json.NewDecoder(strings.NewReader(args[2]))
	vdec.UseNumber()
	if err := vdec.Decode(&val); err != nil {
		ts.Fatalf("jsonset: VALUE %q is not a JSON literal: %v", args[2], err)
	}
	parts := strings.Split(strings.Trim(args[1], "."), ".")
	cur := doc
	for i, part := range parts {
		obj, ok := cur.(map[string]any)
		if !ok {
			ts.Fatalf("jsonset: %s: %s is not an object", args[0], strings.Join(parts[:i], "."))
		}
		if i == len(parts)-1 {
			obj[part] = val
			break
		}
		cur = obj[part]
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), append(out, '\n'), 0o644))
}

// forgeappend LEDGER FILE: append the records of FILE (JSON Lines, in the
// ledger's own record form) to LEDGER as one batch, numbered and chained
// after its last line with ponder's own library — but without telling
// session.json: a forger who knows the format, working behind ponder's back.
func cmdForgeAppend(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: forgeappend LEDGER FILE")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	last := lines[len(lines)-1]
	var prev ledger.Record
	ts.Check(json.Unmarshal([]byte(last), &prev))
	var recs []ledger.Record
	for _, l := range strings.Split(strings.TrimSpace(ts.ReadFile(args[1])), "\n") {
		var r ledger.Record
		ts.Check(json.Unmarshal([]byte(l), &r))
		recs = append(recs, r)
	}
	ledger.Stamp(recs, prev.Seq+1, prev.Pass, time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC))
	out, _, err := ledger.Seal(recs, ledger.HashLine([]byte(last)))
	ts.Check(err)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	ts.Check(err)
	_, err = f.Write(out)
	ts.Check(err)
	ts.Check(f.Close())
}

// examples CMD…: run every line of the Example of `ponder CMD…`'s help, as
// a person would paste it, through the real binary; each must exit 0.
func cmdExamples(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 || neg {
		ts.Fatalf("usage: examples CMD...")
	}
	var out bytes.Buffer
	streams := &cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
	root := newRootCmd(newApp(streams))
	cmd, _, err := root.Find(args)
	ts.Check(err)
	if strings.TrimSpace(cmd.Example) == "" {
		ts.Fatalf("ponder %s has no example", strings.Join(args, " "))
	}
	for _, line := range strings.Split(cmd.Example, "\n") {
		fields, err := shell.Fields(strings.TrimSpace(line), func(string) string { return "" })
		ts.Check(err)
		if len(fields) == 0 {
			continue
		}
		if fields[0] != "ponder" {
			ts.Fatalf("example %q does not run ponder", line)
		}
		fmt.Fprintf(ts.Stdout(), "$ %s\n", strings.TrimSpace(line))
		if err := ts.Exec("ponder", fields[1:]...); err != nil {
			ts.Fatalf("the example %q of ponder %s --help fails: %v", strings.TrimSpace(line), strings.Join(args, " "), err)
		}
	}
}

// jsonkeys FILE PATH KEY…: the object at PATH has exactly these keys, so a
// null is explicit rather than a missing key.
func cmdJSONKeys(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: jsonkeys FILE PATH KEY...")
	}
	v, ok := lookup(ts, args[0], args[1])
	obj, isObj := v.(map[string]any)
	if !ok || !isObj {
		ts.Fatalf("%s: %s is not an object", args[0], args[1])
	}
	if got, want, same := clitest.SameKeys(obj, args[2:]); !same {
		ts.Fatalf("%s: keys of %s are [%s], want [%s]", args[0], args[1], got, want)
	}
}

// jsonlen FILE PATH N: the array at PATH has N elements.
func cmdJSONLen(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: jsonlen FILE PATH N")
	}
	v, ok := lookup(ts, args[0], args[1])
	arr, isArr := v.([]any)
	if !ok || !isArr {
		ts.Fatalf("%s: %s is not an array", args[0], args[1])
	}
	want, err := strconv.Atoi(args[2])
	ts.Check(err)
	if len(arr) != want {
		ts.Fatalf("%s: %s has %d elements, want %d", args[0], args[1], len(arr), want)
	}
}

// layout DIR: print every file under DIR (relative, sorted), one a line.
func cmdLayout(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: layout DIR")
	}
	root := ts.MkAbs(args[0])
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	ts.Check(err)
	sort.Strings(out)
	fmt.Fprint(ts.Stdout(), strings.Join(out, "\n")+"\n")
}

// truncate FILE -N: cut the last N bytes off FILE (a torn write);
// truncate FILE -LASTLINE: cut its last whole line.
func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: truncate FILE -N|-LASTLINE")
	}
	p := ts.MkAbs(args[0])
	data, err := os.ReadFile(p)
	ts.Check(err)
	size := len(data)
	if args[1] == "-LASTLINE" {
		size = bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	} else {
		n, err := strconv.Atoi(strings.TrimPrefix(args[1], "-"))
		ts.Check(err)
		size -= n
	}
	ts.Check(os.Truncate(p, int64(size)))
}

// lines FILE N: FILE has exactly N lines.
func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: lines FILE N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	got := strings.Count(ts.ReadFile(args[0]), "\n")
	if (got == want) == neg {
		ts.Fatalf("%s has %d lines, want %s%d", args[0], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// grepcount N REGEXP FILE: REGEXP matches exactly N lines of FILE.
func cmdGrepCount(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: grepcount N REGEXP FILE")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	got := 0
	for _, l := range strings.Split(strings.TrimSuffix(ts.ReadFile(args[2]), "\n"), "\n") {
		if re.MatchString(l) {
			got++
		}
	}
	if got != want {
		ts.Fatalf("%q matches %d lines of %s, want %d", args[1], got, args[2], want)
	}
}

// listeners holds each script's listener.
var listeners sync.Map

// listener start VAR | listener count N: a TCP listener in the test process
// that counts connection attempts. start sets VAR to its DSN, so a script
// can prove that a mode connects to nothing.
func cmdListener(ts *testscript.TestScript, neg bool, args []string) {
	type state struct {
		ln    net.Listener
		count atomic.Int32
	}
	key := "listener"
	switch {
	case len(args) == 2 && args[0] == "start":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		st := &state{ln: ln}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				st.count.Add(1)
				c.Close()
			}
		}()
		ts.Defer(func() { ln.Close() })
		listeners.Store(ts, st)
		ts.Setenv(args[1], "postgres://ponder:s3cret@"+ln.Addr().String()+"/oneiro?connect_timeout=2")
	case len(args) == 2 && args[0] == "count":
		v, ok := listeners.Load(ts)
		if !ok {
			ts.Fatalf("%s: no listener started", key)
		}
		want, err := strconv.Atoi(args[1])
		ts.Check(err)
		if got := int(v.(*state).count.Load()); got != want {
			ts.Fatalf("listener saw %d connection(s), want %d", got, want)
		}
	default:
		ts.Fatalf("usage: listener start VAR | listener count N")
	}
}

// scriptCondition knows [tmpfs]: a tiny tmpfs can be mounted here (root
// and mount(2) allowed). Where it cannot, scripts skip — except under
// CI=true, where the condition is an error: CI runs as root and must run
// the disk-full scenario.
func scriptCondition(cond string) (bool, error) {
	if cond != "tmpfs" {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	tmpfsOnce.Do(func() { tmpfsWhy = probeTmpfs() })
	if tmpfsWhy == "" {
		return true, nil
	}
	if !testenv.CI() {
		fmt.Fprintf(os.Stderr, "ponder scripts: SKIPPING the disk-full scenario: %s\n", tmpfsWhy)
	}
	return testenv.Condition(false, "a tiny tmpfs cannot be mounted for the disk-full scenario: "+tmpfsWhy)
}

var (
	tmpfsOnce sync.Once
	tmpfsWhy  string // why a tmpfs cannot be mounted; "" when it can
)

// rawName reads a script argument as a Go string literal's body, so that
// 'src/caf\xe9.go' names a file whose name is not UTF-8.
func rawName(ts *testscript.TestScript, arg string) string {
	s, err := strconv.Unquote(`"` + arg + `"`)
	if err != nil {
		ts.Fatalf("%q is not a Go string body: %v", arg, err)
	}
	return ts.MkAbs(s)
}

// rawfile NAME: create an empty file NAME (Go escapes allowed).
func cmdRawFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: rawfile NAME")
	}
	p := rawName(ts, args[0])
	ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
	ts.Check(os.WriteFile(p, nil, 0o644))
}

// rawrm NAME: remove the file NAME (Go escapes allowed).
func cmdRawRm(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: rawrm NAME")
	}
	ts.Check(os.Remove(rawName(ts, args[0])))
}

// ledit FILE OP N [ARGS]: tamper with line N (1-based) of FILE —
//
//	replace N OLD NEW   replace OLD by NEW in line N
//	delete N            delete line N
//	dup N               insert a copy of line N after it
//	swap N M            swap lines N and M
func cmdLedit(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 3 || neg {
		ts.Fatalf("usage: ledit FILE replace|delete|dup|swap N [ARGS]")
	}
	p := ts.MkAbs(args[0])
	data, err := os.ReadFile(p)
	ts.Check(err)
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	if n < 1 || n > len(lines) {
		ts.Fatalf("ledit: line %d of %d", n, len(lines))
	}
	i := n - 1
	switch op := args[1]; {
	case op == "replace" && len(args) == 5:
		if !strings.Contains(lines[i], args[3]) {
			ts.Fatalf("ledit: line %d has no %q", n, args[3])
		}
		lines[i] = strings.Replace(lines[i], args[3], args[4], 1)
	case op == "delete" && len(args) == 3:
		lines = append(lines[:i], lines[i+1:]...)
	case op == "dup" && len(args) == 3:
		lines = append(lines[:i+1], lines[i:]...)
	case op == "swap" && len(args) == 4:
		m, err := strconv.Atoi(args[3])
		ts.Check(err)
		lines[i], lines[m-1] = lines[m-1], lines[i]
	default:
		ts.Fatalf("usage: ledit FILE replace N OLD NEW | delete N | dup N | swap N M")
	}
	ts.Check(os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644))
}

// fill FILE [FREE]: write FILE until its file system is full, then, with
// FREE, give back FREE bytes (a multiple of the page size on tmpfs) — so
// that a small write fits and a larger one is cut short.
func cmdFill(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 || neg {
		ts.Fatalf("usage: fill FILE [FREE]")
	}
	p := ts.MkAbs(args[0])
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	ts.Check(err)
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	ts.Check(f.Sync())
	if len(args) == 2 {
		free, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		info, err := f.Stat()
		ts.Check(err)
		ts.Check(f.Truncate(max(0, info.Size()-free)))
	}
	ts.Check(f.Close())
}
