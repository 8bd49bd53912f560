// Package htmltest reads a page htmlreport wrote back into a tree, for
// tests that check what was drawn where: which plots exist, which marks sit
// at which coordinates, what the tables say. It relies on the page being
// well-formed XML, which is itself part of what it checks.
package htmltest
