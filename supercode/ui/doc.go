// Package ui is the person's live view of a fleet: a web server on the
// loopback interface serving one self-contained page that shows every
// agent run and ponder session of a repository as it changes — who works,
// who waits for a person, who drifts, who was halted or refused — and
// takes the person's three acts: releasing a halt, answering an
// escalation, authorizing one exact action once.
//
// The page is drawn on the server from the fleet report's view model and
// SVG renderers (supercode/report, internal/htmlreport) and kept current
// by Server-Sent Events: a change of the stores (the kernel's file
// notifications on the local store, a cheap version query under
// PostgreSQL) reloads the view, and each open page is sent the parts
// whose markup changed.
//
// Nobody but the person who started the server may read or act: it
// prints a one-time link carrying a random token, kept in memory only;
// the first browser to open it gets a session cookie, and every request
// needs that session, the right Host, and for an act the page's own
// anti-forgery token and the server's Origin. Each act is journaled as
// the person's, as the command-line acts are (supercode/supervise).
package ui
