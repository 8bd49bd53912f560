package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// largeShapes are commands of one megabyte in the shapes the analysis
// meets (operator/shell's hostile inputs), each sent to the gate as a
// Bash call's PreToolUse.
func largeShapes() []struct{ name, cmd string } {
	mb := 1 << 20
	n := (mb - len("rm -rf x")) / len("echo $()")
	return []struct{ name, cmd string }{
		{"words", strings.Repeat("echo hello world; ", mb/18)},
		{"one-word", "echo " + strings.Repeat("a", mb)},
		{"pipes", strings.Repeat("cat | ", mb/6) + "cat"},
		{"rm", strings.Repeat("rm -rf x; ", mb/10)},
		{"heredoc-to-bash", "bash <<EOF\n" + strings.Repeat("rm -rf x\n", mb/9) + "EOF"},
		{"python", "python3 -c '" + strings.Repeat("print(\"a\"); ", mb/13) + "'"},
		{"code-lists", `python3 -c "` + strings.Repeat("x=['rm','-rf','d'];", mb/20) + `"`},
		{"vars", strings.Repeat("a=$a$a; ", mb/8) + "$a"},
		{"unknown-program", "flock " + strings.Repeat("rm ", mb/3)},
		{"nested-substitution", strings.Repeat("echo $(", n) + "rm -rf x" + strings.Repeat(")", n)},
		// Just under the size the analysis reads whole.
		{"128KiB-pipes", strings.Repeat("cat | ", (128<<10)/6-1) + "cat"},
	}
}

// BenchmarkGateOneMegabyte times the whole gate process — reading the
// event, deciding, answering — on each one-megabyte command, interleaved
// with the gate on a trivial command (ls -la) in the same rounds: medians
// of wall and CPU time, each as a ratio to the trivial command's. The
// budget is 150 ms of wall time for any input up to 1 MB; a median over
// it is flagged (the machine's load stretches wall time, not work: the
// CPU figures say how much work there is). GATE_BASELINE names another
// build of the gate (an earlier commit's) to time beside this one.
func BenchmarkGateOneMegabyte(b *testing.B) {
	gate := installed(b, buildGate(b))
	b.Setenv("LASERBRAIN_HOME", b.TempDir())
	dir := b.TempDir()
	event := func(cmd string) string {
		data, err := json.Marshal(map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "cwd": dir})
		if err != nil {
			b.Fatal(err)
		}
		return string(data)
	}
	env := append(quietEnv(), "CLAUDE_CODE_SESSION_ATTENDED=0")
	cs := []*contender{{name: "trivial", argv: []string{gate}, event: event("ls -la"), env: env}}
	baseline := os.Getenv("GATE_BASELINE")
	if baseline != "" {
		baseline = installed(b, baseline)
	}
	for _, s := range largeShapes() {
		cs = append(cs, &contender{name: s.name, argv: []string{gate}, event: event(s.cmd), env: env})
		if baseline != "" {
			cs = append(cs, &contender{name: "baseline-" + s.name, argv: []string{baseline}, event: event(s.cmd), env: env})
		}
	}
	eventFiles(b, cs)
	rounds(b, cs, 3, func(c *contender, _ int) {
		_, _ = c.runOnce(b) // a refusal exits 2
	})
	wall0, cpu0 := median(cs[0].times), median(cs[0].cpu)
	report := fmt.Sprintf("medians over %d rounds (wall, CPU; ratios to the trivial command's %v wall, %v CPU):\n", len(cs[0].times), wall0.Round(time.Microsecond), cpu0.Round(time.Microsecond))
	worst := time.Duration(0)
	for _, c := range cs {
		w, cpu := median(c.times), median(c.cpu)
		b.ReportMetric(float64(w.Microseconds())/1000, c.name+"-ms")
		report += fmt.Sprintf("  %-30s %8.1f ms wall (%5.1f×)  %7.1f ms CPU (%5.1f×)\n", c.name, float64(w.Microseconds())/1000, float64(w)/float64(wall0),
			float64(cpu.Microseconds())/1000, float64(cpu)/float64(max(cpu0, time.Microsecond)))
		if !strings.HasPrefix(c.name, "baseline-") {
			worst = max(worst, w)
		}
	}
	b.Log(report)
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
	if worst > 150*time.Millisecond {
		b.Logf("the slowest one-megabyte answer took %v of wall time: OVER the 150 ms budget at this load", worst)
	}
}
