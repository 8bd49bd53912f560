// Package ledger is ponder's append-only ledger.jsonl: the record format,
// the JSON Schema that a submitted delta batch must satisfy, batch appends
// (one write, one fsync, cut back if they fail), the hash chain that makes
// an edited, inserted, deleted or moved line evident (each record carries
// the SHA-256 of the line before it; the session anchors the end), reading
// that checks the file whole — seq, complete batches, chain, anchor — and
// tells a torn tail (repairable, in place) from corruption and tampering,
// and the stored form of file names that are not UTF-8.
package ledger
