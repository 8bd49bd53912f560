package laserbrain

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/internal/testenv"
)

// The truth of a JSON number is Python's, asked of Python itself:
// json.loads reads an integer literal as an int of any size and anything
// with a fraction or an exponent as a float64 (correctly rounded, so a
// literal below half the smallest subnormal is 0.0).
func TestPyTruthyNumbersAsPython(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	lits := []string{"0", "-0", "1", "-1", "0.0", "-0.0", "0e10", "0.000e-5", "1e-400", "-1e-400", "1e400", "-1e400",
		"2e-324", "2.5e-324", "3e-324", "5e-324", "1e-320", "100000000000000000000000000000000000000001", "0.1", "123.456e-2"}
	args := append([]string{"-c", "import json,sys\nfor l in sys.argv[1:]: print(bool(json.loads(l)))"}, lits...)
	out, err := exec.Command(py, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	if len(want) != len(lits) {
		t.Fatalf("python answered %d of %d", len(want), len(lits))
	}
	for i, l := range lits {
		if got := PyTruthy(grammar.Value{Kind: grammar.Number, Num: l}); (want[i] == "True") != got {
			t.Errorf("bool(json.loads(%q)): python %s, PyTruthy %v", l, want[i], got)
		}
	}
}
