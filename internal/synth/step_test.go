package synth

import (
	"context"
	"strings"
	"testing"
)

func triageExamples() []StepExample {
	return []StepExample{
		{Where: "fixtures/a.json#3", Inputs: map[string]any{"issue_id": "PAY-1", "title": "Refund webhook returns 500"}, Output: map[string]any{"labels": []any{"bug", "sev/high"}}},
		{Where: "fixtures/b.json#2", Inputs: map[string]any{"issue_id": "PAY-2", "title": "Flaky test in CI"}, Output: map[string]any{"labels": []any{"flaky-test", "sev/low"}}},
		{Where: "fixtures/c.json#4", Inputs: map[string]any{"issue_id": "PAY-3", "title": "Checkout returns 500 on retry"}, Output: map[string]any{"labels": []any{"bug", "sev/high"}}},
	}
}

const goodTriage = "```python\ndef classify(inputs):\n    t = inputs[\"title\"].lower()\n    if \"500\" in t:\n        return {\"labels\": [\"bug\", \"sev/high\"]}\n    return {\"labels\": [\"flaky-test\", \"sev/low\"]}\n```\n"

// Right on the first two examples, wrong on the third: "retry" wins.
const subtlyWrongTriage = "```\ndef classify(inputs):\n    t = inputs[\"title\"].lower()\n    if \"retry\" in t or \"flaky\" in t:\n        return {\"labels\": [\"flaky-test\", \"sev/low\"]}\n    return {\"labels\": [\"bug\", \"sev/high\"]}\n```\n"

func TestSynthesizeStep(t *testing.T) {
	heldout := []StepExample{{Where: "fixtures/h.json#1", Inputs: map[string]any{"issue_id": "PAY-9", "title": "Ledger API 500s"}, Output: map[string]any{"labels": []any{"bug", "sev/high"}}}}
	tests := []struct {
		name    string
		answer  string
		heldout []StepExample
		accept  bool
		failing string // the example the refusal names
	}{
		{"correct", goodTriage, heldout, true, ""},
		{"subtly wrong", subtlyWrongTriage, nil, false, "fixtures/c.json#4"},
		{"wrong on held-out only", strings.Replace(goodTriage, `"500" in t`, `"500" in t and "ledger" not in t`, 1), heldout, false, "fixtures/h.json#1"},
		{"no code block", "def classify(inputs): return {}", nil, false, ""},
		{"two functions", "```\ndef a(x):\n    return 1\n\ndef b(x):\n    return 2\n```", nil, false, ""},
		{"stopped capsule", "```\ndef classify(inputs):\n    while True:\n        pass\n```", nil, false, "fixtures/a.json#3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := StepSpec{Name: "classify_issue", Model: "default", Examples: triageExamples(), Heldout: tt.heldout, Resources: Resources{TimeS: 1}}
			res, err := SynthesizeStep(context.Background(), fakeModel{answer: tt.answer}, testSandbox(t), spec)
			if err != nil {
				t.Fatal(err)
			}
			if res.Accepted != tt.accept {
				t.Fatalf("Accepted = %v, want %v; failures %+v", res.Accepted, tt.accept, res.Failures)
			}
			if tt.accept {
				if res.Checked["examples"] != 2 || res.Checked["withheld"] != 1 || res.Checked["heldout"] != 1 || res.Function != "classify" ||
					len(res.Withheld) != 1 || res.Withheld[0] != "fixtures/c.json#4" {
					t.Errorf("result = %+v", res)
				}
				return
			}
			if len(res.Failures) == 0 {
				t.Fatal("refused without a failure")
			}
			if tt.failing != "" && (len(res.Failures) != 1 || res.Failures[0].Example != tt.failing) {
				t.Errorf("failures = %+v, want one naming %s", res.Failures, tt.failing)
			}
		})
	}
}

func TestStepProperties(t *testing.T) {
	examples := []StepExample{
		{Where: "a", Inputs: map[string]any{"tags": []any{"b", "a", "c"}}, Output: []any{"a", "b", "c"}},
		{Where: "b", Inputs: map[string]any{"tags": []any{"z", "y"}}, Output: []any{"y", "z"}},
		{Where: "c", Inputs: map[string]any{"tags": []any{"p", "q"}}, Output: []any{"p", "q"}},
	}
	props := StepProperties(examples)
	if len(props) != 1 || props[0].Name != "order_invariant_tags" {
		t.Fatalf("StepProperties = %+v", props)
	}
	// A function that sorts passes; one that keeps the first two in
	// order matches the examples only by accident of their order... and
	// is caught by the property.
	good := "```\ndef f(inputs):\n    return sorted(inputs[\"tags\"])\n```"
	res, err := SynthesizeStep(context.Background(), fakeModel{answer: good}, nil, StepSpec{Name: "s", Examples: examples})
	if err != nil || !res.Accepted {
		t.Fatalf("sorted: %+v, %v", res, err)
	}
	bad := "```\ndef f(inputs):\n    t = inputs[\"tags\"]\n    if t[0] == \"b\" or t[0] == \"z\":\n        return sorted(t)\n    return t\n```"
	res, err = SynthesizeStep(context.Background(), fakeModel{answer: bad}, nil, StepSpec{Name: "s", Examples: examples})
	if err != nil || res.Accepted || res.Failures[0].Set != "order_invariant_tags" {
		t.Fatalf("order dependent: %+v, %v", res, err)
	}
	// Outputs that are not sets give no property.
	if p := StepProperties([]StepExample{{Inputs: map[string]any{"x": []any{1, 2}}, Output: []any{"b", "a"}}}); len(p) != 0 {
		t.Errorf("StepProperties on ordered output = %+v", p)
	}
}

