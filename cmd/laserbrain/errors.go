package main

import (
	"errors"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// storeError maps a store's error: something named that does not exist is
// a usage mistake (exit 2, with how to find what does), anything else a
// failure (exit 8).
func storeError(err error, hint string) error {
	if errors.Is(err, fleet.ErrNotFound) || errors.Is(err, laserbrain.ErrNoRun) {
		if hint != "" {
			return cli.Usagef("%v (%s)", err, hint)
		}
		return cli.Usagef("%v", err)
	}
	return cli.Failure(err)
}
