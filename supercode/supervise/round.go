package supervise

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Round is one round's report: `laserbrain supervise --json` prints one
// per round, with exactly these keys.
type Round struct {
	Round        int64                  `json:"round"`
	Agents       []AgentRow             `json:"agents"`
	Collisions   []CollisionRow         `json:"collisions"`
	FleetCatches []supercode.FleetCatch `json:"fleet_catches"`
	Route        []supercode.Route      `json:"route"`
	// Halts and Escalations are this round's decisions (the agents' rows
	// show every halt in force).
	Halts       []HaltRow       `json:"halts"`
	Escalations []EscalationRow `json:"escalations"`
	Self        SelfRow         `json:"self"`
}

// AgentRow is one agent as the supervisor reads it.
type AgentRow struct {
	Agent string `json:"agent"`
	Kind  string `json:"kind"` // ponder | run
	// Ground is what it is measured against: the session's subject (and
	// lens), the run's first goal.
	Ground string `json:"ground"`
	Steps  int    `json:"steps"`
	// Verdict, Phi and Drifting are the last verdict's (nil before one).
	Verdict  *string  `json:"verdict"`
	Phi      *float64 `json:"phi"`
	Drifting bool     `json:"drifting"`
	// Distance and Progress are the last spelled state's (for a ponder
	// session, read from its ledger).
	Distance *int     `json:"distance"`
	Progress string   `json:"progress,omitempty"`
	Catches  []string `json:"catches"`
	// Advice is delivered to a drifting agent: its own verdict's advice,
	// or a person's answer to its escalation.
	Advice string `json:"advice,omitempty"`
	Files  int    `json:"files"`
	// Status is active, waiting (for a person: its client's notification
	// said so, and nothing happened since), finished, halted, or damaged
	// (a ponder ledger ponder refuses to read).
	Status string  `json:"status"`
	Halt   *string `json:"halt,omitempty"`
	// Waiting is what a waiting agent waits for: its client's kind of
	// notification and its message.
	Waiting *fleet.Wait `json:"waiting,omitempty"`
	Error   string      `json:"error,omitempty"`
	// Coverage is an agent run's tool calls and checks as its hooks
	// recorded them (absent for a ponder session, whose passes are its
	// checks). An unmeasured run — tool calls and no check since its
	// ground — has verdict "unmeasured" and no Φ, whatever its ground read.
	Coverage *coverage.Figures `json:"coverage,omitempty"`
	// SharesFilesWith is every other running agent whose footprint
	// overlaps this one's at least SharedFilesMin while their grounds do
	// not collide: a possible collision, a signal for a person, never a
	// verdict or a decision.
	SharesFilesWith []FileShare `json:"shares_files_with"`
	// Losses counts the calls of an agent run that deleted or overwrote
	// more of its work tree than the project policy lets go unreported,
	// LastLoss says the latest (with the command that undoes it).
	Losses   int    `json:"losses,omitempty"`
	LastLoss string `json:"last_loss,omitempty"`
}

// FileShare is one agent whose files overlap another's.
type FileShare struct {
	Agent       string   `json:"agent"`
	SharedFiles []string `json:"shared_files"`
	// FileOverlap is the Jaccard overlap of the two footprints.
	FileOverlap float64 `json:"file_overlap"`
}

// SharedFilesMin is the footprint overlap (Jaccard) at which two running
// agents whose grounds do not collide are reported as sharing files: half
// of all the files either touched, touched by both.
const SharedFilesMin = 0.5

// Agent statuses.
const (
	StatusActive   = "active"
	StatusWaiting  = "waiting"
	StatusFinished = "finished"
	StatusHalted   = "halted"
	StatusDamaged  = "damaged"
)

// CollisionRow is two agents on one ground, with the files both touched
// beside it: evidence, never the verdict.
type CollisionRow struct {
	Agents  [2]string `json:"agents"`
	Overlap float64   `json:"overlap"`
	// Grounds are what was compared: a session's subject, an agent run's
	// ground (supercode.Collide).
	Grounds [2]string `json:"grounds"`
	// Lenses are the two sessions' lenses, reported beside the subjects
	// they were compared apart from ("" for none, and for an agent run).
	Lenses      [2]string `json:"lenses"`
	SharedFiles []string  `json:"shared_files"`
	// FileOverlap is the Jaccard overlap of the two footprints.
	FileOverlap float64 `json:"file_overlap"`
}

