package report

import (
	"context"
	"encoding/json"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/supervise"
)

// fromSupervisor reads what laserbrain supervise decided for a fleet: its
// halts and their releases (the fleet store), its escalations with the
// exit status of the command that asked (the journal), and whether the
// journal's hash chain verifies.
func fromSupervisor(ctx context.Context, st fleet.Store, fleetID string) ([]Halt, []Escalation, Journal, error) {
	halts := []Halt{}
	all, err := st.ListHalts(ctx, fleetID)
	if err != nil {
		return nil, nil, Journal{}, err
	}
	for _, h := range all {
		row := Halt{Agent: h.Agent, Reason: h.Reason, At: h.At}
		if h.Released != nil {
			row.Released, row.ReleaseReason = h.Released.At, h.Released.Reason
		}
		halts = append(halts, row)
	}
	recs, gone, err := fleet.ReadJournal(ctx, st, fleetID)
	if err != nil {
		return nil, nil, Journal{}, err
	}
	head, err := st.JournalHead(ctx, fleetID)
	if err != nil {
		return nil, nil, Journal{}, err
	}
	j := Journal{State: JournalVerified, Records: len(recs)}
	if len(recs) == 0 {
		j = Journal{State: JournalUnavailable, Problem: "no supervisor has journaled this fleet yet (laserbrain supervise)"}
	}
	if _, p := fleet.VerifyJournal(recs, head); p != nil {
		j = Journal{State: JournalBroken, Records: len(recs), FirstBad: p.Index, Problem: p.Kind + ": " + p.Detail}
	} else if gone != nil {
		j = Journal{State: JournalBroken, Records: len(recs), FirstBad: int(fleet.JournalFrom(recs)) - 1, Problem: gone.Error()}
	}
	escs := []Escalation{}
	exits := map[string]*int{}
	asked := map[string]time.Time{}
	for _, r := range recs {
		var d struct {
			ID   string `json:"id"`
			Exit *int   `json:"exit"`
		}
		if json.Unmarshal(r.Data, &d) != nil || d.ID == "" {
			continue
		}
		switch r.Kind {
		case fleet.JournalEscalation:
			if _, seen := asked[d.ID]; !seen {
				asked[d.ID], _ = time.Parse("2006-01-02T15:04:05.000Z", r.At)
			}
		case fleet.JournalAnswer:
			if d.Exit != nil {
				exits[d.ID] = d.Exit
			}
		}
	}
	for _, q := range supervise.QuestionsIn(recs) {
		agents := q.Agents
		if agents == nil {
			agents = []string{}
		}
		escs = append(escs, Escalation{ID: q.ID, Kind: q.Kind, At: asked[q.ID], Who: q.Who, Agents: agents, Why: q.Why, Question: q.Question,
			ExitStatus: exits[q.ID], Answered: q.Answered, Decision: q.Decision, By: q.By})
	}
	return halts, escs, j, nil
}

// attachHalts gives each agent its latest halt (the supervisor's names are
// the report's): the agent row and its timeline say whether it is halted.
func attachHalts(agents []Agent, halts []Halt) {
	for i := range agents {
		a := &agents[i]
		for j := range halts {
			if h := halts[j]; h.Agent == a.Name && (a.Halt == nil || h.At.After(a.Halt.At)) {
				a.Halt = &h
			}
		}
	}
}
