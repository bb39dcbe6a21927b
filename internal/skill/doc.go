// Package skill owns SKILL.md, the Agent Skills projection of a workflow
// candidate: Render writes it, the replay gate (ShadowGate, gate.json)
// decides whether it may ship, and Check validates a SKILL.md, generated
// or hand-written, with its gate. Every writer of a skill (bundle.Write,
// pipeline.Induce) goes through them.
//
// Inducing skills from traces (mining, shadow replay, then this
// package's gate) is a stage of package pipeline, which writes bundles
// and so sits above bundle and this package: pipeline.Induce.
package skill
