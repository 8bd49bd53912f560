package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/laserkit/laserkit/internal/cli"
)

// goString renders s as a Go string literal: a raw string when that is
// exact and readable, an interpreted one otherwise.
func goString(s string) string {
	if !strings.ContainsAny(s, "`\r") && strconv.CanBackquote(s) && strings.ContainsRune(s, '\\') {
		return "`" + s + "`"
	}
	return strconv.Quote(s)
}

func goFloat(n json.Number) string {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		panic(err) // validated before rendering
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// quoteAll renders each of items as a Go string literal.
func quoteAll(items []string) []string {
	parts := make([]string, len(items))
	for i, s := range items {
		parts[i] = goString(s)
	}
	return parts
}

// suffixesByLast groups suffixes by their last byte, the groups in byte
// order and each longest first (bytewise among equal lengths, which cannot
// both end one token).
func suffixesByLast(suffixes []string) [][]string {
	by := map[byte][]string{}
	for _, s := range suffixes {
		by[s[len(s)-1]] = append(by[s[len(s)-1]], s)
	}
	out := make([][]string, 0, len(by))
	for _, last := range slices.Sorted(maps.Keys(by)) {
		group := by[last]
		sort.Slice(group, func(i, j int) bool {
			if len(group[i]) != len(group[j]) {
				return len(group[i]) > len(group[j])
			}
			return group[i] < group[j]
		})
		out = append(out, group)
	}
	return out
}

func goStrings(items []string) string {
	return "{" + strings.Join(quoteAll(items), ", ") + "}"
}

// ident turns a grammar name ("self-report", "goal-drift") into an exported
// Go identifier fragment ("SelfReport", "GoalDrift").
func ident(name string) string {
	var b strings.Builder
	up := true
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// enum writes an iota enum of names with a String method and the stringer
// guard: a hand-edited or reordered constant no longer compiles.
func enum(b *bytes.Buffer, typ, prefix, doc string, names []string) {
	fmt.Fprintf(b, "// %s\ntype %s uint8\n\nconst (\n", doc, typ)
	for i, n := range names {
		if i == 0 {
			fmt.Fprintf(b, "\t%s%s %s = iota // %s\n", prefix, ident(n), typ, n)
		} else {
			fmt.Fprintf(b, "\t%s%s // %s\n", prefix, ident(n), n)
		}
	}
	fmt.Fprintf(b, ")\n\n")
	fmt.Fprintf(b, "func _() {\n\t// An invalid array index here means the constants above were edited by\n\t// hand or reordered: regenerate with go generate.\n\tvar x [1]struct{}\n")
	for i, n := range names {
		fmt.Fprintf(b, "\t_ = x[%s%s-%d]\n", prefix, ident(n), i)
	}
	fmt.Fprintf(b, "}\n\n")
	lower := strings.ToLower(typ[:1]) + typ[1:]
	fmt.Fprintf(b, "var %sNames = [...]string%s\n\n", lower, goStrings(names))
	fmt.Fprintf(b, "// String returns the name the grammar uses.\nfunc (x %s) String() string {\n\tif int(x) < len(%sNames) {\n\t\treturn %sNames[x]\n\t}\n\treturn \"%s(\" + strconv.Itoa(int(x)) + \")\"\n}\n\n", typ, lower, lower, typ)
}

func renderLaserbrain(g *Grammar) []byte {
	var b bytes.Buffer
	for _, section := range []func(*bytes.Buffer, *Grammar){laserbrainState, laserbrainCalibration, laserbrainVerdicts, laserbrainTexts, laserbrainModulation} {
		section(&b, g)
	}
	return b.Bytes()
}

// printer writes to b as fmt.Fprintf does.
func printer(b *bytes.Buffer) func(format string, a ...any) {
	return func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
}

// laserbrainState writes the grammar's identity, the state's values and bounds, and the
// normaliser's tables.
func laserbrainState(b *bytes.Buffer, g *Grammar) {
	p := printer(b)
	p("import \"strconv\"\n\n")
	p("// GrammarVersion is the version of the laserbrain grammar these tables were generated from.\nconst GrammarVersion = %q\n\n", g.Version)
	p("// GrammarContentHash is that grammar's content_hash.\nconst GrammarContentHash = %q\n\n", g.ContentHash)

	p("// Progress values a well-formed state may report (/progress_enum).\nconst (\n")
	for _, v := range g.ProgressEnum {
		p("\tProgress%s = %q\n", ident(v), v)
	}
	p(")\n\nvar progressEnum = [...]string%s\n\n", goStrings(g.ProgressEnum))
	p("// Distance bounds (/distance_range).\nconst (\n\tdistanceMin = %d\n\tdistanceMax = %d\n)\n\n", g.Distance.Min, g.Distance.Max)

	p("// The normaliser (/normalizer).\nconst (\n")
	p("\ttokenPattern = %s\n", goString(g.Normalizer.TokenPattern))
	p("\tstemPattern = %s\n", goString(g.Normalizer.StemPattern))
	p("\tstemMinLength = %d\n)\n\n", g.Normalizer.StemMinLength)

	// The normaliser's tables are code and static data, not maps: a map
	// literal is built by the package's init in every process, and the hook
	// processes are short-lived. The linker lays these out ready to use.
	p("// tokenByte[c] reports whether byte c may appear in a token: the bytes\n// tokenPattern's character class admits.\nvar tokenByte = [256]bool{")
	for i := 0; i < len(g.TokenBytes); i++ {
		p("%q: true, ", g.TokenBytes[i])
	}
	p("}\n\n")
	sw := append([]string(nil), g.Normalizer.Stopwords...)
	sort.Strings(sw)
	p("// isStopword reports whether tok is one of /normalizer/stopwords. Switching\n// on string(tok) does not allocate.\nfunc isStopword(tok []byte) bool {\n\tswitch string(tok) {\n\tcase %s:\n\t\treturn true\n\t}\n\treturn false\n}\n\n", strings.Join(quoteAll(sw), ", "))
	p("// stemSuffixesByLast is stemPattern's language by last byte, longest first.\n// A token of at least stemMinLength loses the first of its last byte's\n// suffixes it ends with: the longest in the language, the leftmost match.\nvar stemSuffixesByLast = [256][]string{\n")
	for _, last := range suffixesByLast(g.StemSuffixes) {
		p("\t%q: %s,\n", last[0][len(last[0])-1], goStrings(last))
	}
	p("}\n\n")
}

// laserbrainCalibration writes the calibration's weights and thresholds.
func laserbrainCalibration(b *bytes.Buffer, g *Grammar) {
	p := printer(b)
	c := g.Calibration
	p("// Calibration (/calibration). Variables, not constants: Go folds constant\n// expressions exactly, and Φ must be computed in float64 at run time as the\n// reference implementation computes it.\nvar (\n")
	p("\tweightGoal float64 = %s\n\tweightDistance float64 = %s\n\tweightProgress float64 = %s\n", goFloat(c.Weights.Goal), goFloat(c.Weights.Distance), goFloat(c.Weights.Progress))
	p("\tgoalMin float64 = %s\n\tselfReportMin float64 = %s\n\tcollisionMin float64 = %s\n", goFloat(c.GoalMin), goFloat(c.SelfReportMin), goFloat(c.CollisionMin))
	p("\tanchoredUnanchored float64 = %s\n\tanchoredCorroborated float64 = %s\n", goFloat(c.Anchored.Unanchored), goFloat(c.Anchored.Corroborated))
	p("\texploreRevisitMin float64 = %s\n\texploreSettledMax float64 = %s\n)\n\n", goFloat(c.Explore.RevisitMin), goFloat(c.Explore.SettledMax))
	p("const (\n\tstallWindow = %d\n\texploreMinCommitment = %d\n\texploreWindow = %d\n)\n\n", c.StallWindow, c.Explore.MinCommitment, c.Explore.Window)
}

// laserbrainVerdicts writes the verdicts, their names and their classes.
func laserbrainVerdicts(b *bytes.Buffer, g *Grammar) {
	p := printer(b)
	v := g.Verdicts
	var names []string
	var classes []string
	for _, n := range v.Hold {
		names, classes = append(names, n), append(classes, "ClassHold")
	}
	for _, n := range v.WarnThenInterrupt.Names {
		names, classes = append(names, n), append(classes, "ClassWarnThenInterrupt")
	}
	for _, n := range v.Interrupt {
		names, classes = append(names, n), append(classes, "ClassInterrupt")
	}
	for _, n := range v.Meta.Names {
		names, classes = append(names, n), append(classes, "ClassMeta")
	}
	enum(b, "Verdict", "Verdict", "Verdict is one of the grammar's verdicts (/verdicts), in grammar order.", names)
	p("// The verdicts' names as constants, for the texts built from them.\nconst (\n")
	for _, n := range names {
		p("\tverdictName%s = %q\n", ident(n), n)
	}
	p(")\n\n")
	enum(b, "VerdictClass", "Class", "VerdictClass says how a verdict treats the drifting flag.", []string{"hold", "warn-then-interrupt", "interrupt", "meta"})
	p("var verdictClasses = [...]VerdictClass{%s}\n\n", strings.Join(classes, ", "))
}

// laserbrainTexts writes the oscillation detector's parameters, the ceiling marker's
// phrases and what an agent is told to spell.
func laserbrainTexts(b *bytes.Buffer, g *Grammar) {
	p := printer(b)
	p("// The oscillation detector's parameters, read from /verdicts/meta/rule.\nconst (\n")
	p("\tcycleMinPeriod = %d\n\tcycleMaxPeriod = %d\n\tcycleNeedFloor = %d\n\tcycleRepeats = %d\n)\n\n", g.Cycle.MinPeriod, g.Cycle.MaxPeriod, g.Cycle.NeedFloor, g.Cycle.Repeats)

	p("// The ceiling marker's phrase lists (/ceiling_patterns), in grammar order.\n")
	p("var ceilingCause = [...]string%s\n\n", goStrings(g.Ceiling.Cause))
	p("var ceilingObservation = [...]string%s\n\n", goStrings(g.Ceiling.Observation))
	p("// ceilingPattern is the single scan: group 1 a cause-claim, group 2 an observation.\nconst ceilingPattern = %s\n\n", goString(g.CeilingPattern()))

	p("// What an agent is told to spell (/kind, /fields, /laserscore, /well_formed,\n// /use), in grammar order.\n")
	p("const (\n\tgrammarKind = %s\n\tgrammarUse = %s\n\tgrammarWellFormed = %s\n\tlaserscoreExample = %s\n)\n\n",
		goString(g.Kind), goString(g.Use), goString(g.WellFormed), goString(g.Laserscore.Example))
	p("var grammarFields = [...]GrammarField{\n")
	for _, f := range g.Fields {
		p("\t{Name: %s, Says: %s},\n", goString(f.Key), goString(f.Text))
	}
	p("}\n\n")
	p("var laserscoreMeasured = [...]string%s\n\n", goStrings(g.Laserscore.Measured))
	p("var laserscoreCarried = [...]string%s\n\n", goStrings(g.Laserscore.Carried))
}

// laserbrainModulation writes the drift modes, depths and preset teams of roles.
func laserbrainModulation(b *bytes.Buffer, g *Grammar) {
	p := printer(b)
	m := g.Modulation
	p("// Modulation (/modulation): which drift modes a role acts on.\nvar modulationModes = [...]string%s\n\n", goStrings(m.Modes))
	p("// modulationDepth is one named depth and the modes it returns on.\ntype modulationDepth struct {\n\tName  string\n\tModes []string\n}\n\n")
	p("var modulationDepths = [...]modulationDepth{\n")
	for _, d := range g.Depths {
		p("\t{Name: %q, Modes: []string%s},\n", d.Name, goStrings(d.Items))
	}
	p("}\n\n")
	p("// modulationRole is one role of a preset team.\ntype modulationRole struct {\n\tRole    string\n\tRecurse string\n\tModes   []string\n\tReturn  string\n}\n\n")
	p("// modulationPreset is a named team of roles.\ntype modulationPreset struct {\n\tName  string\n\tTask  string\n\tRoles []modulationRole\n}\n\n")
	p("var modulationPresets = [...]modulationPreset{\n")
	for _, pr := range m.Presets {
		p("\t{Name: %q, Task: %q, Roles: []modulationRole{\n", pr.Name, pr.Task)
		for _, r := range pr.Roles {
			p("\t\t{Role: %q, Recurse: %q", r.Role, r.Recurse)
			if len(r.Modes) > 0 {
				p(", Modes: []string%s", goStrings(r.Modes))
			}
			if r.Return != "" {
				p(", Return: %q", r.Return)
			}
			p("},\n")
		}
		p("\t}},\n")
	}
	p("}\n")
}

// renderShell writes the shell model's tables: the grammar's operator
// patterns.
func renderShell(g *Grammar) []byte {
	var b bytes.Buffer
	p := printer(&b)
	p("// grammarPattern is one operator pattern (/operator_patterns). Patterns are\n// compiled with regexp2 in its default mode, ignoring case.\ntype grammarPattern struct {\n\tSource  string\n\tLabel   string\n\tOutward bool\n}\n\n")
	p("// irreversiblePatterns escalate a command to irreversible, in grammar order\n// (labels are reported in match order).\nvar irreversiblePatterns = [...]grammarPattern{\n")
	for _, ip := range g.Operator.Irreversible {
		p("\t{Source: %s, Label: %q, Outward: %t},\n", goString(ip.Pattern), ip.Label, ip.Outward)
	}
	p("}\n\n// allowPatterns are dated carve-outs; they annotate and never relax.\nvar allowPatterns = [...]grammarPattern{\n")
	for _, ap := range g.Operator.Allow {
		p("\t{Source: %s, Label: %q},\n", goString(ap.Pattern), ap.Label)
	}
	p("}\n")
	return b.Bytes()
}

// renderOperator writes the grammar's step dictionary: verbs, phases, the
// phase rules and the shape language.
func renderOperator(g *Grammar) []byte {
	var b bytes.Buffer
	p := printer(&b)
	p("import \"strconv\"\n\n")
	p("// GrammarVersion is the version of the laserbrain grammar these tables were generated from.\nconst GrammarVersion = %q\n\n", g.Version)
	ph := g.Dictionary.Phases
	enum(&b, "Phase", "Phase", "Phase is one phase of the method backbone (/dictionary/phases/backbone).", ph.Backbone)
	p("// verbDefault is a step verb's default position on the operator's two axes\n// (/dictionary/steps).\ntype verbDefault struct {\n\tReversible bool\n\tOutward    bool\n\tGloss      string\n}\n\n")
	// Switches, not maps: a map literal is built at init in every process.
	p("// stepVerb returns a step verb's defaults (/dictionary/steps).\nfunc stepVerb(verb string) (verbDefault, bool) {\n\tswitch verb {\n")
	for _, verb := range slices.Sorted(maps.Keys(g.Dictionary.Steps)) {
		s := g.Dictionary.Steps[verb]
		p("\tcase %q:\n\t\treturn verbDefault{Reversible: %t, Outward: %t, Gloss: %q}, true\n", verb, s.Reversible, s.Outward, s.Gloss)
	}
	p("\t}\n\treturn verbDefault{}, false\n}\n\n// phaseOfVerb returns a step verb's phase (/dictionary/phases/of_verb).\nfunc phaseOfVerb(verb string) (Phase, bool) {\n\tswitch verb {\n")
	for _, verb := range slices.Sorted(maps.Keys(ph.OfVerb)) {
		p("\tcase %q:\n\t\treturn Phase%s, true\n", verb, ident(ph.OfVerb[verb]))
	}
	p("\t}\n\treturn 0, false\n")
	p("}\n\n// stepVerbs are the dictionary's step verbs, sorted (/dictionary/steps).\nvar stepVerbs = [...]string{")
	for i, verb := range slices.Sorted(maps.Keys(g.Dictionary.Steps)) {
		if i > 0 {
			p(", ")
		}
		p("%q", verb)
	}
	p("}\n\n// phaseMeanings are what each phase is for, in backbone order\n// (/dictionary/phases/meaning).\nvar phaseMeanings = [...]string{\n")
	for _, name := range ph.Backbone {
		p("\t%q,\n", ph.Meaning[name])
	}
	p("}\n\n// shapeProductions are the shape language's productions, the method's\n// first, then sorted (/dictionary/phases/shape_language/productions).\nvar shapeProductions = [...][2]string{\n")
	prods := slices.Sorted(maps.Keys(ph.Shape.Productions))
	if _, ok := ph.Shape.Productions["method"]; ok {
		p("\t{%q, %q},\n", "method", ph.Shape.Productions["method"])
	}
	for _, name := range prods {
		if name != "method" {
			p("\t{%q, %q},\n", name, ph.Shape.Productions[name])
		}
	}
	p("}\n\n// The phase rules the lint implements, by name (/dictionary/phases/rules).\nconst (\n")
	for _, r := range ph.Rules {
		p("\tRule%s = %q\n", ident(r.Name), r.Name)
	}
	p(")\n\n// phaseRule is a rule's name and the grammar's statement of it.\ntype phaseRule struct {\n\tName string\n\tSays string\n\tFrom string\n}\n\n")
	p("var phaseRules = [...]phaseRule{\n")
	for _, r := range ph.Rules {
		p("\t{Name: %q, Says: %q, From: %q},\n", r.Name, r.Says, r.From)
	}
	p("}\n\n// shapePattern is the shape language: phases space-separated, adjacent\n// repeats collapsed (/dictionary/phases/shape_language/pattern).\nconst shapePattern = %s\n", goString(ph.Shape.Pattern))
	return b.Bytes()
}

// shapeVectors is the vector file for the grammar's own shape examples.
type shapeVectors struct {
	Kind   string      `json:"kind"`
	Source string      `json:"source"`
	Cases  []shapeCase `json:"cases"`
}

type shapeCase struct {
	In  string `json:"in"`
	Out bool   `json:"out"`
	Why string `json:"why,omitempty"`
}

func renderShapeVectors(g *Grammar) ([]byte, error) {
	v := shapeVectors{
		Kind: "shape",
		Source: fmt.Sprintf("generated by gen from grammar/grammar.json (grammar %s, content_hash %s): "+
			"the %d shapes of dictionary.phases.shape_language.shapes (accepted) and its %d verified_rejects; DO NOT EDIT",
			g.Version, g.ContentHash, len(g.Dictionary.Phases.Shape.Shapes), len(g.VerifiedRejects)),
	}
	for _, s := range g.Dictionary.Phases.Shape.Shapes {
		v.Cases = append(v.Cases, shapeCase{In: s, Out: true})
	}
	for _, r := range g.VerifiedRejects {
		v.Cases = append(v.Cases, shapeCase{In: r.Key, Out: false, Why: r.Text})
	}
	var buf bytes.Buffer
	if err := cli.WriteJSON(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
