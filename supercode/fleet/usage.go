package fleet

import "fmt"

// Usage is the model tokens an agent's client spent on a run, as the
// client recorded them (its transcript's usage records).
type Usage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	// CacheRead and CacheWrite are the input tokens read from and written
	// to the provider's prompt cache, counted apart from Input.
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	// Requests counts the model requests the figures add up.
	Requests int `json:"requests"`
}

// Total is every token the usage counts: input, output and cache.
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.Input += o.Input
	u.Output += o.Output
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
	u.Requests += o.Requests
}

// Text is the usage in words, with its parts.
func (u Usage) Text() string {
	return fmt.Sprintf("%d tokens (input %d, output %d, cache read %d, cache write %d) over %d model requests",
		u.Total(), u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Requests)
}
