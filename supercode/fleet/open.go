package fleet

import (
	"errors"
	"io/fs"
	"os"
)

// Open opens the fleet store this environment names: today the local files
// under DefaultDir (PostgreSQL, LASERBRAIN_STORE=postgres://…, arrives with
// issue 16 behind the same Store).
func Open() (Store, error) {
	dir, err := DefaultDir()
	if err != nil {
		return nil, err
	}
	return OpenLocal(dir)
}

// OpenExisting is Open for a reader that must not create a store where
// there is none (ponder asking whether a session is halted): ok is false
// when nothing was ever stored.
func OpenExisting() (st Store, ok bool, err error) {
	dir, err := DefaultDir()
	if err != nil {
		return nil, false, err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	st, err = OpenLocal(dir)
	return st, err == nil, err
}
