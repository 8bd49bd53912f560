// Package verdict is the loop judge's structured answer: the JSON Schema
// (verdict.schema.json, the one source of truth), its validation with
// santhosh-tekuri/jsonschema/v5, the markdown rendering the loop prints, and
// the call directory through which a Claude Code judge's `verdict` and
// `escalate` MCP tools hand their answers to the loop.
//
// A verdict is malformed when it breaks the schema, including its two rules
// on meaning: an insufficient verdict needs at least one blocker or required
// finding (it is a work order), and a sufficient one carries suggestions
// only. The schema is compiled on first use, never at package init: the
// same binary serves the pre-tool-use hook, whose start-up time matters.
package verdict