// HaltRow is a halt this round put.
type HaltRow struct {
	ID     string           `json:"id"`
	Agent  string           `json:"agent"`
	Reason string           `json:"reason"`
	By     string           `json:"by"`
	Route  *supercode.Route `json:"route,omitempty"`
}

// EscalationRow is a question this round sent up, and its answer.
type EscalationRow struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Who         string `json:"who"`
	Why         string `json:"why"`
	Asked       bool   `json:"asked"` // an --on-escalate command ran
	Exit        *int   `json:"exit"`
	Decision    string `json:"decision,omitempty"`
	Error       string `json:"error,omitempty"`
	Halted      string `json:"halted,omitempty"`
	Redelivered bool   `json:"redelivered,omitempty"`
	// Undelivered: the command did not exit 0, so the question was not
	// answered and is asked again next round.
	Undelivered bool `json:"undelivered,omitempty"`
}

// SelfRow is the supervisor's own check: its goal at a distance of how many
// agents drift.
type SelfRow struct {
	Reason     string  `json:"reason"`
	Phi        float64 `json:"phi"`
	Drifting   bool    `json:"drifting"`
	Laserscore *string `json:"laserscore"`
}

func (s *Supervisor) row(name string, findings map[string]supercode.Finding, inForce map[string]fleet.Halt) AgentRow {
	a := s.agents[name]
	row := AgentRow{Agent: name, Kind: a.kind, Ground: a.ground, Catches: []string{}, Files: len(a.files), Distance: a.distance,
		Progress: a.progress, Status: StatusActive, Error: a.damaged, SharesFilesWith: []FileShare{}}
	if v, ok := s.sc.View(name); ok {
		row.Steps = v.Steps
		if v.Last != nil {
			reason, phi := v.Last.Reason, v.Last.Phi
			row.Verdict, row.Phi, row.Drifting = &reason, &phi, v.Last.Drifting
		}
	}
	if f, ok := findings[name]; ok {
		row.Catches = f.Catches
	}
	if n := len(a.losses); n > 0 {
		row.Losses, row.LastLoss = n, a.losses[n-1]
	}
	if a.kind == KindRun {
		f := a.cov.Figures()
		row.Coverage = &f
		if f.Unmeasured {
			v := coverage.Unmeasured
			row.Verdict, row.Phi, row.Drifting = &v, nil, false
		}
	}
	if row.Drifting {
		row.Advice = a.advice
		if a.decision != "" {
			row.Advice = a.decision
		}
	}
	switch h, halted := inForce[name]; {
	case halted:
		row.Status = StatusHalted
		reason := h.Reason
		row.Halt = &reason
	case a.damaged != "":
		row.Status = StatusDamaged
	case a.finished:
		row.Status = StatusFinished
	case a.waiting != nil:
		row.Status = StatusWaiting
	}
	if a.waiting != nil && !a.finished {
		row.Waiting = fleet.WaitOf(*a.waiting)
	}
	return row
}

// CatchUnmeasured is the fleet catch of the agent runs that work without
// being measured: tool calls and no check since their ground.
const CatchUnmeasured = coverage.Unmeasured

// unmeasuredCatch is the round's unmeasured catch, when any running agent
// is unmeasured.
func unmeasuredCatch(rows []AgentRow) (supercode.FleetCatch, bool) {
	c := supercode.FleetCatch{Signature: CatchUnmeasured, Subject: "coverage", Agents: []string{}}
	var parts []string
	for _, a := range rows {
		if a.Coverage == nil || !a.Coverage.Unmeasured || a.Status == StatusFinished {
			continue
		}
		c.Agents = append(c.Agents, a.Agent)
		parts = append(parts, fmt.Sprintf("%s (%s)", a.Agent, text.Plural(a.Coverage.SinceGround, "tool call")))
	}
	if len(c.Agents) == 0 {
		return c, false
	}
	c.Detail = "working with no check since the ground: " + strings.Join(parts, ", ")
	return c, true
}

// CatchLoss is the fleet catch of the agent runs whose calls deleted or
// overwrote more of their work trees than the project policy lets go
// unreported (laserbrain undo takes each back).
const CatchLoss = "loss"

