package pipeline

import "github.com/crystallize-dev/crystallize/internal/store"

// StoreStatsSummary is what the trace store holds, the object
// "crystallize store stats --json" prints: the store's path, its counts
// (store.TraceStats, inlined), and the warning of a store that could not
// be written.
type StoreStatsSummary struct {
	Store string `json:"store"`
	*store.TraceStats
	// Warnings holds the warning of a read-only store; absent otherwise.
	Warnings []string `json:"warnings,omitempty"`
}

// StoreGCSummary is what a garbage collection of the trace store
// removed, the object "crystallize store gc --json" prints: the store's
// path and store.TraceGC, inlined.
type StoreGCSummary struct {
	Store string `json:"store"`
	*store.TraceGC
}

// StoreExportSummary is an export of the trace store into a directory
// (Export), the object "crystallize store export --json" prints.
type StoreExportSummary struct {
	Store  string `json:"store"`
	Out    string `json:"out"`
	Traces int    `json:"traces"`
	Bytes  int64  `json:"bytes"`
}
