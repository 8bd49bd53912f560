package oca

import "github.com/laserkit/laserkit/internal/pgdsn"

// DefaultDSN is where the bridge looks for OCA when PONDER_OCA_DSN is unset.
const DefaultDSN = "postgres://localhost/oneiro"

// MaskDSN hides the password of a connection string (pgdsn.Mask).
func MaskDSN(dsn string) string { return pgdsn.Mask(dsn) }

// scrub makes an error message safe and loggable (pgdsn.Scrub).
func scrub(msg, dsn string) string { return pgdsn.Scrub(msg, dsn) }
