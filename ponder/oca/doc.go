// Package oca is ponder's optional memory in the Oneiro Cognitive
// Architecture's PostgreSQL database (the OCA bridge).
//
// The Bridge (modes auto|on|off, the memoised probe, oca.log) never panics
// and never fails a command under auto: every operation returns nil on any
// failure and logs one line. The database side is the Backend interface; its
// PostgreSQL implementation lives in ponder/oca/pgstore.
package oca
