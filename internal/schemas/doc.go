// Package schemas compiles the JSON Schemas (draft 2020-12) the code
// embeds — the grammar's, ponder's delta batches', the loop's verdicts',
// the operator pack's — the one way: Lazy compiles a schema on first use,
// so a process that never validates (a hook) pays nothing for it.
package schemas
