package pgstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/laserbrain/link"
)

const linkWriterEnv = "LASERKIT_PGLINK_TEST_WRITER"

// linkWriter is a child process appending count records as name.
func linkWriter() {
	dsn := os.Getenv(linkWriterEnv)
	if dsn == "" {
		return
	}
	name := os.Getenv("LASERKIT_PGLINK_NAME")
	n, _ := strconv.Atoi(os.Getenv("LASERKIT_PGLINK_COUNT"))
	pool, err := pgdb.NewPool(dsn, 2)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	l := &link.Link{Log: NewLinkLog(pool, dsn, "f1"), Agent: name}
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("%s-%d ", name, i) + strings.Repeat(name[:1], (i*37)%9000)
		if _, err := l.Write(link.Entry{Text: text, Kind: "load", Payload: map[string]any{"i": i, "w": name}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	pool.Close()
	os.Exit(0)
}

// Six processes writing one fleet's link at once: every record there,
// whole, in each writer's order; another fleet's link sees none of them.
func TestLinkConcurrentWriters(t *testing.T) {
	dsn := newDatabase(t)
	const writers, each = 6, 80
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), linkWriterEnv+"="+dsn, fmt.Sprintf("LASERKIT_PGLINK_NAME=%c%d", 'a'+w, w), fmt.Sprintf("LASERKIT_PGLINK_COUNT=%d", each))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				t.Errorf("writer: %v: %s", err, stderr.String())
			}
		}()
	}
	wg.Wait()
	pool, _ := pgdb.NewPool(dsn, 2)
	defer pool.Close()
	recs, err := (&link.Link{Log: NewLinkLog(pool, dsn, "f1")}).Records()
	if err != nil || len(recs) != writers*each {
		t.Fatalf("%d records, %v; want %d", len(recs), err, writers*each)
	}
	next := map[string]int{}
	for _, r := range recs {
		want := fmt.Sprintf("%s-%d ", r.Agent, next[r.Agent])
		if !strings.HasPrefix(r.Text, want) {
			t.Fatalf("writer %s: got %q, want the record starting %q", r.Agent, r.Text[:min(len(r.Text), 20)], want)
		}
		next[r.Agent]++
	}
	if other, _ := (&link.Link{Log: NewLinkLog(pool, dsn, "f2")}).Records(); len(other) != 0 {
		t.Fatalf("fleet f2's link holds %d records of f1", len(other))
	}
}

// The link in the database keeps exactly the lines the file would, and
// reads back the same: records, filters, voices.
func TestLinkSameAsTheFile(t *testing.T) {
	dsn := newDatabase(t)
	pool, _ := pgdb.NewPool(dsn, 2)
	defer pool.Close()
	clock := func() time.Time { return time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC) }
	path := filepath.Join(t.TempDir(), "link.jsonl")
	file := &link.Link{Path: path, Agent: "a1", Now: clock}
	db := &link.Link{Log: NewLinkLog(pool, dsn, "f1"), Agent: "a1", Now: clock}
	goal := "write a JSON parser in Python"
	for _, e := range []link.Entry{
		{Text: "starting the parser", Goal: &goal},
		{Text: "ünïcode and \"quotes\"\nand a line", Kind: "claim", Payload: map[string]any{"files": []string{"p.py"}, "phi": 0.5}},
		{Text: "from a2", Agent: "a2", Kind: "supervision"},
	} {
		for _, l := range []*link.Link{file, db} {
			if _, err := l.Write(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	var lines []string
	if err := db.Log.Lines(func(b []byte) { lines = append(lines, string(b)) }); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if got, want := strings.Join(lines, "\n")+"\n", string(data); got != want {
		t.Fatalf("lines differ:\n db   %s\n file %s", got, want)
	}
	for _, f := range []link.Filter{{}, {Agent: "a2"}, {Kind: "claim"}, {Limit: 2}} {
		a, _ := file.Read(f)
		b, err := db.Read(f)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if err != nil || len(a) == 0 || string(ja) != string(jb) {
			t.Fatalf("Read(%+v): file %v, db %v (%v)", f, a, b, err)
		}
	}
	va, _ := file.Agents()
	vb, _ := db.Agents()
	if fmt.Sprint(va) != fmt.Sprint(vb) {
		t.Fatalf("Agents: file %+v, db %+v", va, vb)
	}
	if who := db.Whoami(); !strings.Contains(who.Log, "(fleet f1)") || strings.Contains(who.Log, "password") {
		t.Fatalf("Whoami = %+v", who)
	}
}
