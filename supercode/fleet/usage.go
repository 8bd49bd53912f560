package fleet

import (
	"encoding/json"
	"fmt"
	"github.com/laserkit/laserkit/laserbrain"
	"strconv"
	"time"
)

// Usage is the model tokens an agent's client spent on a run, and their
// cost where the client reported one, as the client recorded them (its
// own telemetry's model requests, else its transcript's usage records).
type Usage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	// CacheRead and CacheWrite are the input tokens read from and written
	// to the provider's prompt cache, counted apart from Input.
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	// Requests counts the model requests the figures add up.
	Requests int `json:"requests"`
	// CostUSD is what the client itself reported the requests cost, in US
	// dollars; nil when it reported no cost (laserkit keeps no price
	// table: a cost is never estimated).
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// Total is every token the usage counts: input, output and cache.
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Cost is CostUSD, 0 when none was reported.
func (u Usage) Cost() float64 {
	if u.CostUSD == nil {
		return 0
	}
	return *u.CostUSD
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.Input += o.Input
	u.Output += o.Output
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
	u.Requests += o.Requests
	if o.CostUSD != nil {
		c := u.Cost() + *o.CostUSD
		u.CostUSD = &c
	}
}

// Text is the usage in words, with its parts (and its cost, when
// reported).
func (u Usage) Text() string {
	t := fmt.Sprintf("%d tokens (input %d, output %d, cache read %d, cache write %d) over %d model requests",
		u.Total(), u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Requests)
	if u.CostUSD != nil {
		t += " at " + USD(*u.CostUSD) + " (the client's own figure)"
	}
	return t
}

// USD is an amount of US dollars as laserkit writes it: $ and the amount
// to the micro-dollar, without trailing zeros ($0.00072, $1.5).
func USD(v float64) string {
	s := strconv.FormatFloat(v, 'f', 6, 64)
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return "$" + s
}

// ModelRequest is the Result of a KindModel event: one model request the
// agent's client reported through its own telemetry.
type ModelRequest struct {
	Client  string `json:"client"`
	Session string `json:"session,omitempty"`
	Model   string `json:"model,omitempty"`
	Usage
}

// ModelEvent is the run event that records req, made at at.
func ModelEvent(at time.Time, req ModelRequest) RunEvent {
	req.Requests = 1
	data, _ := json.Marshal(req)
	return RunEvent{At: at, Kind: KindModel, Name: req.Model, OK: laserbrain.OKOf(true), Session: req.Session, Text: req.Usage.Text(), Result: data}
}

// ModelUsage adds up the model requests among a run's events; ok is false
// when there are none.
func ModelUsage(events []RunEvent) (u Usage, ok bool) {
	for _, e := range events {
		if e.Kind != KindModel {
			continue
		}
		var req ModelRequest
		if json.Unmarshal(e.Result, &req) != nil {
			continue
		}
		req.Requests = 1
		u.Add(req.Usage)
		ok = true
	}
	return u, ok
}

// CallUsage is the tokens a tool call cost: the whole usage of the model
// response that asked for it, which it shares with the other calls that
// response asked for at once (Shared counts them all, itself included).
type CallUsage struct {
	Call   string `json:"call"`
	Shared int    `json:"shared"`
	Usage
}

// CallTokensEvent is the run event that records what tool call cu.Call
// cost, read from the client's own records once the agent ended; its id
// is the call's, so a run records it once.
func CallTokensEvent(at time.Time, session string, cu CallUsage) RunEvent {
	data, _ := json.Marshal(cu)
	return RunEvent{ID: "tokens:" + cu.Call, At: at, Kind: KindCallTokens, Name: cu.Call, OK: laserbrain.OKOf(true), Session: session,
		Text: cu.Usage.Text(), Result: data}
}

// CallTokens reads what each tool call cost from a run's events, by call
// id (none when its client's records said nothing of its calls).
func CallTokens(events []RunEvent) map[string]CallUsage {
	out := map[string]CallUsage{}
	for _, e := range events {
		if e.Kind != KindCallTokens {
			continue
		}
		var cu CallUsage
		if json.Unmarshal(e.Result, &cu) == nil && cu.Call != "" {
			out[cu.Call] = cu
		}
	}
	return out
}
