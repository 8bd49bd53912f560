// Package clitest holds the binaries to their help: every command's exit
// codes are the ones it documents (observed in the testscripts), every
// command has examples, the root's commands are grouped. Test-only.
package clitest
