// Package testhome keeps a test binary's laserbrain state out of the
// user's. A hook a test answers, a halt it reads or a fleet it opens
// without naming a home would otherwise write under the user's config
// directory (machine.json, hook-errors.log, runs), or read what is there.
package testhome