// lossCatch is the round's loss catch, when any running agent lost work.
func lossCatch(rows []AgentRow) (supercode.FleetCatch, bool) {
	c := supercode.FleetCatch{Signature: CatchLoss, Subject: "undo", Agents: []string{}}
	var parts []string
	for _, a := range rows {
		if a.Losses == 0 || a.Status == StatusFinished {
			continue
		}
		c.Agents = append(c.Agents, a.Agent)
		parts = append(parts, fmt.Sprintf("%s (%s; the latest: %s)", a.Agent, text.Plural(a.Losses, "lossy call"), a.LastLoss))
	}
	if len(c.Agents) == 0 {
		return c, false
	}
	c.Detail = "calls that deleted or overwrote more than the project policy lets go unreported: " + strings.Join(parts, ", ")
	return c, true
}

// journalRound records the round when its readings changed since the last
// journaled round, or it decided anything: the agents whose line (steps,
// last verdict, status, advice, files, catches) changed and the collisions
// that began or ended — not the whole fleet each time —, the route's
// digest, the halts and questions it decided and the self-check.
// journaled reports whether it did.
func (s *Supervisor) journalRound(ctx context.Context, r *Round) (journaled bool, err error) {
	data := roundData{Agents: []agentLine{}, Standing: len(r.Collisions), Halts: []string{}, Escalations: []string{}, Self: r.Self.Reason}
	for _, a := range r.Agents {
		line := agentLine{Agent: a.Agent, Steps: a.Steps, Verdict: a.Verdict, Drifting: a.Drifting, Status: a.Status, Advice: a.Advice, Files: a.Files, Catches: a.Catches}
		if last, ok := s.fold.Agents[a.Agent]; ok && last.same(line) {
			data.Unchanged++
			continue
		}
		data.Agents = append(data.Agents, line)
	}
	now := make(collisionSet, len(r.Collisions))
	for _, c := range r.Collisions {
		now[pairKey(c.Agents[0], c.Agents[1])] = true
	}
	data.Began, data.Ended = s.fold.Collisions.diff(now)
	for _, h := range r.Halts {
		data.Halts = append(data.Halts, h.ID)
	}
	for _, e := range r.Escalations {
		data.Escalations = append(data.Escalations, e.ID)
	}
	route, _ := json.Marshal(r.Route)
	sum := sha256.Sum256(route)
	data.RouteDigest = hex.EncodeToString(sum[:8])
	// An empty journal gets its first round whatever it saw: once the
	// fleet's round counter says a round ran, the journal has a record.
	if s.fold.Seen > 0 && len(data.Agents) == 0 && len(data.Began)+len(data.Ended) == 0 && data.RouteDigest == s.fold.Route && len(data.Halts) == 0 && len(data.Escalations) == 0 {
		return false, nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return false, err
	}
	text := fmt.Sprintf("%s (%d changed), %s, %s, %s; self %s", text.Plural(len(r.Agents), "agent"), len(data.Agents), text.Plural(len(r.Collisions), "collision"), text.Plural(len(r.Halts), "halt"), text.Plural(len(r.Escalations), "escalation"), r.Self.Reason)
	_, err = s.journal(ctx, fleet.JournalRecord{At: fleet.JournalTime(s.now()), Fleet: s.fleet, Kind: fleet.JournalRound,
		Round: r.Round, Text: text, Data: b})
	return err == nil, err
}

