package mine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/price"
	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// builder turns one repeated sequence, given as its examples, into a
// candidate. It reads the traces and never modifies them.
type builder struct {
	traces   []*trace.Trace
	eligible int
	// positions records each example's matched action indexes in the
	// report. The contiguous miner leaves it off: start_index says it all.
	positions bool
	// prices prices the tokens of actions whose cost has no dollars
	// (Options.prices: never nil).
	prices *price.Table
}

// match is one example of a candidate: the trace (an index into
// builder.traces), the index of the action each step matched, in step
// order, and how many failed attempts were folded into each step (nil when
// none were).
type match struct {
	seq     int32
	pos     []int32
	retries []int32
}

// contiguous returns the matches of a contiguous repeat of length steps.
func contiguous(examples []Occurrence, length int) []match {
	out := make([]match, len(examples))
	for e, occ := range examples {
		pos := make([]int32, length)
		for j := range pos {
			pos[j] = occ.Start + int32(j)
		}
		out[e] = match{seq: occ.Seq, pos: pos}
	}
	return out
}

// stepView is one candidate step seen across all examples: actions[e] is
// the action of example e.
type stepView struct {
	index   int // 1-based
	actions []*trace.Action
}

func (b *builder) build(examples []match, length int) *candidate.Candidate {
	c := &candidate.Candidate{
		Support:          len(examples),
		Score:            int(Score(len(examples), length)),
		Parameters:       []candidate.Parameter{},
		Constants:        []candidate.Constant{},
		Bindings:         []candidate.Binding{},
		Steps:            make([]candidate.Step, length),
		Examples:         make([]candidate.Example, len(examples)),
		ApprovalPoints:   []candidate.ApprovalPoint{},
		ExpectedOutputs:  []candidate.ExpectedOutput{},
		ExpectedReceipts: []any{},
		Warnings:         []candidate.Problem{},
		RejectionReasons: []candidate.Problem{},
	}
	exTraces := make([]*trace.Trace, len(examples))
	for e, m := range examples {
		t := b.traces[m.seq]
		exTraces[e] = t
		ids := make([]string, length)
		for j := range length {
			ids[j] = t.Actions[m.pos[j]].ID
		}
		c.Examples[e] = candidate.Example{
			TraceID: t.ID, Source: t.Source, SourceHash: t.SourceHash,
			StartIndex: int(m.pos[0]), ActionIDs: ids,
		}
		if b.positions {
			c.Examples[e].Positions = ints(m.pos)
		}
		if m.retries != nil {
			c.Examples[e].Retries = ints(m.retries)
		}
	}
	views := make([]stepView, length)
	for j := range length {
		v := stepView{index: j + 1, actions: make([]*trace.Action, len(examples))}
		for e, m := range examples {
			v.actions[e] = &b.traces[m.seq].Actions[m.pos[j]]
		}
		views[j] = v
		c.SequenceSignature = append(c.SequenceSignature, v.actions[0].Signature())
	}
	c.ID = candidateID(c.SequenceSignature, c.Examples)

	flow := newFlowIndex(len(examples))
	params := newParamTable()
	caps := map[string]bool{}
	secrets := map[string]bool{}
	agreeing, withOutput := 0, 0
	for j, v := range views {
		step := &c.Steps[j]
		first := v.actions[0]
		step.Index = v.index
		step.Kind = first.Kind
		step.Name = first.Name
		step.Segment = candidate.Deterministic
		step.Arguments = []candidate.Argument{}
		step.ParameterRefs = []string{}
		step.ReviewNotes = []string{}
		if note := retryNote(examples, j, v.index, first.Name, &step.Retries); note != "" {
			step.ReviewNotes = append(step.ReviewNotes, note)
		}
		// A matched action that failed is one no later attempt retried
		// (a retried one is never matched): noteFailures says so once
		// the candidate's examples are all known.
		for _, a := range v.actions {
			if a.Failed() {
				step.Failures++
			}
		}

		if fuzzy(v.actions) {
			step.Segment = candidate.Fuzzy
			note := fmt.Sprintf("step %d %s depends on a model or is marked fuzzy; it stays a model call and needs review", v.index, first.Name)
			step.ReviewNotes = append(step.ReviewNotes, note)
			c.Warnings = append(c.Warnings, candidate.Problem{Code: candidate.CodeFuzzySegment, Message: note, Step: v.index})
		}

		effects, problem := stepSideEffects(v)
		step.SideEffects = effects
		if problem != nil {
			c.RejectionReasons = append(c.RejectionReasons, *problem)
		}

		stepCaps := map[string]bool{}
		stepSecrets := map[string]bool{}
		for _, a := range v.actions {
			for _, cp := range a.Capabilities {
				stepCaps[cp] = true
			}
			for _, s := range a.RequiredSecrets {
				stepSecrets[s] = true
			}
		}

		approval, problem := stepApproval(v)
		step.Approval = approval
		step.Options = decisionOptions(v)
		if problem != nil {
			c.RejectionReasons = append(c.RejectionReasons, *problem)
		}
		if approval != nil {
			// candidate.ActionGate already names an unnamed boundary
			// after the action, which is the step.
			c.ApprovalPoints = append(c.ApprovalPoints, candidate.ApprovalPoint{
				Step: v.index, Boundary: approval.Boundary, Prompt: approval.Prompt, Required: approval.Required,
			})
		}

		// Arguments, key by key: parameters, which every example has
		// (they are part of the signature), and the inputs of a model
		// call that every example passed (candidate.ArgKeys).
		if dropped := candidate.DroppedInputs(v.actions); len(dropped) > 0 {
			step.ReviewNotes = append(step.ReviewNotes, fmt.Sprintf("step %d %s: inputs %s were passed in some examples only; the workflow does not pass them", v.index, first.Name, strings.Join(quoteAll(dropped), ", ")))
		}
		for _, key := range candidate.ArgKeys(v.actions) {
			values := make([]any, len(v.actions))
			canon := make([]string, len(v.actions))
			for e, a := range v.actions {
				values[e] = candidate.ActionArgs(a)[key]
				canon[e] = canonical(values[e])
			}
			srcPath := candidate.ParameterPath(v.index, key)
			arg := candidate.Argument{Key: key}
			switch {
			case redact.SensitiveKey(key) || anySecret(values):
				// A credential is never a literal and never a parameter
				// whose example values the report would print: a field
				// named like one, or whose value in any example looks like
				// one, is read at run time by its logical id.
				id := secretID(key)
				arg.Kind = candidate.ArgSecret
				arg.Secret = id
				stepSecrets[id] = true
				c.Warnings = append(c.Warnings, candidate.Problem{
					Code:    candidate.CodeSecretLiteral,
					Message: fmt.Sprintf("step %d field %q holds a credential; the workflow reads it as secret %s and no value is recorded", v.index, key, id),
					Step:    v.index, Path: srcPath,
				})
			case allEqual(canon):
				arg.Kind = candidate.ArgConstant
				arg.Value = values[0]
				c.Constants = append(c.Constants, candidate.Constant{Step: v.index, Path: "parameters." + key, Value: values[0]})
			default:
				if bnd, ok := flow.find(canon); ok {
					bnd.Step = v.index
					bnd.Path = "parameters." + key
					c.Bindings = append(c.Bindings, bnd)
					arg.Kind = candidate.ArgBinding
					arg.Binding = &bnd
					c.Steps[bnd.FromStep-1].ResultUsed = true
				} else {
					arg.Kind = candidate.ArgParameter
					arg.Parameter = params.use(key, srcPath, v.index, values, canon)
					step.ParameterRefs = appendUnique(step.ParameterRefs, arg.Parameter)
				}
			}
			step.Arguments = append(step.Arguments, arg)
		}
		if approval != nil {
			parts, varies, ok := promptTemplate(c.Steps[:j+1], views[:j+1])
			switch {
			case varies && ok:
				step.PromptTemplate = parts
			case varies:
				// No template reads every example's question: it is a
				// value the caller gives, as any other that varies.
				values := make([]any, len(v.actions))
				canon := make([]string, len(v.actions))
				for e, a := range v.actions {
					values[e] = ""
					if g := candidate.ActionGate(a); g != nil {
						values[e] = g.Prompt
					}
					canon[e] = canonical(values[e])
				}
				name := params.use("approval_prompt", fmt.Sprintf("steps[%d].approval.prompt", v.index), v.index, values, canon)
				step.PromptTemplate = []candidate.PromptPart{{Parameter: name}}
				step.ParameterRefs = appendUnique(step.ParameterRefs, name)
			}
		}
		if argv, problem := stepArgv(v, exTraces); problem != nil {
			// A shell command runs only from its template: no binding
			// stands for a command line, so without one the workflow
			// could not run the step. Another tool may still run
			// through a binding of the project's configuration.
			if shellStep(v) {
				problem.Message += "; a workflow could not run it"
				c.RejectionReasons = append(c.RejectionReasons, *problem)
			} else {
				problem.Message += "; the step has no argv template and runs only through a binding"
				c.Warnings = append(c.Warnings, *problem)
			}
		} else if argv != nil {
			step.Argv = argv
			stepCaps["exec:"+candidate.ArgvProgram(argv)] = true
		}
		step.Capabilities = sortedSet(stepCaps)
		step.RequiredSecrets = sortedSet(stepSecrets)
		for k := range stepCaps {
			caps[k] = true
		}
		for k := range stepSecrets {
			secrets[k] = true
		}
		step.Preconditions = preconditions(step)
		stepChecks(c, step, v, views)

		out, recorded, consistent := consensusOutput(v)
		if recorded {
			withOutput++
			if consistent {
				agreeing++
			}
			switch {
			case out != nil && readOnly(v):
				step.ReviewNotes = append(step.ReviewNotes, fmt.Sprintf("step %d %s: it only reads; its recorded output is the state it observed, which the next run may find changed, so it is observed output, not an expected output", v.index, step.Name))
			case out != nil:
				step.ExpectedOutput = out
				c.ExpectedOutputs = append(c.ExpectedOutputs, candidate.ExpectedOutput{Step: v.index, Output: out})
			}
		}
		flow.add(v)
	}
	c.Parameters = params.list()
	deriveParameters(c, views)
	c.Capabilities = sortedSet(caps)
	c.RequiredSecrets = sortedSet(secrets)
	for _, s := range c.Steps {
		c.SideEffects = append(c.SideEffects, s.SideEffects...)
	}
	if c.SideEffects == nil {
		c.SideEffects = []trace.SideEffect{}
	}
	sortSideEffects(c.SideEffects)

	receipts, problems := consensusReceipts(exTraces)
	c.ExpectedReceipts = receipts
	c.Warnings = append(c.Warnings, problems...)

	c.ClusterKey = clusterKey(exTraces, c.Steps)
	c.Savings = savings(views, b.prices)
	c.ConfidenceFactors = candidate.ConfidenceFactors{
		Support:         round4(float64(len(examples)) / float64(max(b.eligible, 1))),
		Determinism:     round4(float64(countSegment(c.Steps, candidate.Deterministic)) / float64(length)),
		OutputConsensus: 1,
	}
	if withOutput > 0 {
		c.ConfidenceFactors.OutputConsensus = round4(float64(agreeing) / float64(withOutput))
	}
	if c.Safe() {
		c.Confidence = Confidence(c.ConfidenceFactors)
	}
	c.Name = inferName(c.ClusterKey, c.Steps, exTraces)
	c.Description = describe(c.ClusterKey, c.Name, exTraces, b.traces, examples)
	return c
}

