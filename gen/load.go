package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"

	"github.com/dlclark/regexp2"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/grammar/schema"
)

// Grammar is the typed view of grammar.json the generator works from, plus
// what it derives (token bytes, stem suffixes, cycle parameters).
type Grammar struct {
	Version      string   `json:"laserbrain_grammar"`
	ContentHash  string   `json:"content_hash"`
	ProgressEnum []string `json:"progress_enum"`
	Distance     struct {
		Min int `json:"min"`
		Max int `json:"max"`
	} `json:"distance_range"`
	Normalizer struct {
		TokenPattern  string   `json:"token_pattern"`
		Stopwords     []string `json:"stopwords"`
		StemPattern   string   `json:"stem_pattern"`
		StemMinLength int      `json:"stem_min_length"`
	} `json:"normalizer"`
	Calibration struct {
		GoalMin       json.Number `json:"goal_min"`
		SelfReportMin json.Number `json:"self_report_min"`
		StallWindow   int         `json:"stall_window"`
		CollisionMin  json.Number `json:"collision_min"`
		Weights       struct {
			Goal     json.Number `json:"goal"`
			Distance json.Number `json:"distance"`
			Progress json.Number `json:"progress"`
		} `json:"weights"`
		Anchored struct {
			Unanchored   json.Number `json:"unanchored"`
			Corroborated json.Number `json:"corroborated"`
		} `json:"anchored"`
		Explore struct {
			MinCommitment int         `json:"min_commitment"`
			RevisitMin    json.Number `json:"revisit_min"`
			SettledMax    json.Number `json:"settled_max"`
			Window        int         `json:"window"`
		} `json:"explore"`
	} `json:"calibration"`
	Verdicts struct {
		Hold              []string `json:"hold"`
		WarnThenInterrupt struct {
			Names []string `json:"names"`
		} `json:"warn_then_interrupt"`
		Interrupt []string `json:"interrupt"`
		Meta      struct {
			Names []string `json:"names"`
			Rule  string   `json:"rule"`
		} `json:"meta"`
	} `json:"verdicts"`
	Ceiling struct {
		Cause       []string `json:"cause"`
		Observation []string `json:"observation"`
	} `json:"ceiling_patterns"`
	Operator struct {
		Irreversible []struct {
			Pattern string `json:"pattern"`
			Label   string `json:"label"`
			Outward bool   `json:"outward"`
		} `json:"irreversible"`
		Allow []struct {
			Pattern string `json:"pattern"`
			Label   string `json:"label"`
		} `json:"allow"`
	} `json:"operator_patterns"`
	Dictionary struct {
		Steps map[string]struct {
			Reversible bool   `json:"reversible"`
			Outward    bool   `json:"outward"`
			Gloss      string `json:"gloss"`
		} `json:"steps"`
		Phases struct {
			Backbone []string          `json:"backbone"`
			Meaning  map[string]string `json:"meaning"`
			OfVerb   map[string]string `json:"of_verb"`
			Rules    []struct {
				Name string `json:"name"`
				Says string `json:"says"`
				From string `json:"from"`
			} `json:"rules"`
			Shape struct {
				Pattern     string            `json:"pattern"`
				Shapes      []string          `json:"shapes"`
				Productions map[string]string `json:"productions"`
			} `json:"shape_language"`
		} `json:"phases"`
	} `json:"dictionary"`
	Modulation struct {
		Modes   []string `json:"modes"`
		Presets []struct {
			Name  string `json:"name"`
			Task  string `json:"task"`
			Roles []struct {
				Role    string   `json:"role"`
				Recurse string   `json:"recurse"`
				Modes   []string `json:"modes"`
				Return  string   `json:"return"`
			} `json:"roles"`
		} `json:"presets"`
	} `json:"modulation"`

	// What an agent is told (/use, /well_formed, /laserscore).
	Kind       string `json:"kind"`
	Use        string `json:"use"`
	WellFormed string `json:"well_formed"`
	Laserscore struct {
		Measured []string `json:"measured"`
		Carried  []string `json:"carried"`
		Example  string   `json:"example"`
	} `json:"laserscore"`

	// Kept in document order, which encoding/json maps would lose.
	Depths          []NamedList
	VerifiedRejects []NamedText
	Fields          []NamedText `json:"-"` // /fields: what each field of a state says

	// Derived.
	TokenBytes   string   // every byte the token pattern's class admits
	StemSuffixes []string // the stem pattern's (finite) language, sorted
	Cycle        CycleParams
}

