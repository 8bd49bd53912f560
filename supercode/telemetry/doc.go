// Package telemetry is what laserkit says to an OpenTelemetry collector,
// short of saying it: whether a run exports and where (Configure: the
// standard OTLP variables, LASERBRAIN_OTEL, the project policy), the
// record of an ended run that is exported (Record), and the names laserkit
// gives what the pinned semantic conventions leave unnamed (the
// laserbrain.* attributes and events).
//
// It links no OpenTelemetry code, so laserbrain and the gate, which start
// on every hook, do not either: the spans are made and sent by
// laserbrain-otel (supercode/telemetry/otlp), a process laserbrain run
// starts when the agent has ended, outside any confinement. A hook neither
// waits on nor fails because of telemetry.
package telemetry
