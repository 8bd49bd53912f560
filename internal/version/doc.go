// Package version says which build of laserkit a binary is: the module
// version (stamped by `make build` through -ldflags, else what the Go
// toolchain recorded), the commit, the Go release, and the grammar the
// binary's tables were generated from.
//
// It is linked into laserbrain-gate, whose start-up is paid on every tool
// call, so nothing here runs at package initialisation: the build
// information is read only when Get is called.
package version
