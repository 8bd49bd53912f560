package laserbrain

import "testing"

// benchSteps is a realistic mix: advancing on one ground, a sub-task, a
// drift, a return and a stall, so every branch of the step is timed.
var benchSteps = []StepInput{
	{Goal: "add a CSV importer to the admin panel", Progress: ProgressAdvancing, Distance: Dist(8)},
	{Goal: "add a CSV importer to the admin panel", Progress: ProgressAdvancing, Distance: Dist(7)},
	{Goal: "validate CSV columns before import", Progress: ProgressAdvancing, Distance: Dist(6), ParentGoal: "add a CSV importer to the admin panel"},
	{Goal: "refactor the ORM base class", Progress: ProgressAdvancing, Distance: Dist(6)},
	{Goal: "add a CSV importer to the admin panel", Progress: ProgressStuck, Distance: Dist(6)},
	{Goal: "add a CSV importer to the admin panel", Progress: ProgressAdvancing, Distance: Dist(6)},
	{Goal: "add a CSV importer to the admin panel", Progress: ProgressAdvancing, Distance: Dist(5)},
	{Goal: "add the CSV importer to the admin panel", Progress: ProgressAdvancing, Distance: Dist(5)},
}

// BenchmarkPhi times Φ on already-normalised goals, the arithmetic alone.
func BenchmarkPhi(b *testing.B) {
	g := &Ground{Goal: "add a CSV importer to the admin panel", Progress: ProgressAdvancing, Dist: Dist(8)}
	gt, st := Norm(g.Goal), Norm("validate CSV columns before import")
	var sink float64
	for b.Loop() {
		sink += phi(st, gt, ProgressAdvancing, Dist(6), g)
	}
	_ = sink
}

// BenchmarkPhiFromText includes normalising both goals.
func BenchmarkPhiFromText(b *testing.B) {
	g := Ground{Goal: "add a CSV importer to the admin panel", Progress: ProgressAdvancing, Dist: Dist(8)}
	for b.Loop() {
		Phi("validate CSV columns before import", ProgressAdvancing, Dist(6), g)
	}
}

// BenchmarkStep times one full check in process: rules, laserscore, context
// record (in memory), cycle detector, verdict. The run is restarted every
// 64 steps so its history stays a realistic size.
func BenchmarkStep(b *testing.B) {
	contexts := NewMemContexts()
	var r *Run
	i := 0
	for b.Loop() {
		if i%64 == 0 {
			r = NewRun(RunOptions{ID: "bench", Contexts: contexts})
		}
		if _, err := r.Step(benchSteps[i%len(benchSteps)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPhronesis times the whole-run judgment of a 64-step run.
func BenchmarkPhronesis(b *testing.B) {
	r := NewRun(RunOptions{})
	for i := 0; i < 64; i++ {
		if _, err := r.Step(benchSteps[i%len(benchSteps)]); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		r.Phronesis()
	}
}