func ints(v []int32) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// retryNote totals the failed attempts folded into step j over the
// examples into *total and, when there were any, returns the review note
// that says so: the workflow runs the step once, and a reviewer should
// know it failed before it succeeded.
func retryNote(examples []match, j, index int, name string, total *int) string {
	runs := 0
	for _, m := range examples {
		if m.retries != nil && m.retries[j] > 0 {
			runs++
			*total += int(m.retries[j])
		}
	}
	if runs == 0 {
		return ""
	}
	return fmt.Sprintf("step %d %s failed and was retried in %d of %d examples (%d failed attempts in all); the workflow runs it once", index, name, runs, len(examples), *total)
}

// Confidence combines the factors into a score in [0,1]:
//
//	0.2 × support + 0.5 × determinism + 0.3 × output consensus
//
// Determinism weighs most because it is what crystallization buys: every
// fuzzy step still needs a model. Output consensus is the share of steps
// with recorded outputs whose outputs had the same shape in every example:
// a step that answers differently shaped results did not behave the same
// way each time. Support (examples / eligible
// traces) weighs least: in a corpus of many procedures even the most
// common one covers a small share of the traces, and that says little about
// its stability. Rejected candidates get 0. Later stages lower it when
// shadow replay fails.
func Confidence(f candidate.ConfidenceFactors) float64 {
	v := 0.2*f.Support + 0.5*f.Determinism + 0.3*f.OutputConsensus
	return round4(math.Min(1, math.Max(0, v)))
}

