// Package harness builds and runs repo-native harnesses: it profiles a
// repository (Profile), classifies the risks the profile shows
// (Classify), compares them with the harness the repository already has
// (MakePlan), writes template kits as reviewable files (Write), runs the
// manifest's gates and eval suites as evidence (Run), calibrates model
// judges before they may block (Calibrate), retains lessons from the
// evidence (Retain), recalls the memories a plan touches (Recall; the
// memories themselves live in harness/memory.jsonl, package memory, not
// in the store) and notices when the repository and its harness drift
// apart (Drift).
//
// Ownership is the package's main invariant. Tracked files are the
// contract, the local store holds derived evidence, and a file the tool
// did not write is never staged, moved, rewritten or deleted by it:
// untracked files are recorded as observations with ownership
// observed_only, and Write refuses to replace any file that the
// manifest does not list as its own with the content it wrote.
//
// Everything the package reads from git it reads with read-only
// commands and GIT_OPTIONAL_LOCKS=0, so even the stat cache of the index
// is left alone.
package harness
