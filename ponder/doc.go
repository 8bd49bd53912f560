// Package ponder is the deliberation engine for codebase audits: a coverage
// gate nothing can talk its way around, four voices bound to four ledger
// operations, and convergence certified by epistemic silence. State lives
// under .ponder/<slug>/; the OCA memory in PostgreSQL is optional (package
// oca). SPEC.md is the user-facing reference.
package ponder