func round4(v float64) float64 { return math.Round(v*10000) / 10000 }

func countSegment(steps []candidate.Step, s candidate.Segment) int {
	n := 0
	for _, st := range steps {
		if st.Segment == s {
			n++
		}
	}
	return n
}

// candidateID is "candidate_" + the first 16 hex digits of
// sha256(Σ(signature + "\0") + Σ(source_hash + "\0")): stable across
// machines and runs, and compatible with existing bundle importers.
func candidateID(signatures []string, examples []candidate.Example) string {
	h := sha256.New()
	for _, s := range signatures {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, e := range examples {
		h.Write([]byte(e.SourceHash))
		h.Write([]byte{0})
	}
	return "candidate_" + hex.EncodeToString(h.Sum(nil))[:16]
}

func fuzzy(actions []*trace.Action) bool {
	for _, a := range actions {
		if a.Kind == trace.KindModelCall || (a.Fuzzy != nil && *a.Fuzzy) {
			return true
		}
	}
	return false
}

// stepApproval returns the approval boundary of a step. Examples that
// disagree on whether a human approved the step, or on which boundary
// they crossed, reject the candidate: replacing a sometimes-approved
// action with code would drop a check a person made, and keeping the
// first example's boundary would promise a gate the other runs did not
// stop at.
func stepApproval(v stepView) (*trace.Approval, *candidate.Problem) {
	var first *trace.Approval
	required := 0
	boundaries := []string{}
	for _, a := range v.actions {
		ap := candidate.ActionGate(a)
		if ap == nil {
			continue
		}
		if first == nil {
			first = ap
		}
		if ap.Required {
			required++
			if !slices.Contains(boundaries, ap.Boundary) {
				boundaries = append(boundaries, ap.Boundary)
			}
		}
	}
	if required != 0 && required != len(v.actions) {
		return first, &candidate.Problem{
			Code:    "divergent_approval",
			Message: fmt.Sprintf("step %d %s required human approval in %d of %d examples", v.index, v.actions[0].Name, required, len(v.actions)),
			Step:    v.index,
		}
	}
	if len(boundaries) > 1 {
		return first, &candidate.Problem{
			Code:    "divergent_approval",
			Message: fmt.Sprintf("step %d %s: the examples stop at different approval boundaries %s", v.index, v.actions[0].Name, strings.Join(quoteAll(boundaries), ", ")),
			Step:    v.index,
			Path:    fmt.Sprintf("steps[%d].approval.boundary", v.index),
		}
	}
	if first == nil {
		return nil, nil
	}
	return &trace.Approval{Prompt: first.Prompt, Required: first.Required, Boundary: first.Boundary}, nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func preconditions(s *candidate.Step) []string {
	out := []string{}
	for _, cp := range s.Capabilities {
		out = append(out, fmt.Sprintf("capability %q is granted", cp))
	}
	for _, sec := range s.RequiredSecrets {
		out = append(out, fmt.Sprintf("secret %q is configured", sec))
	}
	if s.Approval != nil && s.Approval.Required {
		out = append(out, fmt.Sprintf("approval boundary %q is preserved", s.Approval.Boundary))
	}
	return out
}

// stepArgv returns the argv template the examples of a step ran: the
// metadata argv their actions recorded, when every one recorded the same.
// The template's placeholders name the action's parameter keys, which are
// the step's argument keys, so it needs no renaming: the generated call
// passes each key its parameter, constant, binding or secret, and the
// runtime substitutes those values. When no example recorded one, the
// step is not a command and there is no problem. When only some did, when
// they differ, or when one is malformed, the step gets no template (it
// then runs only through a binding) and a warning says why.
func stepArgv(v stepView, traces []*trace.Trace) ([]string, *candidate.Problem) {
	name := v.actions[0].Name
	problem := func(code string, e int, format string, args ...any) *candidate.Problem {
		p := &candidate.Problem{
			Code:    code,
			Message: fmt.Sprintf("step %d %s: ", v.index, name) + fmt.Sprintf(format, args...),
			Step:    v.index,
		}
		if e >= 0 {
			field := "argv"
			if code == candidate.CodeUnparsedCommand {
				field = "command"
			}
			p.TraceID = traces[e].ID
			for k := range traces[e].Actions {
				if &traces[e].Actions[k] == v.actions[e] {
					p.Path = fmt.Sprintf("$.actions[%d].metadata.%s", k, field)
				}
			}
		}
		return p
	}
	var first []string
	firstEx, recorded := -1, 0
	for e, a := range v.actions {
		raw, ok := a.Metadata["argv"]
		if !ok {
			continue
		}
		recorded++
		argv, err := argvTemplate(raw, a.Parameters)
		if err != nil {
			return nil, problem(candidate.CodeInvalidArgv, e, "action %s: %v", a.ID, err)
		}
		if firstEx < 0 {
			first, firstEx = argv, e
			continue
		}
		if !slices.Equal(argv, first) {
			return nil, problem(candidate.CodeDivergentArgv, e, "action %s ran %q, but action %s of trace %s ran %q",
				a.ID, argv, v.actions[firstEx].ID, traces[firstEx].ID, first)
		}
	}
	switch {
	case recorded == 0:
		for e, a := range v.actions {
			if a.Metadata["unparsed"] == true {
				return nil, problem(candidate.CodeUnparsedCommand, e, "the log holds the command only as shell text no argv template reads (a variable, a substitution or a loop)")
			}
		}
		return nil, nil
	case recorded < len(v.actions):
		return nil, problem(candidate.CodeDivergentArgv, -1, "%d of %d examples recorded an argv template", recorded, len(v.actions))
	}
	return first, nil
}

// shellStep reports whether an agent ran v as a shell command: one of
// its examples carries the command text normalize records for every
// command it reads from a shell tool.
func shellStep(v stepView) bool {
	for _, a := range v.actions {
		if _, ok := a.Metadata["command"].(string); ok {
			return true
		}
	}
	return false
}

// argvTemplate checks a recorded metadata argv: a non-empty list of
// strings whose first element, the program, is a literal, and whose
// placeholders all name parameters of the action. A {secret:ID}
// placeholder is refused: a workflow reads a secret through ctx.secret,
// which it must declare.
func argvTemplate(raw any, params map[string]any) ([]string, error) {
	var argv []string
	switch x := raw.(type) {
	case []string:
		argv = x
	case []any:
		for i, el := range x {
			s, ok := el.(string)
			if !ok {
				return nil, fmt.Errorf("element %d is %s, not a string", i, candidate.JSONType(el))
			}
			argv = append(argv, s)
		}
	default:
		return nil, fmt.Errorf("metadata.argv is %s, not a list of strings", candidate.JSONType(raw))
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("metadata.argv names no program")
	}
	if len(candidate.ArgvPlaceholders(argv[0])) > 0 {
		return nil, fmt.Errorf("the program %q is a placeholder; it must be literal", argv[0])
	}
	for _, el := range argv[1:] {
		for _, key := range candidate.ArgvPlaceholders(el) {
			if strings.HasPrefix(key, "secret:") {
				return nil, fmt.Errorf("%q names a secret; pass it as a parameter instead", el)
			}
			if _, ok := params[key]; !ok {
				return nil, fmt.Errorf("%q names {%s}, which is not a parameter of the action", el, key)
			}
		}
	}
	return slices.Clone(argv), nil
}

// anySecret reports whether any of the values is, or contains, a
// secret-shaped string.
func anySecret(values []any) bool {
	for _, v := range values {
		switch x := v.(type) {
		case string:
			// The common case, without copying anything.
			if _, ok := redact.Secret(x); ok {
				return true
			}
		case map[string]any, []any:
			if _, n := redact.Value(v); n > 0 {
				return true
			}
		}
	}
	return false
}

// secretID is the logical id a credential field is read under:
// "github_token" → "GITHUB_TOKEN".
func secretID(key string) string {
	return strings.ToUpper(strings.Trim(candidate.Identifier(key), "_"))
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func allEqual(canon []string) bool {
	for _, c := range canon[1:] {
		if c != canon[0] {
			return false
		}
	}
	return true
}

// canonical encodes a decoded JSON value so that equal values give equal
// strings and different values different ones. Scalars, by far the most
// common values, are a type tag and their text; objects and arrays are
// written recursively with sorted keys and length prefixes, which keeps the
// encoding injective without escaping and avoids encoding/json's
// reflection on the hot path.
func canonical(v any) string {
	switch x := v.(type) {
	case string:
		return "s" + x
	case json.Number:
		return "n" + string(x)
	case bool:
		if x {
			return "t"
		}
		return "f"
	case nil:
		return "z"
	}
	return string(trace.AppendCanonical(make([]byte, 0, 64), v))
}

// consensusOutput compares the output each example of a step recorded,
// preferring observed_output over output. recorded is false when no example
// recorded one. out is the expected output when every example recorded the
// same value. consistent is true when the examples that recorded an output
// recorded outputs of the same shape (the same members and types): outputs
// that differ only in values are what parameterized steps produce, while a
// different shape means the step behaved differently. An example with no
// output recorded is no evidence either way (an agent's log often keeps
// none for a command that printed nothing), so it does not make the step
// inconsistent; it does keep the step from having an expected output.
func consensusOutput(v stepView) (out any, recorded, consistent bool) {
	var first, firstShape string
	missing := 0
	same := true
	consistent = true
	for _, a := range v.actions {
		o := resultOf(a)
		if o == nil {
			missing++
			continue
		}
		c, sh := canonical(o), shape(o)
		if !recorded {
			recorded = true
			out, first, firstShape = o, c, sh
			continue
		}
		if c != first {
			same = false
		}
		if sh != firstShape {
			consistent = false
		}
	}
	if !recorded {
		return nil, false, false
	}
	if missing > 0 {
		return nil, true, consistent
	}
	if !same {
		out = nil
	}
	return out, true, consistent
}

// readOnly reports whether every example of a step only reads: an
// observation, or an action whose every capability is a read (fs.read,
// git.read) and that changes nothing. What a read returns is observed
// state (the commits since the last tag, a diff, a file's text), which
// the next run finds changed by the work between the runs; it is no
// output the procedure produces, so it is never an expected output that
// shadow replay would hold another run to. The outputs of steps that
// change something stay expected where the examples agree.
func readOnly(v stepView) bool {
	for _, a := range v.actions {
		if a.Kind == trace.KindObservation {
			continue
		}
		if len(a.Capabilities) == 0 || len(a.SideEffects) > 0 {
			return false
		}
		for _, c := range a.Capabilities {
			if !strings.HasSuffix(c, ".read") {
				return false
			}
		}
	}
	return len(v.actions) > 0
}

// shape renders the structure of a JSON value without its scalar values:
// object members with their shapes, array element shapes (deduplicated),
// and scalar types.
func shape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		var b strings.Builder
		b.WriteString("{")
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(strconv.Quote(k))
			b.WriteString(":")
			b.WriteString(shape(x[k]))
		}
		b.WriteString("}")
		return b.String()
	case []any:
		seen := map[string]bool{}
		for _, el := range x {
			seen[shape(el)] = true
		}
		return "[" + strings.Join(sortedSet(seen), "|") + "]"
	}
	return candidate.JSONType(v)
}