// NamedList and NamedText are object members kept in document order.
type NamedList struct {
	Name  string
	Items []string
}
type NamedText struct{ Key, Text string }

// CycleParams are the oscillation detector's numbers, read from the meta
// verdict's rule text (the grammar states them only in prose).
type CycleParams struct {
	MinPeriod, MaxPeriod, NeedFloor, Repeats int
}

func load(data []byte) (*Grammar, error) {
	if err := schema.Verify(data); err != nil {
		return nil, err
	}
	g := &Grammar{}
	if err := json.Unmarshal(data, g); err != nil {
		return nil, err
	}
	doc, _ := grammar.Parse(data)
	depths, _ := doc.Lookup("/modulation/depths")
	for _, m := range depths.Members {
		nl := NamedList{Name: m.Key}
		for _, it := range m.Value.Items {
			nl.Items = append(nl.Items, it.Str)
		}
		g.Depths = append(g.Depths, nl)
	}
	fields, err := doc.Lookup("/fields")
	if err != nil || fields.Kind != grammar.Object {
		return nil, fmt.Errorf("/fields: want an object of field: what it says")
	}
	for _, m := range fields.Members {
		g.Fields = append(g.Fields, NamedText{Key: m.Key, Text: m.Value.Str})
	}
	rejects, _ := doc.Lookup("/dictionary/phases/shape_language/verified_rejects")
	for _, m := range rejects.Members {
		g.VerifiedRejects = append(g.VerifiedRejects, NamedText{Key: m.Key, Text: m.Value.Str})
	}

	if g.TokenBytes, err = classBytes(g.Normalizer.TokenPattern); err != nil {
		return nil, fmt.Errorf("/normalizer/token_pattern: %w", err)
	}
	if g.StemSuffixes, err = suffixLanguage(g.Normalizer.StemPattern); err != nil {
		return nil, fmt.Errorf("/normalizer/stem_pattern: %w", err)
	}
	if g.Cycle, err = cycleParams(g.Verdicts.Meta.Rule); err != nil {
		return nil, fmt.Errorf("/verdicts/meta/rule: %w", err)
	}
	if _, err := regexp2.Compile(g.CeilingPattern(), grammar.RegexpOptions); err != nil {
		return nil, fmt.Errorf("/ceiling_patterns: combined pattern does not compile: %w", err)
	}
	return g, nil
}

// CeilingPattern is the one regex the ceiling marker scans with: causes first,
// observations second, each alternation in grammar order (leftmost-first).
func (g *Grammar) CeilingPattern() string {
	return `\b(?:(` + strings.Join(g.Ceiling.Cause, "|") + `)|(` + strings.Join(g.Ceiling.Observation, "|") + `))\b`
}

// classBytes accepts a pattern of the form [class]+ over ASCII and returns the
// bytes in the class. The normaliser scans tokens with a byte table built from
// it rather than running a regexp on every goal.
func classBytes(pattern string) (string, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", err
	}
	if re.Op != syntax.OpPlus || re.Sub[0].Op != syntax.OpCharClass {
		return "", fmt.Errorf("the normaliser supports a token pattern of the form [class]+, got %q", pattern)
	}
	cls := re.Sub[0].Rune
	var b strings.Builder
	for i := 0; i < len(cls); i += 2 {
		if cls[i+1] > 0x7e || cls[i] < 0x21 {
			return "", fmt.Errorf("token class must be printable ASCII, got %q", pattern)
		}
		for r := cls[i]; r <= cls[i+1]; r++ {
			b.WriteRune(r)
		}
	}
	// Tokens are scanned from lowercased text: an upper-case letter in the
	// class would never match, and would mean the grammar expects otherwise.
	if strings.ContainsAny(b.String(), "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		return "", fmt.Errorf("token class contains upper-case letters, but tokens are lowercased first: %q", pattern)
	}
	return b.String(), nil
}

