package synth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// Model answers a prompt. The command adapts the runtime's model
// providers ([models.*] in crystallize.toml) to it; tests use a fake.
type Model interface {
	Complete(ctx context.Context, key, prompt string) (*Answer, error)
}

// Answer is a model's answer and what it cost.
type Answer struct {
	Text         string
	Model        string
	InputTokens  int64
	OutputTokens int64
}

// ModelCall is the provenance of one model call: enough to tell which
// model said what to which prompt, without keeping either text in the
// manifest (the synthesized code itself is kept, as a file).
type ModelCall struct {
	Step           string `json:"step"`
	Key            string `json:"key"`
	Model          string `json:"model"`
	PromptSHA256   string `json:"prompt_sha256"`
	ResponseSHA256 string `json:"response_sha256"`
	InputTokens    int64  `json:"input_tokens"`
	OutputTokens   int64  `json:"output_tokens"`
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

var fence = regexp.MustCompile("(?s)```[A-Za-z0-9_+-]*[ \t]*\n(.*?)```")

// FirstCodeBlock returns the first fenced code block of a model's answer,
// the contract every synthesis prompt states.
func FirstCodeBlock(text string) (string, bool) {
	m := fence.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// SynthesisPrompt is the prompt of bounded synthesis: the author's
// request followed by the bounds the answer must respect, written from
// the claim and spec so that the contract is the same on every call.
func SynthesisPrompt(claim Claim, spec Spec, code Code) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(code.Prompt))
	b.WriteString("\n\nClaim: ")
	b.WriteString(claim.Text)
	ep := code.Entrypoint
	if ep == "" {
		ep = DefaultEntrypoint
	}
	fmt.Fprintf(&b, "\n\nAnswer with one fenced code block of Starlark (Python syntax; no recursion, classes, exceptions or import statements) defining `def %s(data):`, which returns a dict mapping metric names to numbers, strings or booleans.", ep)
	if len(spec.AllowedImports) == 0 {
		b.WriteString(" Do not use load().")
	} else {
		fmt.Fprintf(&b, " You may load only these modules, with load(\"name\", \"symbol\"): %s.", strings.Join(spec.AllowedImports, ", "))
	}
	for _, p := range spec.Properties {
		fmt.Fprintf(&b, "\nIt must satisfy property %s: metric %q unchanged (tolerance %g) under transform %s.", p.Name, p.Metric, p.tolerance(), p.TransformName())
	}
	b.WriteString("\n")
	return b.String()
}

// synthesize asks the model for code and records the call.
func synthesize(ctx context.Context, m Model, claim Claim, spec Spec, code Code) (string, ModelCall, error) {
	prompt := SynthesisPrompt(claim, spec, code)
	call := ModelCall{Step: "bounded_synthesis", Key: code.Model, PromptSHA256: sha(prompt)}
	if m == nil {
		return "", call, fmt.Errorf("code.model %q: no model configured", code.Model)
	}
	ans, err := m.Complete(ctx, code.Model, prompt)
	if err != nil {
		return "", call, fmt.Errorf("bounded synthesis: %w", err)
	}
	call.Model, call.ResponseSHA256 = ans.Model, sha(ans.Text)
	call.InputTokens, call.OutputTokens = ans.InputTokens, ans.OutputTokens
	src, ok := FirstCodeBlock(ans.Text)
	if !ok {
		return "", call, fmt.Errorf("bounded synthesis: the model's answer has no fenced code block")
	}
	return src, call, nil
}

// SpecPrompt is the prompt of generate_spec: the author's request, the
// claim, and what a spec may contain.
func SpecPrompt(claim Claim, spec Spec) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(spec.Prompt))
	b.WriteString("\n\nClaim: ")
	b.WriteString(claim.Text)
	fmt.Fprintf(&b, "\n\nAnswer with one fenced code block of JSON: an object with \"allowed_imports\" (a subset of %s), \"properties\" (a list of objects with \"name\", \"transform\" (one of %s), \"metric\", and optionally \"tolerance\", \"expect\" (equal, scaled or shifted), \"factor\", \"offset\") and \"contracts\" (a list of strings). Nothing else.\n",
		strings.Join(ModuleNames(), ", "), strings.Join(Transforms, ", "))
	return b.String()
}

// generateSpec asks the model for a spec and decodes it strictly; the
// author's resources replace whatever the model proposed.
func generateSpec(ctx context.Context, m Model, claim Claim, spec Spec) (Spec, ModelCall, error) {
	prompt := SpecPrompt(claim, spec)
	call := ModelCall{Step: "generate_spec", Key: spec.Model, PromptSHA256: sha(prompt)}
	if m == nil {
		return spec, call, fmt.Errorf("spec.model %q: no model configured", spec.Model)
	}
	ans, err := m.Complete(ctx, spec.Model, prompt)
	if err != nil {
		return spec, call, fmt.Errorf("generating the spec: %w", err)
	}
	call.Model, call.ResponseSHA256 = ans.Model, sha(ans.Text)
	call.InputTokens, call.OutputTokens = ans.InputTokens, ans.OutputTokens
	text, ok := FirstCodeBlock(ans.Text)
	if !ok {
		text = ans.Text
	}
	got, err := DecodeSpec([]byte(text), "the model's spec")
	if err != nil {
		return spec, call, fmt.Errorf("generating the spec: %w", err)
	}
	got.Resources = spec.Resources
	return *got, call, nil
}