func resultOf(a *trace.Action) any {
	if a.ObservedOutput != nil {
		return a.ObservedOutput
	}
	return a.Output
}

// clusterKey is the recurrence key: the goal the examples were
// working towards, the tool sequence, the artifact types touched and the
// success criteria.
func clusterKey(traces []*trace.Trace, steps []candidate.Step) candidate.ClusterKey {
	k := candidate.ClusterKey{ToolSequence: []string{}, TouchedArtifactTypes: []string{}, SuccessCriteria: []string{}}
	goals := map[string]int{}
	criteria := map[string]bool{}
	for _, t := range traces {
		if g, ok := t.Metadata["goal"].(string); ok && g != "" {
			goals[g]++
		} else if t.WorkflowID != "" {
			goals[t.WorkflowID]++
		}
		if s, ok := t.Metadata["success_criteria"].(string); ok && s != "" {
			criteria[s] = true
		}
	}
	// The goal names the cluster only when at least half the examples
	// share it: per-run goals ("bump x to 1.2") describe one run, not the
	// procedure.
	best := 0
	for _, g := range sortedKeys(goals) {
		if goals[g] > best && 2*goals[g] >= len(traces) {
			k.Goal, best = g, goals[g]
		}
	}
	artifacts := map[string]bool{}
	for _, s := range steps {
		switch s.Kind {
		case trace.KindToolCall, trace.KindFileMutation, trace.KindExternalAPICall:
			k.ToolSequence = append(k.ToolSequence, s.Name)
		}
		for _, se := range s.SideEffects {
			artifacts[artifactType(se)] = true
		}
	}
	k.TouchedArtifactTypes = sortedSet(artifacts)
	k.SuccessCriteria = sortedSet(criteria)
	return k
}

