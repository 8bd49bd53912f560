package main

import (
	"github.com/laserkit/laserkit/ponder/oca"
	"github.com/laserkit/laserkit/ponder/oca/pgstore"
)

// connector opens the OCA store the bridge talks to: PostgreSQL through pgx.
var connector oca.Connector = pgstore.Open
