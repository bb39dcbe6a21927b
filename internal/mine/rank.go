package mine

// Ranking.
//
// Both miners rank what they find by Score, then by support, then by
// length, each descending, then by a fixed tie-break of their own; what
// is not a procedure (see shape.go) ranks after everything that is.
//
// A workflow saves its steps in every run it replaces, which is support ×
// length; but support is also the evidence that the sequence is a
// procedure at all. A sequence seen in two sessions may be one piece of
// work told twice (a resumed session, a subagent replaying its parent, a
// long exploration that happened to go the same way), while three steps
// seen in twelve sessions are what people do again and again. So support
// counts twice: git add → git commit → git push in 12 sessions (12²·3 =
// 432) ranks far above a six-step sequence seen in 2 (2²·6 = 24), and
// still below the same three steps with three more in 12 sessions. Support
// counts distinct sessions, never occurrences or traces: a sequence an
// agent repeats ten times in one session, or once in each of the traces
// a long session was split into, is no more a procedure than one it did
// once (support.go).

// Score is the rank of a repeated sequence of length steps found in
// support distinct sessions: support² × length.
func Score(support, length int) int64 {
	return int64(support) * int64(support) * int64(length)
}