const triageWorkflow = `# triage — crystallized from 3 traces
def triage(ctx, issue_id):
    """Runs tracker.get_issue, classify_issue, then tracker.set_labels."""
    # step 1 · external_api_call tracker.get_issue
    step1 = ctx.tool("tracker.get_issue", issue_id = issue_id)
    # step 2 · model_call classify_issue · capabilities model.invoke
    # review_required: step 2 classify_issue depends on a model
    step2 = ctx.model("classify_issue", inputs = {"issue_id": issue_id, "title": step1["title"]})
    ctx.tool("tracker.set_labels", issue_id = issue_id, labels = step2["labels"])
    return {"status": "ok"}
`

func TestReplaceModelCall(t *testing.T) {
	fn := "def classify(inputs):\n    if \"500\" in inputs[\"title\"]:\n        return {\"labels\": [\"bug\"]}\n\n    return {\"labels\": []}\n"
	got, err := ReplaceModelCall([]byte(triageWorkflow), "classify_issue", "classify", fn, "step 2 classify_issue: synthesized, verified on 3 examples")
	if err != nil {
		t.Fatal(err)
	}
	want := `# triage — crystallized from 3 traces
def triage(ctx, issue_id):
    """Runs tracker.get_issue, classify_issue, then tracker.set_labels."""
    # step 2 classify_issue: synthesized, verified on 3 examples
    def classify(inputs):
        if "500" in inputs["title"]:
            return {"labels": ["bug"]}

        return {"labels": []}
    # step 1 · external_api_call tracker.get_issue
    step1 = ctx.tool("tracker.get_issue", issue_id = issue_id)
    # step 2 · model_call classify_issue · capabilities model.invoke
    step2 = classify({"issue_id": issue_id, "title": step1["title"]})
    ctx.tool("tracker.set_labels", issue_id = issue_id, labels = step2["labels"])
    return {"status": "ok"}
`
	if string(got) != want {
		t.Errorf("ReplaceModelCall =\n%s\nwant\n%s", got, want)
	}
	for _, tt := range []struct{ name, fn, fnSrc string }{
		{"no such step", "classify", fn},
		{"name taken", "triage", fn},
		{"loads", "classify", "load(\"math\", \"sqrt\")\n" + fn},
	} {
		step := "classify_issue"
		if tt.name == "no such step" {
			step = "summarize"
		}
		if _, err := ReplaceModelCall([]byte(triageWorkflow), step, tt.fn, tt.fnSrc, "n"); err == nil {
			t.Errorf("%s: ReplaceModelCall succeeded, want an error", tt.name)
		}
	}
}

// promptModel is fakeModel that keeps the prompt it was given.
type promptModel struct {
	answer string
	prompt *string
}

func (m promptModel) Complete(_ context.Context, _, prompt string) (*Answer, error) {
	*m.prompt = prompt
	return &Answer{Text: m.answer, Model: "fake-1"}, nil
}

func fn(body string) string { return "```\ndef classify(inputs):\n" + body + "```\n" }

