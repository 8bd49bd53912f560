// Package browsertest loads a page in a real headless Chromium (Debian's
// chromium package) through the DevTools protocol (chromedp) with the
// network off, and reports what the page did: every request it made, every
// console message, log entry and exception, which elements are laid out
// visibly, and a screenshot. Tests use it to check that a report is
// self-contained; `make report-example` uses it for the README's screenshot.
package browsertest
