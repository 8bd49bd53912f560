// Package ledger is ponder's append-only ledger.jsonl: the record format,
// the JSON Schema that a submitted delta batch must satisfy, batch appends
// (one write, one fsync), and reading that checks the file whole — seq
// chain and complete batches — telling a torn tail (repairable) from
// corruption.
package ledger
