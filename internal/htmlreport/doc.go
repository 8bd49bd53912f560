// Package htmlreport renders self-contained HTML reports with server-side
// SVG plots: step and line timelines with threshold bands and event
// markers, horizontal count bars, a relationship panel, tables and small
// multiples. It knows nothing of laserbrain, ponder or the supervisor; their
// report packages build a Document from their own view models.
//
// What every page promises, so each report need not:
//   - one file, nothing fetched: inline CSS, inline SVG, no script, no font,
//     no image, no link to anything outside the page;
//   - every plot is an svg with role="img", a <title> and a <desc>, and a
//     text table with the same numbers beside it;
//   - colour never carries meaning alone: marks have shapes, fills have
//     patterns, lines have dashes, and every threshold and count is written;
//   - light and dark by prefers-color-scheme, readable printed and on a phone;
//   - long series are downsampled to min–max buckets, and the plot says so.
//
// The output is also well-formed XML (polyglot HTML), so tests can read it
// with encoding/xml (package htmltest) and check where values were drawn.
package htmlreport
