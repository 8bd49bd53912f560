package coverage

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/grammar"
)

// The claim gate: an agent may not edit a path another agent has claimed
// on the link (the reference's waves: claim, wave_open, wave_close, done).
// Reads are never held on claims; only a write whose target a claim
// covers.

// Claim is a path claimed on the link by an agent other than the caller.
type Claim struct {
	Path  string
	Agent string
}

// Claims are the standing claims of every agent but me, in the order the
// reference finds them. rows are the link's lines; if one is not JSON the
// link is unreadable and holds no claims (as the reference reads it), and
// a line that is not an object is passed over.
//
// With a wave open (the last wave_open's wave, while some claimant of it
// has not closed, or none has claimed yet) the claims are that wave's — a
// claim row of the wave, or with no wave written after it opened — by
// agents who have not closed. Otherwise every agent's last claim with
// paths stands until the agent releases (wave_close; done with
// release_claims, release, event wave_close or paths []; a claim with
// release_claims or release).
func Claims(rows []json.RawMessage, me string) []Claim {
	me = strings.ToLower(me)
	if me == "" {
		me = "unknown"
	}
	var rs []grammar.Value
	for _, raw := range rows {
		if len(strings.TrimSpace(string(raw))) == 0 {
			continue
		}
		v, err := grammar.Parse(raw)
		if err != nil {
			return nil
		}
		if v.Kind == grammar.Object {
			rs = append(rs, v)
		}
	}
	if claims, open := waveClaims(rs, me); open {
		return claims
	}
	return standingClaims(rs, me)
}

func isKind(r grammar.Value, k string) bool {
	v := get(r, "kind")
	return v.Kind == grammar.String && v.Str == k
}

func payloadOf(r grammar.Value) grammar.Value {
	return firstTruthy(get(r, "payload"), grammar.Value{Kind: grammar.Object})
}

// waveClaims are the claims of the wave the last wave_open opened, by
// agents other than me who have not closed it; open is false when no wave
// is open.
func waveClaims(rs []grammar.Value, me string) (claims []Claim, open bool) {
	out := &orderedClaims{}
	lastOpen := -1
	for i, r := range rs {
		if isKind(r, "wave_open") {
			lastOpen = i
		}
	}
	if lastOpen < 0 {
		return nil, false
	}
	wid := get(get(rs[lastOpen], "payload"), "wave")
	openIdx := -1
	for i, r := range rs {
		if isKind(r, "wave_open") && pyEqual(get(payloadOf(r), "wave"), wid) {
			openIdx = i
		}
	}
	var claimants []string
	var closed []grammar.Value
	for _, r := range rs {
		if isKind(r, "claim") && pyEqual(get(payloadOf(r), "wave"), wid) {
			if a := entryAgent(r); a != "unknown" && !slices.Contains(claimants, a) {
				claimants = append(claimants, a)
			}
		}
		if isKind(r, "wave_close") && pyEqual(get(get(r, "payload"), "wave"), wid) {
			who := firstTruthy(get(payloadOf(r), "on_behalf_of"), grammar.Value{Kind: grammar.String, Str: entryAgent(r)})
			closed = append(closed, who)
		}
	}
	isClosed := func(a string) bool {
		for _, c := range closed {
			if c.Kind == grammar.String && c.Str == a {
				return true
			}
		}
		return false
	}
	open = len(claimants) == 0
	for _, a := range claimants {
		if !isClosed(a) {
			open = true
		}
	}
	if open {
		for i, r := range rs {
			if !isKind(r, "claim") {
				continue
			}
			cw := get(payloadOf(r), "wave")
			if cw.Kind != grammar.Null && !pyEqual(cw, wid) {
				continue
			}
			if cw.Kind == grammar.Null && i < openIdx {
				continue
			}
			who := entryAgent(r)
			if who == me || isClosed(who) || who == "unknown" {
				continue
			}
			for _, p := range claimPaths(r) {
				out.put(p, who)
			}
		}
		return out.list, true
	}
	return nil, false
}

// standingClaims are each agent's last claim with paths (but mine), until
// the agent releases.
func standingClaims(rs []grammar.Value, me string) []Claim {
	out := &orderedClaims{}
	type standing struct {
		who   string
		paths []string
	}
	var active []standing
	drop := func(who string) {
		for i, s := range active {
			if s.who == who {
				active = append(active[:i], active[i+1:]...)
				return
			}
		}
	}
	for _, r := range rs {
		who := entryAgent(r)
		if who == "unknown" {
			continue
		}
		if releases(r) {
			drop(who)
			continue
		}
		if !isKind(r, "claim") {
			continue
		}
		paths := claimPaths(r)
		if len(paths) == 0 {
			continue
		}
		replaced := false
		for i := range active {
			if active[i].who == who {
				active[i].paths, replaced = dedupe(paths), true
			}
		}
		if !replaced {
			active = append(active, standing{who, dedupe(paths)})
		}
	}
	for _, s := range active {
		if s.who == me {
			continue
		}
		for _, p := range s.paths {
			out.put(p, s.who)
		}
	}
	return out.list
}

