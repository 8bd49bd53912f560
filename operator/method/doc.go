// Package method reads workflow methods (spec_version 1: a goal and ordered
// steps, each with a goal and whether it is irreversible or outward) and
// lints them against the grammar's dictionary: step verbs, declared versus
// default reversibility, and the shape rules over the phase sequence. Lint is
// advisory; it never changes a method. The ten methods laserbrain ships are
// embedded from methods/.
package method
