// Package stepvalue is the generic values a workflow's steps take and
// return, as the runner, the tool executors and the model providers all
// handle them: Canonical JSON (sorted keys, no HTML escaping, the bytes
// encoding/json writes, written without reflection for the common
// values) and its Digest, which receipts and the journal compare; a
// program's output read as a value (ParseOutput); an argument as a
// command line takes it (ArgString); and text clipped to one line for the
// run's records (OneLine, Clip).
package stepvalue
