// Package bundle writes, reads, validates, approves and re-checks portable
// crystallization-candidate bundles: a directory holding the manifest
// (candidate.json, schema "harn.crystallization.candidate.bundle" version 1),
// the generated workflow (workflow.star), the redacted mining report
// (report.json), the eval pack (harn.eval.toml), the skill
// (skill/<name>/SKILL.md and gate.json, only when its replay gate accepts)
// and one redacted trace per source example and held-out trace
// (fixtures/<trace id>.json).
//
// The invariants:
//
//   - Nothing in a bundle carries a private payload. Every fixture and
//     report.json pass through redact.Value before they are written, and
//     the manifest, skill and eval pack are built from the redacted report,
//     not from the caller's. Provenance paths (where a trace or the report
//     was read from) are made relative or cut to their base name. Validate
//     does not trust the manifest's "redacted": true: it scans every file
//     with redact.Scan.
//   - A bundle directory is either complete or absent. Write builds the
//     bundle in a temporary directory beside its target, writes the
//     manifest last, syncs it, and renames the directory into place
//     (atomicfile.ReplaceDir); an existing bundle is replaced only once
//     the new one is complete, and put back if the swap fails. An interrupted
//     write leaves at most a hidden temporary directory without a manifest,
//     which never validates.
//   - Every claim the manifest makes can be checked against the files:
//     paths stay inside the bundle (no "..", absolute or drive paths, no
//     symlinks anywhere), fixture hashes match, the workflow hash matches,
//     and an approval holds only for the workflow bytes it was given for.
//   - Promotion needs a recorded human decision. Options.Approver names the
//     person expected to approve; only Approve records an approval, and
//     only an approval of the current candidate id and workflow sha256
//     makes a candidate ready.
//   - Whether a bundle may run for real is decided in one place, Ready,
//     from what Validate finds: the status is recomputed from the
//     evidence, the approval history and the workflow bytes on disk, and
//     any validation problem refuses. The stored status is a record for
//     readers, never an input to that decision.
//
// # Promotion status
//
// promotion.criteria.status is "blocked" when any of these holds, each
// listed in criteria.reasons with its stable code:
//
//   - no_candidate: the bundle holds no selected candidate;
//   - candidate_rejected: the candidate has rejection reasons;
//   - shadow_missing / shadow_failed: shadow comparison did not run, or did
//     not pass;
//   - heldout_required: no held-out trace was compared (none given, or
//     none contains the procedure);
//   - heldout_failed: held-out traces were compared but none passed;
//   - receipt_drift: the replay oracle found a divergence on some trace
//     (promotion.divergence_history is not empty; a rejected bundle lists
//     the divergences of the report's rejected candidates);
//   - insufficient_examples: fewer examples than min_examples;
//   - low_confidence: confidence below min_confidence.
//
// Otherwise it is "needs_approval" (reason approval_required, or
// approval_rejected when the latest decision for the current workflow is a
// rejection) until approval_history holds, as its latest record for the
// candidate id and the current workflow sha256, a decision "approved":
// then it is "ready" with no reasons.
//
// # Kind and risk
//
// Promote gives every candidate of a report the same promotion verdict,
// without the bundle's metadata, so report.json says it of each.
//
// kind is "rejected" when there is no candidate or it has rejection
// reasons, "plan_only" when every side effect of the candidate stays in the
// tool's own data plane (side effect kinds receipt, receipt_write,
// event_log, plan, plan_stash and tenant_event_log, or a target
// tenant_event_log or event_log; a candidate without side effects
// qualifies), and "candidate" otherwise.
//
// risk_level is "low" for plan_only (and for a rejected bundle with no
// side effects); "high" when an external side effect has a write-class
// capability (a capability or mutation naming write, publish, push,
// delete, deploy, release or admin) and the candidate also needs secrets
// or has fuzzy steps; "medium" otherwise.
package bundle
