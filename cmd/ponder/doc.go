// Command ponder is the deliberation engine's front end: agents drive a
// codebase audit through it one command at a time.
package main
