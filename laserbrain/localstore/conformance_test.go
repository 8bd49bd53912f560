package localstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/storetest"
)

func TestMain(m *testing.M) {
	storetest.Child(func() (laserbrain.Store, error) {
		p, err := DefaultPaths()
		if err != nil {
			return nil, err
		}
		return Open(p)
	})
	os.Exit(m.Run())
}

type home string

func (h home) Open(t testing.TB) laserbrain.Store { return open(t, string(h)) }
func (h home) Env() []string                      { return []string{"LASERBRAIN_HOME=" + string(h)} }

// TestConformance runs the store suite on a home directory.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Place { return home(filepath.Join(t.TempDir(), "home")) })
}
