package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/laserkit/laserkit/internal/testenv"
)

// seed001 is seed 001 (the OCA bridge page) in the reference material
// beside the project (testenv.SharedPath).
const seed001 = "seeds/001_9884b521ef433d59.txt"

// The four-pass script runs the seed's prediction-ledger query from a copy
// (ledger.sql in the archive); the copy must be the seed's text, character
// for character, so that the script tests the seed's query and not ours.
func TestSeedLedgerQueryShippedVerbatim(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/script-oca/ledger_four_pass.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var shipped []byte
	for _, f := range ar.Files {
		if f.Name == "ledger.sql" {
			shipped = f.Data
		}
	}
	if !bytes.Contains(shipped, []byte(":'slug'")) || !bytes.HasSuffix(shipped, []byte(";\n")) {
		t.Fatalf("ledger_four_pass.txtar has no ledger.sql taking :'slug': %q", shipped)
	}
	seed, err := os.ReadFile(testenv.Shared(t, seed001))
	if err != nil {
		t.Fatal(err)
	}
	const heading = "The prediction ledger — did the loop model itself?\n\n"
	i := bytes.Index(seed, []byte(heading))
	if i < 0 {
		t.Fatalf("seed 001 has no heading %q", heading)
	}
	if rest := seed[i+len(heading):]; !bytes.HasPrefix(rest, shipped) {
		t.Errorf("ledger.sql differs from the seed's query:\nshipped:\n%s\nseed:\n%s", shipped, rest[:min(len(rest), len(shipped))])
	}
}

// psqlVar is a psql variable interpolated as a literal, :'name'.
var psqlVar = regexp.MustCompile(`:'([A-Za-z_][A-Za-z0-9_]*)'`)

// sqlfile FILE [NAME=VALUE…]: run FILE's query the way `psql -v NAME=VALUE
// -f FILE` would, except that every :'NAME' becomes a bind parameter
// holding VALUE; print the rows as sql does.
func cmdSQLFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || neg {
		ts.Fatalf("usage: sqlfile FILE [NAME=VALUE...]")
	}
	vars := map[string]string{}
	for _, a := range args[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("sqlfile: %q is not NAME=VALUE", a)
		}
		vars[k] = v
	}
	index := map[string]int{}
	query := []string{""}
	var missing []string
	text := psqlVar.ReplaceAllStringFunc(ts.ReadFile(args[0]), func(m string) string {
		name := psqlVar.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		if _, seen := index[name]; !seen {
			index[name] = len(query)
			query = append(query, v)
		}
		return "$" + strconv.Itoa(index[name])
	})
	if len(missing) > 0 {
		ts.Fatalf("sqlfile: %s uses %s, not given", args[0], strings.Join(missing, ", "))
	}
	query[0] = text
	cmdSQL(ts, false, query)
}

// num REF = EXPR: the number at REF equals EXPR to within 1e-12, where EXPR
// is A, K * A, or abs A - B; an operand is a number or a REF. A REF is
// FILE:PATH: in a .json file a dotted path as json takes it (.0.forecast),
// in any other file .ROW.COL of its tab-separated lines (0-based, as sql
// prints them). With !, the two differ.
func cmdNum(ts *testscript.TestScript, neg bool, args []string) {
	usage := "usage: num REF = A | K * A | abs A - B"
	if len(args) < 3 || args[1] != "=" {
		ts.Fatalf("%s", usage)
	}
	got := numOperand(ts, args[0])
	e := args[2:]
	var want float64
	var shown string
	switch {
	case len(e) == 1:
		want = numOperand(ts, e[0])
		shown = fmt.Sprint(want)
	case len(e) == 3 && e[1] == "*":
		a, b := numOperand(ts, e[0]), numOperand(ts, e[2])
		want, shown = a*b, fmt.Sprintf("%v × %v = %v", a, b, a*b)
	case len(e) == 4 && e[0] == "abs" && e[2] == "-":
		a, b := numOperand(ts, e[1]), numOperand(ts, e[3])
		want, shown = math.Abs(a-b), fmt.Sprintf("|%v − %v| = %v", a, b, math.Abs(a-b))
	default:
		ts.Fatalf("%s", usage)
	}
	equal := math.Abs(got-want) <= 1e-12
	switch {
	case equal && neg:
		ts.Fatalf("%s is %v, want anything but %s", args[0], got, shown)
	case !equal && !neg:
		ts.Fatalf("%s is %v, want %s", args[0], got, shown)
	}
}

// numOperand reads a number literal or a FILE:PATH reference.
func numOperand(ts *testscript.TestScript, s string) float64 {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v
	}
	file, path, ok := strings.Cut(s, ":")
	if !ok {
		ts.Fatalf("num: %q is neither a number nor FILE:PATH", s)
	}
	var cell string
	if strings.HasSuffix(file, ".json") {
		v, found := lookup(ts, file, path)
		n, isNum := v.(json.Number)
		if !found || !isNum {
			ts.Fatalf("num: %s: %s is %v, not a number", file, path, v)
		}
		cell = n.String()
	} else {
		parts := strings.Split(strings.TrimPrefix(path, "."), ".")
		if len(parts) != 2 {
			ts.Fatalf("num: %s: path %q is not .ROW.COL", file, path)
		}
		row, err1 := strconv.Atoi(parts[0])
		col, err2 := strconv.Atoi(parts[1])
		lines := strings.Split(strings.TrimSuffix(ts.ReadFile(file), "\n"), "\n")
		if err1 != nil || err2 != nil || row < 0 || row >= len(lines) {
			ts.Fatalf("num: %s has no row %s", file, path)
		}
		cells := strings.Split(lines[row], "\t")
		if col < 0 || col >= len(cells) {
			ts.Fatalf("num: %s has no cell %s", file, path)
		}
		cell = cells[col]
	}
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		ts.Fatalf("num: %s is %q, not a number", s, cell)
	}
	return v
}
