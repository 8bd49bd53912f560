package coverage

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/internal/envconfig"
	"github.com/laserkit/laserkit/laserbrain"
)

// Mode is how coverage is held.
type Mode string

const (
	// On is our default: one threshold, one cadence, the same for every
	// session (Default).
	On Mode = "on"
	// Off: nothing is counted, nothing refused.
	Off Mode = "off"
	// Reference is the Python reference's behaviour, arms and all
	// (Reference).
	Reference Mode = "reference"
)

// Config is how the engine holds a session to coverage.
type Config struct {
	Mode Mode
	// BlockAfter is how many steps may pass without a check before calls
	// that change something are refused (reads still pass, with a warning).
	BlockAfter int
	// HardMultiple: at BlockAfter × HardMultiple unchecked steps every call
	// is refused.
	HardMultiple int
	// Floor is the coverage (checks / steps) a session is held to once it
	// has MinSteps steps; 0 holds it to none. Below half the floor every
	// call is refused.
	Floor float64
	// NudgeEvery: after every NudgeEvery unchecked steps the model is
	// reminded; 0 never.
	NudgeEvery int
	// StopAfter: a Stop with at least this many unchecked steps is answered
	// (our mode: blocked once, so the agent checks before it ends; the
	// reference: a warning); 0 never.
	StopAfter int

	// The reference's probe (Reference mode only): ProbeShare percent of
	// sessions, by a hash of the id, run in the relaxed arm, which draws
	// its threshold per gap and lowers the floor — unless FloorSet (its
	// LASERBRAIN_MIN_COVERAGE was present), which keeps both.
	ProbeShare int
	FloorSet   bool
	// GateOff is the reference's escape door (its config/gate-off file
	// exists): the gate allows everything. Never set in our modes — an
	// agent must not be able to switch its own gate off.
	GateOff bool
}

// The reference's numbers (laserbrain-sdk 0.53.0, lb_gate and lb_coverage).
const (
	refBlockAfter        = 4
	refHardMultiple      = 2
	refFloor             = 0.20
	refRelaxedFloor      = 0.08
	refRelaxedBlockAfter = 12
	refProbeShare        = 50
	refNudgeAfter        = 8
	refMinSteps          = 8
)

// refGapDraws are the relaxed arm's per-gap thresholds.
var refGapDraws = [...]int{4, 6, 8, 12}

// MinSteps is how many steps a session has before its floor applies: the
// first few steps swing coverage wildly.
const MinSteps = refMinSteps

// Default is our configuration: a check is due every 5 steps — a reminder
// after 3 unchecked steps; once 5 have passed, calls that change something
// are refused (reads run, warned); once 10 have, every call is — the same
// numbers for every session, no floor beyond the cadence (a session that
// checks when asked is never refused for its ratio), and a Stop with 3 or
// more unchecked steps is held once for a final check.
func Default() Config {
	return Config{Mode: On, BlockAfter: 5, HardMultiple: 2, NudgeEvery: 3, StopAfter: 3}
}

// ReferenceConfig is the reference's configuration under its environment
// variables, read as it reads them: LASERBRAIN_PROBE_SHARE (int(), 50 when
// unreadable, clamped to 0–100; 0 turns the arms off) and
// LASERBRAIN_MIN_COVERAGE (float(), 0.20 when unreadable, clamped to 0–1;
// merely present, it also keeps the relaxed arm at the control's numbers).
func ReferenceConfig(lookup func(string) (string, bool)) Config {
	c := Config{Mode: Reference, BlockAfter: refBlockAfter, HardMultiple: refHardMultiple,
		Floor: refFloor, NudgeEvery: refNudgeAfter, StopAfter: refNudgeAfter, ProbeShare: refProbeShare}
	if s, ok := lookup("LASERBRAIN_PROBE_SHARE"); ok {
		if n, ok := pyInt(s); ok {
			c.ProbeShare = max(0, min(100, n))
		}
	}
	if s, ok := lookup("LASERBRAIN_MIN_COVERAGE"); ok {
		c.FloorSet = true
		if f, ok := laserbrain.PyFloatAny(s); ok {
			c.Floor = clamp01(f)
		}
	}
	return c
}

func clamp01(f float64) float64 {
	// Python's min(1.0, max(0.0, f)): nan is not > 0.0, so it reads 0.0.
	if math.IsNaN(f) || f < 0 {
		return 0
	}
	return min(1, f)
}

// pyInt is Python's int() of a string, held to 32 bits (larger than any
// clamp it meets: the sign decides).
func pyInt(s string) (int, bool) {
	n, ok := laserbrain.PyIntString(s)
	return max(math.MinInt32, min(math.MaxInt32, n)), ok
}