func artifactType(se trace.SideEffect) string {
	if t, ok := se.Metadata["artifact_type"].(string); ok && strings.TrimSpace(t) != "" {
		return t
	}
	kind := strings.ToLower(se.Kind)
	switch {
	case strings.Contains(kind, "git"):
		return "git"
	case strings.Contains(kind, "file"):
		if ext := strings.TrimPrefix(path.Ext(se.Target), "."); ext != "" && !strings.ContainsAny(ext, "{}") {
			return "file:" + ext
		}
		return "file"
	case strings.Contains(kind, "receipt"):
		return "receipt"
	case strings.Contains(kind, "publish"):
		return "package_publish"
	case kind != "":
		return kind
	}
	return "unknown"
}

// savings estimates what the workflow saves. For deterministic
// steps the model calls, tokens, cost and model wall-clock time the agent
// spent deciding them are avoided; fuzzy steps still need their model calls
// (at least one each). Tool execution time (duration_ms) is not counted as
// saved: the workflow still runs the tool.
//
// What running the workflow still costs is measured from the same steps:
// CPURuntimeCostUSD is the dollars of the fuzzy steps' model calls, which
// the workflow still makes, and RuntimeMS the time its steps took (each
// step's duration_ms, or for a fuzzy step its model wall time when that
// is longer, so that one call timed twice is not counted twice). The CPU
// time of the interpreter and of the tools has no price in a trace, so no
// dollars are put on it: a workflow with no fuzzy step costs $0 in model
// calls, and its RuntimeMS says what it spends instead.
//
// The dollars are the trace's own (total_cost_usd) where it gives them;
// otherwise the action's tokens priced by its model in prices. Tokens of
// a model prices does not know are left out of the dollars and their
// model is listed in UnpricedModels, so that an unknown price never reads
// as a saving of $0.
func savings(views []stepView, prices *price.Table) candidate.Savings {
	var s candidate.Savings
	if len(views) == 0 {
		return s
	}
	runs := len(views[0].actions)
	s.Runs = runs
	unpriced := map[string]bool{}
	for _, v := range views {
		isFuzzy := fuzzy(v.actions)
		for _, a := range v.actions {
			var cost trace.Cost
			if a.Cost != nil {
				cost = *a.Cost
			}
			var ms int64
			if a.DurationMS != nil {
				ms = max(*a.DurationMS, 0)
			}
			usd, ok := prices.Dollars(cost.Model, price.Usage{
				Input: cost.InputTokens, Output: cost.OutputTokens,
				CacheRead: cost.CacheReadTokens, CacheWrite: cost.CacheWriteTokens,
			}, cost.TotalCostUSD)
			if !ok {
				unpriced[cost.Model] = true
			}
			if isFuzzy {
				s.RemainingModelCalls += max(cost.ModelCalls, 1)
				s.CPURuntimeCostUSD += usd
				s.RuntimeMS += max(ms, cost.WallMS)
				continue
			}
			s.RuntimeMS += ms
			s.ModelCallsAvoided += cost.ModelCalls
			s.InputTokensAvoided += cost.InputTokens
			s.OutputTokensAvoided += cost.OutputTokens
			s.WallMSAvoided += cost.WallMS
			s.EstimatedCostUSDAvoided += usd
		}
	}
	if len(unpriced) > 0 {
		s.UnpricedModels = sortedKeys(unpriced)
	}
	s.EstimatedCostUSDAvoided = round6(s.EstimatedCostUSDAvoided)
	s.CPURuntimeCostUSD = round6(s.CPURuntimeCostUSD)
	n := float64(runs)
	s.PerRun = candidate.PerRun{
		ModelCallsAvoided:       round4(float64(s.ModelCallsAvoided) / n),
		InputTokensAvoided:      round4(float64(s.InputTokensAvoided) / n),
		OutputTokensAvoided:     round4(float64(s.OutputTokensAvoided) / n),
		EstimatedCostUSDAvoided: round6(s.EstimatedCostUSDAvoided / n),
		WallMSAvoided:           round4(float64(s.WallMSAvoided) / n),
		RemainingModelCalls:     round4(float64(s.RemainingModelCalls) / n),
		CPURuntimeCostUSD:       round6(s.CPURuntimeCostUSD / n),
		RuntimeMS:               round4(float64(s.RuntimeMS) / n),
	}
	return s
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// MaxNameLen is the most characters an inferred workflow name has. The
// name becomes a function name, a file name (<name>.star under --out-dir)
// and the stem of the skill's name, and a person reads it in every
// summary line: long enough for five or six words, far below any file
// system's limit.
const MaxNameLen = 48

// inferName names a candidate. Examples recorded by an agent (their
// metadata names it) have a person's prompt as their goal, whose words
// ("please", "can you") say little about the procedure and may run to
// hundreds of characters: such a candidate is named after its steps
// (stepsName), and the goal becomes its description. Other traces'
// goals are labels a program set ("release package maintenance"): the
// candidate is named after the goal most of its examples share, failing
// that after the words most examples' goals start with ("Bump x to 1.2"
// and "Bump y to 3.4" give "bump"), as long as the name fits in
// MaxNameLen, and after its first and last tools otherwise (their
// namespaced names, git.create_branch to github.open_pr, would make a
// long name of every step). --workflow-name overrides it for the
// selected candidate.
func inferName(k candidate.ClusterKey, steps []candidate.Step, traces []*trace.Trace) string {
	if byAgent(traces) {
		return stepsName(steps)
	}
	for _, goal := range []string{k.Goal, commonGoalPrefix(traces)} {
		if goal == "" {
			continue
		}
		if n := candidate.Identifier(goal); len(n) <= MaxNameLen {
			return n
		}
	}
	first, last := steps[0].Name, steps[len(steps)-1].Name
	return candidate.Identifier(cutName(candidate.Identifier(first+"_to_"+last), MaxNameLen))
}

// byAgent reports whether any of traces names the agent that recorded it
// (metadata.agent), as the session readers do.
func byAgent(traces []*trace.Trace) bool {
	for _, t := range traces {
		if a, ok := t.Metadata["agent"]; ok && a != nil && a != "" {
			return true
		}
	}
	return false
}

// describe returns the description of a candidate whose examples were
// recorded by an agent: the goal they share, else the goal of the first
// example, in full; "" for other traces, whose goal is already the name.
func describe(k candidate.ClusterKey, name string, traces, all []*trace.Trace, examples []match) string {
	if !byAgent(traces) {
		return ""
	}
	// Of the examples' requests, the one that names most of the words of
	// the procedure's name ("commit and push these changes" for
	// git_add_commit_push) describes it best; the first of those wins.
	words := strings.Split(name, "_")
	best, bestScore := "", -1
	for _, m := range examples {
		t := all[m.seq]
		p := askedBefore(t, t.Actions[m.pos[0]].Timestamp)
		if p == "" {
			continue
		}
		said := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(p), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			said[w] = true
		}
		score := 0
		for _, w := range words {
			if said[w] {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = p, score
		}
	}
	if best != "" {
		return best
	}
	if k.Goal != "" {
		return k.Goal
	}
	for _, t := range traces {
		if g, _ := t.Metadata["goal"].(string); strings.TrimSpace(g) != "" {
			return g
		}
	}
	return ""
}

// minRequestRunes is the length below which a prompt ("continue", "yes",
// "go on") answers the agent rather than asks for something: it does not
// describe a procedure.
const minRequestRunes = 12

// askedBefore is the prompt of t typed last at or before the time at (an
// action's timestamp) that is long enough to be a request, or "" when
// there is none (no prompt log, or an action without a time).
func askedBefore(t *trace.Trace, at string) string {
	list, _ := t.Metadata[trace.MetaPrompts].([]any)
	if at == "" || len(list) == 0 {
		return ""
	}
	when, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return ""
	}
	var best string
	var bestAt time.Time
	for _, v := range list {
		p, _ := v.(map[string]any)
		ts, _ := p["timestamp"].(string)
		text, _ := p["text"].(string)
		pt, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || pt.After(when) || utf8.RuneCountInString(strings.TrimSpace(text)) < minRequestRunes {
			continue
		}
		if best == "" || !pt.Before(bestAt) {
			best, bestAt = text, pt
		}
	}
	return best
}