// suffixLanguage expands a pattern of the form (finite alternation)$ into its
// strings. Because every match must run to the end of the token, the
// leftmost match is the longest listed suffix the token ends with, so the
// normaliser can test suffixes instead of running the regexp.
func suffixLanguage(pattern string) ([]string, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return nil, fmt.Errorf("the normaliser supports a stem pattern of the form (suffixes)$, got %q", pattern)
	}
	body := &syntax.Regexp{Op: syntax.OpConcat, Sub: re.Sub[:len(re.Sub)-1]}
	set, err := expand(body, 0)
	if err != nil {
		return nil, fmt.Errorf("stem pattern %q: %w", pattern, err)
	}
	out := make([]string, 0, len(set))
	for s := range set {
		if s == "" {
			return nil, fmt.Errorf("stem pattern %q matches the empty suffix", pattern)
		}
		out = append(out, s)
	}
	sort.Strings(out)
	// Cross-check the expansion against the regexp on every suffix.
	check := regexp.MustCompile(pattern)
	for _, s := range out {
		if loc := check.FindStringIndex(s); loc == nil || loc[0] != 0 {
			return nil, fmt.Errorf("internal error: expanded suffix %q not matched whole by %q", s, pattern)
		}
	}
	return out, nil
}

const maxLanguage = 1000

func expand(re *syntax.Regexp, depth int) (map[string]bool, error) {
	if depth > 50 {
		return nil, fmt.Errorf("pattern nests too deeply")
	}
	switch re.Op {
	case syntax.OpEmptyMatch:
		return map[string]bool{"": true}, nil
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, fmt.Errorf("case-folded literals are not supported")
		}
		return map[string]bool{string(re.Rune): true}, nil
	case syntax.OpCharClass:
		set := map[string]bool{}
		for i := 0; i < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				set[string(r)] = true
				if len(set) > maxLanguage {
					return nil, fmt.Errorf("character class too large")
				}
			}
		}
		return set, nil
	case syntax.OpCapture:
		return expand(re.Sub[0], depth+1)
	case syntax.OpQuest:
		set, err := expand(re.Sub[0], depth+1)
		if err != nil {
			return nil, err
		}
		set[""] = true
		return set, nil
	case syntax.OpAlternate:
		set := map[string]bool{}
		for _, sub := range re.Sub {
			s, err := expand(sub, depth+1)
			if err != nil {
				return nil, err
			}
			for k := range s {
				set[k] = true
			}
		}
		return set, nil
	case syntax.OpConcat:
		set := map[string]bool{"": true}
		for _, sub := range re.Sub {
			s, err := expand(sub, depth+1)
			if err != nil {
				return nil, err
			}
			next := map[string]bool{}
			for a := range set {
				for b := range s {
					next[a+b] = true
				}
			}
			if len(next) > maxLanguage {
				return nil, fmt.Errorf("language too large")
			}
			set = next
		}
		return set, nil
	}
	return nil, fmt.Errorf("unsupported construct %s (the stem pattern must be a finite set of suffixes)", re)
}

var (
	periodRe = regexp.MustCompile(`period (\d+) to (\d+)`)
	needRe   = regexp.MustCompile(`need = max\((\d+), (\d+)p\)`)
)

func cycleParams(rule string) (CycleParams, error) {
	pm := periodRe.FindStringSubmatch(rule)
	nm := needRe.FindStringSubmatch(rule)
	if pm == nil || nm == nil {
		return CycleParams{}, fmt.Errorf("the rule text must state 'period P to Q' and 'need = max(F, Rp)'; the cycle detector reads its parameters from them")
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	c := CycleParams{MinPeriod: atoi(pm[1]), MaxPeriod: atoi(pm[2]), NeedFloor: atoi(nm[1]), Repeats: atoi(nm[2])}
	if c.MinPeriod < 1 || c.MaxPeriod < c.MinPeriod || c.Repeats < 1 {
		return CycleParams{}, fmt.Errorf("implausible cycle parameters %+v", c)
	}
	return c, nil
}
