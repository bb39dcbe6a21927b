// Package codegen turns a workflow candidate into the artifacts a reviewer
// reads: the Starlark source of a reviewable, runnable workflow
// (workflow.star) and an eval-pack v1 manifest (TOML). SKILL.md is package
// skill's. How each step is called (candidate.StepCall), what it needs
// (candidate.StepCapabilities) and how text is held on one line
// (candidate.OneLine) are package candidate's, which this package and
// skill both follow, so a skill describes each step as the workflow
// calls it without depending on code generation.
//
// A generated file holds a header of comments (provenance, capabilities,
// secrets, confidence, findings) and exactly one function whose first
// parameter is ctx, the host object the runtime passes in; the remaining
// parameters are the candidate's. Each step becomes a call on ctx:
// ctx.tool for deterministic steps, ctx.exec for deterministic steps with
// an argv template (a shell command the traces ran), ctx.model for model
// calls and fuzzy segments, ctx.approve for approval boundaries,
// ctx.request_decision for an approval step whose options the traces show
// (a person chose one of them), and ctx.secret for credentials, which are
// never literals.
//
// ctx.exec("go get", ["go", "get", "{module}@{version}"], module = …,
// version = …) takes the step's name and keyword arguments exactly as
// ctx.tool would, so a run records the action its source traces recorded,
// with the template, written out as a list literal, between them. The
// header's capabilities line declares exec:<program> for every such step,
// which the runtime requires declared and granted before it runs the
// program.
//
// A file mutation mined from an agent's edits is a call of the runtime's
// built-in fs.write (path, content) or fs.edit (path, old, new, or a list
// of edits), which needs no binding. Its text, when a constant of several
// printable lines, is written as a triple-quoted block of those lines, so
// a reviewer reads the file the step writes (textBlock); any other string
// keeps the one-line literal.
//
// The invariant is that every workflow this package writes passes Check: it
// parses, every name resolves against Predeclared and the Starlark
// universe, and it defines the one function the runtime calls. Text that
// came from traces (names, keys, string values, messages) is untrusted:
// string values are escaped into literals, names pass through
// candidate.Identifier, keys that are not identifiers are passed as
// **{"key": …}, and comments are reduced to one printable line, so no
// input can break out of a literal or a comment. Output is deterministic:
// the same candidate and options give the same bytes. Every eval pack it
// writes parses with ParseEvalPack.
//
// Equivalent is Check's companion for workflows this package did not
// write: it proves that a rewritten workflow (a model's refinement) is the
// generated one with names and comments changed, and nothing else.
package codegen
