// Package supercode is the supervisor: it wraps agent runs and ponder
// sessions on one repository, scores their drift with laserbrain, reports two
// agents doing the same job, halts or escalates, passes their irreversible
// actions through the operator gate, and runs the verified fixpoint loop.
//
// It manages the work and never writes the reference: it may halt, inject an
// agent's own verdict and escalate, but never set or move an agent's ground.
package supercode
