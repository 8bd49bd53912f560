// Command screenshot loads a page in headless Chromium with the network
// off (internal/browsertest) and writes a PNG of the first screen: an HTML
// file, or a live page a server on this machine serves (laserbrain ui's
// one-time link), once a -ready expression holds. It fails if the page
// asked for anything but itself or complained on the console. `make
// report-example` and `make ui-example` use it for the README's pictures.
//
//	go run ./scripts/screenshot [-width 1000] [-height 1300] PAGE.html OUT.png
//	go run ./scripts/screenshot -ready JS http://127.0.0.1:PORT/?launch=… OUT.png
package main
