// Package source imports traces: it finds the trace files under a
// directory, recognizes the format of each document with a registry of
// adapters, and converts every document into a normalized trace.Trace.
//
// Three document formats are read, tried in this order: the
// crystallization trace format (a document with "actions"), which package
// trace decodes; the persisted workflow run record (a document with
// "stages" or "_type": "workflow_run"), whose stages, tool recordings and
// human-in-the-loop questions become the trace's actions; and the governed
// code-mode composition report (a document with "run" and "calls"), whose
// child binding calls become the actions (CompositionTrace). A
// release-harness fixture directory is imported whole by
// LoadReleaseHarness.
//
// Agents' own logs are read by session adapters (SessionAdapter), which see
// a whole file at once because many records make one session: Claude Code
// project logs, Codex CLI rollouts, Gemini CLI stream-json transcripts and
// chat files, and OTLP/JSON exports of OpenTelemetry GenAI spans and of
// the log events of Claude Code, Codex and Gemini CLI. A file is given to
// the session adapter that recognizes one of its first records (agents
// start their logs with bookkeeping records of types that come and go).
// Each tool call becomes actions through package normalize,
// so every agent's calls arrive in one vocabulary; a model's turn is not
// an action, and its usage is attributed to the calls it produced. A
// session without a tool call is listed in Result.SkippedSessions with its
// reason, never an error.
//
// One event is counted once: a record or a call an agent wrote twice is
// read once, and a session that repeats another's calls (a compaction or
// side question replaying its conversation, a forked rollout, an older
// copy of a log) is dropped or cut to its own calls (copies.go); a
// session written to several files that share no call (a Gemini CLI chat
// that started over) is a trace per file, the later ones its parts. What a
// load passes over without an error (records of unknown types, files of
// an agent's home that are not session logs, copies, empty files) is
// listed in Result.Notes, so that nothing is passed over in silence.
//
// The main invariant: Load either returns traces that are all valid,
// normalized, uniquely identified and in a deterministic order (sorted by
// path, then by line), or, unless asked to skip them, an error listing
// every bad file and line of the load, so that a user fixes a directory in
// one round. Nothing the input contains (oversized files or JSON Lines
// records, symlinks out of the directory, malformed JSON) can make Load
// read outside the directory, exhaust memory, or panic.
//
// Memory is bounded per document, not per file: a *.json file is read whole
// and must fit Options.MaxFileBytes, while a *.jsonl file is read as a
// stream and only each of its lines must; its records are decoded in
// parallel, in chunks, so that a corpus kept in one multi-gigabyte file
// loads like a directory of files.
package source
