// Command laserbrain is laserkit's front end for agents at work: drift
// checks, agent runs under supervision (run, the hooks, the MCP server),
// the supervisor over a repository's agents and ponder sessions, the
// verified fixpoint loop, the operator gate, reports, the stores, the
// grammar and the parity vectors. Thin cobra commands over the packages.
package main
