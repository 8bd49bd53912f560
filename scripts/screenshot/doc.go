// Command screenshot loads an HTML file in headless Chromium with the
// network off (internal/browsertest) and writes a PNG of the first screen.
// It fails if the page asked for anything but itself or complained on the
// console. `make report-example` uses it for the README's picture.
//
//	go run ./scripts/screenshot [-width 1000] [-height 1300] PAGE.html OUT.png
package main