// stepsName names a procedure after what it does: the words of its
// steps' names, consecutive steps of one tool sharing the tool's word
// ("git add", "git commit", "git push" give git_add_commit_push; "go mod
// tidy", "go test" give go_mod_tidy_test) and a word repeated at once
// kept once. A name longer than MaxNameLen keeps its first and last tool
// ("git_checkout_to_git_commit"), cut at a word if that is still too long.
func stepsName(steps []candidate.Step) string {
	var groups [][]string
	for _, st := range steps {
		name := st.Name
		if name == "" {
			name = string(st.Kind)
		}
		var words []string
		for w := range strings.SplitSeq(candidate.Identifier(name), "_") {
			if w != "" {
				words = append(words, w)
			}
		}
		if len(words) == 0 {
			continue
		}
		if n := len(groups); n > 0 && groups[n-1][0] == words[0] {
			groups[n-1] = appendWords(groups[n-1], words[1:])
			continue
		}
		groups = append(groups, appendWords(nil, words))
	}
	if len(groups) == 0 {
		return "workflow"
	}
	var all []string
	for _, g := range groups {
		all = appendWords(all, g)
	}
	name := strings.Join(all, "_")
	if len(name) > MaxNameLen && len(groups) > 1 {
		name = strings.Join(groups[0], "_") + "_to_" + strings.Join(groups[len(groups)-1], "_")
	}
	return candidate.Identifier(cutName(name, MaxNameLen))
}

