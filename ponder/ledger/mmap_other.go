//go:build !linux

package ledger

import (
	"errors"
	"os"
)

func mapFile(f *os.File, size int) ([]byte, error) { return nil, errors.ErrUnsupported }
