// Package session reads and writes session logs: the readable markdown
// record of one agent session (workflow sessions), and
// rebuilds from a log the context an agent needs to resume it.
//
// A session log is YAML frontmatter followed by a markdown body:
//
//	---
//	type: session
//	session_id: 2026-01-12-release-notes
//	started: 2026-01-12T09:00:00Z
//	status: paused
//	resume_point: phase-2
//	---
//
//	# Release notes for v1.4
//
//	## Gather changes @writer #docs
//
//	**Tool calls:**
//	- `git log v1.3..HEAD` → 41 commits
//
//	> [!decision]
//	> Group the notes by component.
//
// The body is a title ("# "), preamble blocks, then phases: each "## "
// heading opens a phase, named by the heading text without its trailing
// "@agent" and "#channel" words. Inside the preamble and the phases, the
// parser recognizes three kinds of block and keeps everything else, verbatim,
// as prose:
//
//   - a "**Tool calls:**" paragraph followed by a bullet list whose items
//     read "`tool args` → result" ("- side effect: text" items attach a side
//     effect to the call before them, as crystallize run writes them);
//   - a callout: a block quote whose first line is "[!type]", optionally
//     followed by a fold marker and a title. The types the format defines are
//     subagent, decision, error, user, decision_needed, approval_required
//     and task_complete; other types are kept like the known ones.
//   - prose: any other markdown, kept as the source lines that hold it.
//
// # Round trips
//
// The invariant is that Parse and Write are inverse on session values:
// Parse(Write(s)) equals s for every s that Validate accepts, and Write
// (Parse(x)) is x itself when x is in canonical form. Canonical form is what
// Write produces: frontmatter keys in the order of [Meta] with unknown keys
// last, YAML indented by two spaces, exactly one blank line between blocks,
// ATX headings, "- " tool call items without blank lines between them, "> "
// before every callout line, and a final newline. A document that differs
// from canonical form only in those respects comes back normalized; the
// content of prose and callouts is never rewritten. YAML comments in the
// frontmatter are not kept.
//
// The parser takes the document's block structure from goldmark (CommonMark),
// so what counts as a heading, a list or a block quote is what a markdown
// renderer shows, and reads the text of each block from the source lines it
// spans, so nothing is lost to rendering.
//
// # Phase ids
//
// Every phase is a resumable checkpoint with an id derived from its name
// (see [Session.PhaseIDs]): the name lowercased, each run of characters other
// than letters and digits replaced by one "-", leading and trailing "-"
// trimmed ("Step 3 · shell" becomes "step-3-shell", a name without letters
// or digits becomes "phase"). When two phases would share an id, the later
// one gets the first free suffix "-2", "-3", … in document order. Ids depend
// only on names and on the phases before, so appending a phase never
// changes an existing id. A reference to a phase (resume_point, or
// --phase) is resolved by [Session.FindPhase]: the exact id, else
// "phase-N" for the Nth phase (the form the format uses), else the one phase
// whose id starts with the reference followed by "-" (the form
// crystallize run writes: "step-3" names "step-3-shell").
//
// # Errors
//
// Parse reports every problem it finds in a file, each as a
// [trace.Error] with the file name and 1-based line, in a
// [trace.ErrorList]; it never panics on any input. Write refuses values it
// could not write faithfully, with the same kind of list (paths such as
// phases[2].blocks[0] instead of lines).
package session
