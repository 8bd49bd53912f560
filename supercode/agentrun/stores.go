package agentrun

import (
	"errors"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// StoreFuncs are stores opened by the caller's functions, each once, on
// first use, and closed with the Tracker: a nil one opens the local
// files' store, as a Tracker without Stores does. Its Open is a
// Tracker's Stores.
type StoreFuncs struct {
	Runs  func() (laserbrain.Store, error)
	Fleet func() (fleet.Store, error)
}

// Open is the stores f opens, nothing opened yet.
func (f StoreFuncs) Open() (Stores, error) { return &funcStores{f: f}, nil }

type funcStores struct {
	f StoreFuncs
	// local opens what f has no function for.
	local       Stores
	runs        laserbrain.Store
	fleet       fleet.Store
	openedByFun bool
}

func (s *funcStores) Runs() (laserbrain.Store, error) {
	return openOnce(s, s.f.Runs, &s.runs, Stores.Runs)
}

func (s *funcStores) Fleet() (fleet.Store, error) {
	return openOnce(s, s.f.Fleet, &s.fleet, Stores.Fleet)
}

// openOnce is the store open opens, opened on first use and kept in *kept;
// with no open function, the local files' store (local's).
func openOnce[T comparable](s *funcStores, open func() (T, error), kept *T, local func(Stores) (T, error)) (T, error) {
	var none T
	if open == nil {
		l, err := s.localOnes()
		if err != nil {
			return none, err
		}
		return local(l)
	}
	if *kept == none {
		st, err := open()
		if err != nil {
			return none, err
		}
		*kept, s.openedByFun = st, true
	}
	return *kept, nil
}

func (s *funcStores) localOnes() (Stores, error) {
	if s.local == nil {
		l, err := openLocalStores()
		if err != nil {
			return nil, err
		}
		s.local = l
	}
	return s.local, nil
}

// Remote: the caller's stores may hold a connection; the local files do
// not.
func (s *funcStores) Remote() bool { return s.openedByFun }

func (s *funcStores) Close() error {
	var errs []error
	if s.runs != nil {
		errs = append(errs, s.runs.Close())
		s.runs = nil
	}
	if s.fleet != nil {
		errs = append(errs, s.fleet.Close())
		s.fleet = nil
	}
	if s.local != nil {
		errs = append(errs, s.local.Close())
		s.local = nil
	}
	return errors.Join(errs...)
}

// Shared is s's stores for another Tracker (replaying what s's hook
// queued, say): opened through s, and left open by the other's Close, as
// s closes them.
func (s *Tracker) Shared() func() (Stores, error) {
	return func() (Stores, error) { return sharedStores{s}, nil }
}

type sharedStores struct{ s *Tracker }

func (h sharedStores) Runs() (laserbrain.Store, error) { return h.s.Runs() }
func (h sharedStores) Fleet() (fleet.Store, error)     { return h.s.Fleet() }
func (h sharedStores) Close() error                    { return nil }
func (h sharedStores) Remote() bool                    { return false }