// orderedClaims is a dict of path → agent: a path claimed again keeps its
// place and takes the later agent.
type orderedClaims struct{ list []Claim }

func (o *orderedClaims) put(path, who string) {
	for i := range o.list {
		if o.list[i].Path == path {
			o.list[i].Agent = who
			return
		}
	}
	o.list = append(o.list, Claim{Path: path, Agent: who})
}

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// entryAgent is who wrote a link row: from, else agent, else payload.from,
// lowercased; "unknown" when none says.
func entryAgent(r grammar.Value) string {
	who := firstTruthy(get(r, "from"), get(r, "agent"), get(firstTruthy(get(r, "payload"), grammar.Value{Kind: grammar.Object}), "from"))
	if !truthy(who) {
		return "unknown"
	}
	return strings.ToLower(str(who))
}

// claimPaths are the paths a claim row locks: payload.paths, else the
// path-looking strings of payload.claims.
func claimPaths(r grammar.Value) []string {
	p := firstTruthy(get(r, "payload"), grammar.Value{Kind: grammar.Object})
	var paths []grammar.Value
	switch ps := get(p, "paths"); ps.Kind {
	case grammar.Array:
		paths = ps.Items
	case grammar.String: // list() of a string: its characters
		for _, c := range ps.Str {
			paths = append(paths, grammar.Value{Kind: grammar.String, Str: string(c)})
		}
	case grammar.Object:
		for _, m := range ps.Members {
			paths = append(paths, grammar.Value{Kind: grammar.String, Str: m.Key})
		}
	}
	if len(paths) == 0 {
		if cs := get(p, "claims"); cs.Kind == grammar.Array {
			for _, c := range cs.Items {
				if c.Kind != grammar.String {
					continue
				}
				s := pyStrip(c.Str)
				if strings.Contains(s, "/") || hasAnySuffix(s, ".py", ".ts", ".tsx", ".js", ".mjs", ".md", ".json") {
					paths = append(paths, grammar.Value{Kind: grammar.String, Str: s})
				}
			}
		}
	}
	var out []string
	for _, x := range paths {
		if x.Kind == grammar.String && pyStrip(x.Str) != "" {
			out = append(out, x.Str)
		}
	}
	return out
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// releases: the row lifts its author's standing claims.
func releases(r grammar.Value) bool {
	k := get(r, "kind")
	if k.Kind != grammar.String {
		return false
	}
	p := firstTruthy(get(r, "payload"), grammar.Value{Kind: grammar.Object})
	switch k.Str {
	case "wave_close":
		return true
	case "done":
		if truthy(get(p, "release_claims")) || truthy(get(p, "release")) {
			return true
		}
		if ev := get(p, "event"); ev.Kind == grammar.String && ev.Str == "wave_close" {
			return true
		}
		ps, ok := p.Get("paths")
		return ok && ps.Kind == grammar.Array && len(ps.Items) == 0
	case "claim":
		return truthy(get(p, "release_claims")) || truthy(get(p, "release"))
	}
	return false
}

// claimOn is the first claim covering target: equal, either a glob of the
// other, one a directory of the other — or the claim's text inside the
// target's, so a repository-relative claim covers an absolute path.
func claimOn(target string, claims []Claim) (Claim, bool) {
	for _, c := range claims {
		if touches(target, c.Path) || strings.Contains(target, strings.TrimRight(c.Path, "/")) {
			return c, true
		}
	}
	return Claim{}, false
}

func touches(target, claim string) bool {
	t, c := strings.TrimRight(target, "/"), strings.TrimRight(claim, "/")
	if t == "" || c == "" {
		return false
	}
	if t == c || fnmatch(t, c) || fnmatch(c, t) {
		return true
	}
	return strings.HasPrefix(t+"/", c+"/") || strings.HasPrefix(c+"/", t+"/")
}

// fnmatch is Python's fnmatch.fnmatch on POSIX: the whole name against a
// shell pattern where * and ? match any character, "/" included, and
// [seq] / [!seq] a set.
func fnmatch(name, pat string) bool {
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := i + 1
			if j < len(rs) && rs[j] == '!' {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				b.WriteString(`\[`)
				continue
			}
			set := string(rs[i+1 : j])
			i = j
			neg := strings.HasPrefix(set, "!")
			if neg {
				set = set[1:]
			}
			if set == "" {
				if neg {
					b.WriteString(".")
				} else {
					b.WriteString(`[^\x00-\x{10FFFF}]`)
				}
				continue
			}
			b.WriteByte('[')
			if neg {
				b.WriteByte('^')
			}
			for _, r := range set {
				if r == '\\' || r == '[' || r == ']' || r == '^' {
					b.WriteByte('\\')
				}
				b.WriteRune(r)
			}
			b.WriteByte(']')
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(name)
}
