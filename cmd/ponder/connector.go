package main

import "github.com/laserkit/laserkit/ponder/oca"

// connector opens the OCA store. Until the PostgreSQL store is wired in,
// the bridge reports every probe as "this build has no OCA store".
var connector oca.Connector