// Settings are the coverage fields of the project's policy file
// (.laserbrain/policy.json: coverage.mode, coverage.floor,
// coverage.block_after, coverage.nudge_every). A nil field keeps the
// mode's own value.
type Settings struct {
	Mode       string
	Floor      *float64
	BlockAfter *int
	NudgeEvery *int
}

// The environment variables a run sets for its agent's hooks (laserbrain
// run --coverage …): they override the policy file for that run.
const (
	ModeEnv       = "LASERBRAIN_COVERAGE"
	FloorEnv      = "LASERBRAIN_COVERAGE_FLOOR"
	BlockAfterEnv = "LASERBRAIN_COVERAGE_BLOCK_AFTER"
	NudgeEveryEnv = "LASERBRAIN_COVERAGE_NUDGE_EVERY"
)

// Configure is the configuration a hook runs under: the run's variables
// (ModeEnv and the others) over the project's settings over the default.
// The mode is, first that applies: $LASERBRAIN_COVERAGE; the policy's
// coverage.mode; "reference" when the reference's own variables
// (LASERBRAIN_PROBE_SHARE, LASERBRAIN_MIN_COVERAGE) are set; "on". Reference
// mode takes its numbers from the reference's variables only. A value that
// cannot be used is an error naming it (envconfig.Error); nothing falls
// back silently.
func Configure(s Settings, lookup func(string) (string, bool)) (Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	mode, where := s.Mode, "coverage.mode %q"
	if v, ok := lookup(ModeEnv); ok && v != "" {
		mode, where = v, ModeEnv+"=%s"
	}
	if mode == "" {
		_, share := lookup("LASERBRAIN_PROBE_SHARE")
		_, floor := lookup("LASERBRAIN_MIN_COVERAGE")
		if share || floor {
			mode = string(Reference)
		}
	}
	switch Mode(mode) {
	case "", On:
	case Off:
		return Config{Mode: Off}, nil
	case Reference:
		return ReferenceConfig(lookup), nil
	default:
		return Config{}, envconfig.Errorf(where+": want on, off or reference", mode)
	}
	c := Default()
	if s.Floor != nil {
		c.Floor = *s.Floor
	}
	if s.BlockAfter != nil {
		c.BlockAfter = *s.BlockAfter
	}
	if s.NudgeEvery != nil {
		c.NudgeEvery = *s.NudgeEvery
	}
	if err := c.validate("coverage.floor", "coverage.block_after", "coverage.nudge_every", "%s %v"); err != nil {
		return Config{}, err
	}
	if v, ok := lookup(FloorEnv); ok && v != "" {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return Config{}, envconfig.Errorf("%s=%s: want a number from 0 to 1", FloorEnv, v)
		}
		c.Floor = f
	}
	for _, e := range []struct {
		name string
		dst  *int
	}{{BlockAfterEnv, &c.BlockAfter}, {NudgeEveryEnv, &c.NudgeEvery}} {
		if v, ok := lookup(e.name); ok && v != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return Config{}, envconfig.Errorf("%s=%s: want a whole number of steps", e.name, v)
			}
			*e.dst = n
		}
	}
	if err := c.validate(FloorEnv, BlockAfterEnv, NudgeEveryEnv, "%s=%v"); err != nil {
		return Config{}, err
	}
	c.StopAfter = c.NudgeEvery
	if c.StopAfter == 0 {
		c.StopAfter = c.BlockAfter
	}
	return c, nil
}

// validate names the setting (by the names given, in format) whose value
// cannot be used.
func (c Config) validate(floor, blockAfter, nudgeEvery, format string) error {
	switch {
	case math.IsNaN(c.Floor) || c.Floor < 0 || c.Floor > 1:
		return envconfig.Errorf(format+": want a number from 0 to 1", floor, c.Floor)
	case c.BlockAfter < 1:
		return envconfig.Errorf(format+": want at least 1 step", blockAfter, c.BlockAfter)
	case c.NudgeEvery < 0:
		return envconfig.Errorf(format+": want 0 (never) or more steps", nudgeEvery, c.NudgeEvery)
	}
	return nil
}

// String says the configuration in a line, for a run's summary.
func (c Config) String() string {
	switch c.Mode {
	case Off:
		return "coverage off"
	case Reference:
		return fmt.Sprintf("coverage as the reference holds it (floor %s, probe share %d%%)", pct(c.Floor), c.ProbeShare)
	}
	s := fmt.Sprintf("a check every %d steps (a reminder after %d, every call refused after %d)", c.BlockAfter, c.NudgeEvery, c.BlockAfter*c.HardMultiple)
	if c.Floor > 0 {
		s += ", floor " + pct(c.Floor)
	}
	return s
}
