// Package thirdparty holds nothing to import: its subdirectories are
// upstream modules carried with a small patch (each one's PATCH.md says
// what and why), wired in by a replace in go.mod. The test here fails when
// a copy drifts from its upstream release by anything but its patch.
package thirdparty