// WriteText writes the round for a person: a head line, one line per
// agent, then the collisions with their shared files, the route, the fleet
// catches, the halts and the questions. What agents wrote (names, grounds,
// advice) is printed with control characters escaped (ponder.Printable).
func (r *Round) WriteText(w io.Writer) error {
	var l textLines
	l.add("round %d · %s · %s · self: %s Φ=%.2f", r.Round, text.Plural(len(r.Agents), "agent"), text.Plural(len(r.Collisions), "collision"), r.Self.Reason, r.Self.Phi)
	r.agentLines(&l)
	r.pairLines(&l)
	r.actionLines(&l)
	var b strings.Builder
	for _, line := range l {
		b.WriteString(ponder.Printable(line))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// textLines are the lines of a text report, each added as fmt formats it.
type textLines []string

func (l *textLines) add(format string, a ...any) { *l = append(*l, fmt.Sprintf(format, a...)) }

// agentLines is the table of agents, each with its notes below it.
func (r *Round) agentLines(l *textLines) {
	width := len("AGENT")
	for _, a := range r.Agents {
		width = max(width, utf8.RuneCountInString(a.Agent))
	}
	width = min(width, 60)
	if len(r.Agents) > 0 {
		l.add("  %s  %-8s %5s  %-22s %5s %3s %8s  %s", pad("AGENT", width), "STATUS", "STEPS", "VERDICT", "Φ", "D", "COVERAGE", "CATCHES")
	}
	for _, a := range r.Agents {
		verdict, phi, d, catches, cov := "-", "-", "-", "-", "-"
		if c := a.Coverage; c != nil && c.ToolCalls+c.Checks > 0 {
			cov = fmt.Sprintf("%.0f%%", c.Coverage*100)
		}
		if a.Verdict != nil {
			verdict = *a.Verdict
		}
		if a.Phi != nil {
			phi = fmt.Sprintf("%.2f", *a.Phi)
		}
		if a.Distance != nil {
			d = fmt.Sprint(*a.Distance)
		}
		if len(a.Catches) > 0 {
			catches = strings.Join(a.Catches, ", ")
		}
		l.add("  %s  %-8s %5d  %-22s %5s %3s %8s  %s", pad(text.Clip(a.Agent, width), width), a.Status, a.Steps, verdict, phi, d, cov, catches)
		if c := a.Coverage; c != nil && c.Unmeasured {
			l.add("      unmeasured: %s since the ground and no check", text.Plural(c.SinceGround, "tool call"))
		}
		if a.Losses > 0 {
			l.add("      loss: %s", a.LastLoss)
		}
		if a.Advice != "" {
			l.add("      advice: %s", a.Advice)
		}
		if a.Halt != nil {
			l.add("      halted: %s", *a.Halt)
		}
		if a.Waiting != nil {
			l.add("      waiting for a person (%s): %s", a.Waiting.Kind, a.Waiting.Message)
		}
		if a.Error != "" {
			l.add("      ledger: %s", a.Error)
		}
	}
}

// pairLines are the collisions and the pairs that only share files.
func (r *Round) pairLines(l *textLines) {
	for _, c := range r.Collisions {
		lenses := ""
		if c.Lenses[0] != "" || c.Lenses[1] != "" {
			lenses = fmt.Sprintf(", lenses %s / %s", lensName(c.Lenses[0]), lensName(c.Lenses[1]))
		}
		l.add("  collision  %s + %s  same ground (overlap %.2f%s); %s%s", c.Agents[0], c.Agents[1], c.Overlap, lenses, text.Plural(len(c.SharedFiles), "shared file"), fileList(c.SharedFiles))
	}
	for _, a := range r.Agents {
		for _, fs := range a.SharesFilesWith {
			if a.Agent < fs.Agent { // each pair once
				l.add("  shares     %s + %s  %s (file overlap %.2f)%s — a possible collision: the grounds differ", a.Agent, fs.Agent,
					text.Plural(len(fs.SharedFiles), "shared file"), fs.FileOverlap, fileList(fs.SharedFiles))
			}
		}
	}
}

// actionLines are what the round did: the route, the fleet's catches, the
// halts and the questions.
func (r *Round) actionLines(l *textLines) {
	for _, rt := range r.Route {
		if rt.Yield != "" {
			l.add("  route      %s yields to %s: %s", rt.Yield, rt.Keep, rt.Why)
		} else {
			l.add("  route      %s + %s: %s", rt.Agents[0], rt.Agents[1], rt.Why)
		}
	}
	for _, f := range r.FleetCatches {
		l.add("  catch      %s %s · %s", f.Signature, f.Subject, strings.Join(f.Agents, ", "))
	}
	for _, h := range r.Halts {
		l.add("  halt       %s: %s (release: %s)", h.Agent, h.Reason, fleet.ReleaseCommand(h.Agent))
	}
	for _, e := range r.Escalations {
		outcome := " (nobody to ask: pass --on-escalate)"
		switch {
		case e.Exit != nil:
			outcome = fmt.Sprintf(" (asked; exit %d)", *e.Exit)
		case e.Asked:
			outcome = " (asked; " + e.Error + ")"
		}
		if e.Undelivered {
			outcome += "; not delivered, asked again next round"
		}
		if e.Halted != "" {
			outcome += "; halted " + e.Halted
		}
		l.add("  escalate   %s: %s%s", e.Who, e.Why, outcome)
	}
}

// lensName is a session's lens as the text report shows it.
func lensName(l string) string {
	if l == "" {
		return "none"
	}
	return l
}

// fileList is ": a, b, c" with at most five named.
func fileList(files []string) string {
	n := len(files)
	if n == 0 {
		return ""
	}
	shown, more := files, ""
	if n > 5 {
		shown, more = shown[:5], fmt.Sprintf(", … %d more", n-5)
	}
	return ": " + strings.Join(shown, ", ") + more
}

func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}
