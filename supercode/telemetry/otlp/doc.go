// Package otlp turns an agent run's record into OpenTelemetry spans and
// sends them to an OTLP/HTTP endpoint with the official Go SDK: the run as
// an invoke_agent span, each tool call as an execute_tool span beneath it,
// the gate's decision on a call as a guardrail event on the call, each
// drift check as an evaluation event on the run, the run's coverage and
// judgment on its span. It follows one pinned version of the semantic
// conventions (SemconvVersion, the GenAI constants of its Go package).
//
// Export is bounded: spans go through a bounded queue that drops rather
// than waits, and Close waits for delivery no longer than CloseDeadline,
// counting what did not arrive. Only laserbrain-otel links this package:
// the SDK and its exporter are heavy to start, and laserbrain and the gate
// start on every hook.
package otlp