// appendWords appends words to dst, leaving out a word equal to the one
// before it ("go test", "go test" is go_test).
func appendWords(dst, words []string) []string {
	for _, w := range words {
		if len(dst) > 0 && dst[len(dst)-1] == w {
			continue
		}
		dst = append(dst, w)
	}
	return dst
}

// cutName cuts an identifier to at most n bytes, at an underscore when
// there is one to cut at, without a trailing underscore.
func cutName(name string, n int) string {
	if len(name) <= n {
		return name
	}
	cut := name[:n]
	if i := strings.LastIndexByte(cut, '_'); i > 0 && name[n] != '_' {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, "_")
}

// commonGoalPrefix returns the longest run of leading words (compared
// case-insensitively) that the goals of at least half the traces start
// with; empty when there is none.
func commonGoalPrefix(traces []*trace.Trace) string {
	goals := make([][]string, 0, len(traces))
	for _, t := range traces {
		g, _ := t.Metadata["goal"].(string)
		goals = append(goals, strings.Fields(strings.ToLower(g)))
	}
	best := ""
	for n := 1; ; n++ {
		counts := map[string]int{}
		for _, words := range goals {
			if len(words) >= n {
				counts[strings.Join(words[:n], " ")]++
			}
		}
		found := ""
		for _, p := range sortedKeys(counts) {
			if 2*counts[p] >= len(traces) && (found == "" || counts[p] > counts[found]) {
				found = p
			}
		}
		if found == "" {
			return best
		}
		best = found
	}
}

func sortSideEffects(s []trace.SideEffect) {
	sort.SliceStable(s, func(i, j int) bool { return sideEffectKey(s[i]) < sideEffectKey(s[j]) })
}

func sideEffectKey(se trace.SideEffect) string {
	return se.Kind + "\x00" + se.Target + "\x00" + se.Capability + "\x00" + se.Mutation
}
