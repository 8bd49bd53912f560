package agentrun

import (
	"errors"
	"testing"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// remote is a Stores that says whether it holds a connection.
type remote struct{ connected bool }

func (r remote) Runs() (laserbrain.Store, error) { return nil, errors.New("none") }
func (r remote) Fleet() (fleet.Store, error)     { return nil, errors.New("none") }
func (r remote) Close() error                    { return nil }
func (r remote) Remote() bool                    { return r.connected }

// TestCloseMayWait: only local files close without a deadline; anything
// that may hold a connection, or does not say, is closed with one.
func TestCloseMayWait(t *testing.T) {
	t.Setenv("LASERBRAIN_HOME", t.TempDir())
	t.Setenv("LASERBRAIN_STORE", "")
	local := &Tracker{}
	if _, err := local.Fleet(); err != nil {
		t.Fatal(err)
	}
	if _, err := local.Runs(); err != nil {
		t.Fatal(err)
	}
	custom := &Tracker{Stores: StoreFuncs{Fleet: func() (fleet.Store, error) { return fleet.OpenLocal(t.TempDir()) }}.Open}
	if _, err := custom.Fleet(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sup  *Tracker
		want bool
	}{
		{"nothing opened", &Tracker{}, false},
		{"the local files", local, false},
		{"a backend with no connection", &Tracker{stores: remote{false}}, false},
		{"a backend holding connections", &Tracker{stores: remote{true}}, true},
		{"stores that do not say", &Tracker{stores: struct{ Stores }{remote{false}}}, true},
		{"a fleet store of the caller's", custom, true},
	} {
		if got := c.sup.CloseMayWait(); got != c.want {
			t.Errorf("%s: CloseMayWait %v, want %v", c.name, got, c.want)
		}
	}
	if err := local.Close(); err != nil {
		t.Fatal(err)
	}
}