// A function must generalise beyond the recorded runs: it may not recite
// them, it is checked on runs it was not shown, and on the inputs the
// stated invariants derive from them.
func TestSynthesizeStepGeneralises(t *testing.T) {
	bug, flaky := `{"labels": ["bug", "sev/high"]}`, `{"labels": ["flaky-test", "sev/low"]}`
	// Right on every recorded run, shown or withheld, by table.
	lookup := fn("    return {\"PAY-1\": " + bug + ", \"PAY-2\": " + flaky + ", \"PAY-3\": " + bug + "}[inputs[\"issue_id\"]]\n")
	byTitle := fn("    if inputs[\"title\"] == \"Flaky test in CI\":\n        return " + flaky + "\n    return " + bug + "\n")
	// Right on the two runs shown, wrong on the withheld one.
	overfit := fn("    if \"webhook\" in inputs[\"title\"].lower():\n        return " + bug + "\n    return " + flaky + "\n")
	// Right on every recorded run, wrong once the title's case changes,
	// its spaces, or the id.
	caseSensitive := fn("    if \"Flaky\" in inputs[\"title\"]:\n        return " + flaky + "\n    return " + bug + "\n")
	spaceSensitive := fn("    if \"flaky test\" in inputs[\"title\"].lower():\n        return " + flaky + "\n    return " + bug + "\n")
	idSensitive := fn("    if inputs[\"issue_id\"].endswith(\"2\"):\n        return " + flaky + "\n    return " + bug + "\n")
	echo := fn("    return {\"id\": inputs[\"issue_id\"], \"urgent\": \"500\" in inputs[\"title\"]}\n")
	echoExamples := triageExamples()
	for i := range echoExamples {
		echoExamples[i].Output = map[string]any{"id": echoExamples[i].Inputs["issue_id"], "urgent": strings.Contains(echoExamples[i].Inputs["title"].(string), "500")}
	}
	all := []StepInvariant{{InvariantCase, "title"}, {InvariantWhitespace, "title"}, {InvariantID, "issue_id"}}
	tests := []struct {
		name       string
		answer     string
		examples   []StepExample
		invariants []StepInvariant
		set, code  string // of the first failure; "" when accepted
		reason     string
	}{
		{"general", goodTriage, nil, all, "", "", ""},
		{"general, echoing the id", echo, echoExamples, all, "", "", ""},
		{"lookup table by id", lookup, nil, nil, "code", CodeRecordedLiteral, `line 2: the dict key "PAY-1" is the recorded input issue_id of this run`},
		{"comparison with a recorded title", byTitle, nil, nil, "code", CodeRecordedLiteral, `line 2: the literal "Flaky test in CI" is the recorded input title of this run`},
		{"fits the shown runs only", overfit, nil, nil, "withheld", "", ""},
		{"case sensitive, no invariant", caseSensitive, nil, nil, "", "", ""},
		{"case sensitive", caseSensitive, nil, all, "case_invariant_title", "", ""},
		{"space sensitive", spaceSensitive, nil, all, "whitespace_invariant_title", "", ""},
		{"id sensitive", idSensitive, nil, all, "opaque_id_issue_id", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			examples := tt.examples
			if examples == nil {
				examples = triageExamples()
			}
			var prompt string
			spec := StepSpec{Name: "classify_issue", Examples: examples, Invariants: tt.invariants, Resources: Resources{TimeS: 1}}
			res, err := SynthesizeStep(context.Background(), promptModel{tt.answer, &prompt}, nil, spec)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(prompt, "Checkout") || !strings.Contains(prompt, "Flaky test in CI") {
				t.Errorf("the prompt must show the first runs and not the withheld one:\n%s", prompt)
			}
			if tt.set == "" {
				if !res.Accepted {
					t.Fatalf("refused: %+v", res.Failures)
				}
				return
			}
			if res.Accepted || len(res.Failures) == 0 {
				t.Fatalf("accepted, want a refusal in %s", tt.set)
			}
			f := res.Failures[0]
			if f.Set != tt.set || f.Code != tt.code || !strings.Contains(f.Reason, tt.reason) {
				t.Errorf("failure = %+v, want set %s, code %q, reason with %q", f, tt.set, tt.code, tt.reason)
			}
			if tt.code == CodeRecordedLiteral && f.Example != "fixtures/a.json#3" && f.Example != "fixtures/b.json#2" {
				t.Errorf("failure names %q, want the run the literal comes from", f.Example)
			}
		})
	}
	// The id perturbation names the new input, of the same shape.
	var prompt string
	res, err := SynthesizeStep(context.Background(), promptModel{idSensitive, &prompt}, nil, StepSpec{Name: "s", Examples: triageExamples(), Invariants: all})
	if err != nil || len(res.Failures) == 0 || res.Failures[0].Example != `fixtures/a.json#3 with issue_id "QBZ-2"` {
		t.Errorf("failures = %+v, %v", res.Failures, err)
	}
}

func TestSynthesizeStepNeedsExamples(t *testing.T) {
	var prompt string
	_, err := SynthesizeStep(context.Background(), promptModel{goodTriage, &prompt}, nil, StepSpec{Name: "classify_issue", Examples: triageExamples()[:2]})
	if err == nil || !strings.Contains(err.Error(), "2 recorded runs; synthesis needs at least 3: 2 to show the model and 1 withheld") {
		t.Errorf("err = %v", err)
	}
	if prompt != "" {
		t.Error("the model was asked")
	}
}

func TestStepInvariants(t *testing.T) {
	for _, s := range []string{"case", "case:", "loud:title"} {
		if _, err := ParseStepInvariant(s); err == nil {
			t.Errorf("ParseStepInvariant(%q) succeeded", s)
		}
	}
	inv, err := ParseStepInvariant("whitespace:title")
	if err != nil || inv != (StepInvariant{InvariantWhitespace, "title"}) || inv.Check(triageExamples()) != nil {
		t.Errorf("whitespace:title = %+v, %v", inv, err)
	}
	if err := (StepInvariant{InvariantCase, "labels"}).Check(triageExamples()); err == nil || !strings.Contains(err.Error(), `fixtures/a.json#3 has no string input "labels"`) {
		t.Errorf("Check of a missing input = %v", err)
	}
}
