package supervise

import (
	"context"
	"fmt"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// Budget is what the whole fleet may spend, as its agents' clients
// recorded it (zero fields: no limit).
type Budget struct {
	MaxTokens  int64
	MaxCostUSD float64
}

// CauseBudget is the cause of a halt put because the fleet's budget was
// spent.
const CauseBudget = "budget"

func (b Budget) set() bool { return b.MaxTokens > 0 || b.MaxCostUSD > 0 }

// spent says why the fleet's usage u is past b, "" when it is not.
func (b Budget) spent(u fleet.Usage) string {
	switch {
	case b.MaxTokens > 0 && u.Total() > b.MaxTokens:
		return fmt.Sprintf("the fleet's --max-tokens %d reached: its agents spent %s", b.MaxTokens, u.Text())
	case b.MaxCostUSD > 0 && u.Cost() > b.MaxCostUSD:
		return fmt.Sprintf("the fleet's --max-cost %s reached: its agents spent %s", fleet.USD(b.MaxCostUSD), u.Text())
	}
	return ""
}

// fleetUsage adds up what every agent run of the fleet spent, ended runs
// included.
func (s *Supervisor) fleetUsage() fleet.Usage {
	var total fleet.Usage
	for _, name := range s.names() {
		if a := s.agents[name]; a.kind == KindRun {
			if u, ok := s.o.Usage(a.run); ok {
				total.Add(u)
			}
		}
	}
	return total
}

// holdBudget halts every live agent once the fleet has spent its budget,
// with the figures: the gate refuses their next tool call.
func (s *Supervisor) holdBudget(ctx context.Context, r *Round, live func(string) bool, inForce map[string]fleet.Halt) error {
	if !s.o.Budget.set() || s.o.Usage == nil {
		return nil
	}
	why := s.o.Budget.spent(s.fleetUsage())
	if why == "" {
		return nil
	}
	for _, name := range s.names() {
		if !live(name) {
			continue
		}
		h, err := s.halt(ctx, name, why+" — halted until the budget is raised", "supervisor", CauseBudget, nil, inForce)
		if err != nil {
			return err
		}
		r.Halts = append(r.Halts, h)
	}
	return nil
}
