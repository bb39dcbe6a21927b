package source

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

const (
	compositionSchemaFile = "../../schemas/composition-report.v1.json"
	compositionSchemaID   = "https://crystallize.dev/schemas/composition-report.v1.json"
	compositionExamples   = "../../examples/composition"
	compositionTestdata   = "testdata/composition"
)

// parseReport parses a composition report as the loader would.
func parseReport(t *testing.T, data []byte) map[string]any {
	t.Helper()
	v, err := trace.ParseJSON(data, "report.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("report is %s, not an object", trace.TypeName(v))
	}
	return m
}

func readReport(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseReport(t, data)
}

func num(s string) json.Number { return json.Number(s) }

func TestCompositionTrace(t *testing.T) {
	report := readReport(t, filepath.Join(compositionTestdata, "mixed.json"))
	got, err := CompositionTrace(report, "mixed.json")
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	ms := func(n int64) *int64 { return &n }
	identity := map[string]any{
		"snippet_hash":                  "sha256:1111111111111111111111111111111111111111111111111111111111111111",
		"binding_manifest_hash":         "sha256:2222222222222222222222222222222222222222222222222222222222222222",
		"language":                      "python",
		"requested_side_effect_ceiling": "workspace_write",
	}
	want := &trace.Trace{
		Version:    1,
		ID:         "composition-run-9",
		Source:     "mixed.json",
		SourceHash: got.SourceHash, // checked below
		Flow:       &trace.Flow{AgentRunID: "agent-9", TranscriptRef: "transcripts/agent-9.jsonl"},
		Actions: []trace.Action{
			{
				ID: "run-9", Kind: KindCompositionRun, Name: "composition_run",
				Parameters: identity, Inputs: identity,
				Capabilities: []string{"composition.run"},
				SideEffects: []trace.SideEffect{{
					Kind: "receipt_write", Target: CompositionReceipts, Capability: "composition.run", Mutation: "append",
				}},
				Deterministic: &yes, Fuzzy: &no,
				Metadata: map[string]any{"ok": false, "failure_category": "tool_error", "stdout": "wrote notes\n"},
				Extra:    map[string]any{"host": "sandbox-3"},
			},
			{
				ID: "c-read", Kind: trace.KindToolCall, Name: "read_file",
				Parameters:    map[string]any{"path": "README.md"},
				Output:        map[string]any{"text": "# readme"},
				Capabilities:  []string{"workspace.read_text"},
				DurationMS:    ms(1),
				Deterministic: &yes, Fuzzy: &no,
				Metadata: map[string]any{
					"operation_index": num("0"), "status": "ok", "requested_side_effect_level": "READ_ONLY",
					"domain": "workspace", "op": "read_text",
				},
				Extra: map[string]any{"retries": num("0")},
			},
			{
				ID: "c-ping", Kind: trace.KindToolCall, Name: "ping",
				Inputs:       "example.invalid",
				Capabilities: []string{"net.ping"},
				SideEffects: []trace.SideEffect{{
					Kind: UnknownSideEffects, Target: "ping", Capability: "net.ping",
					Metadata: map[string]any{"side_effects_known": false, "reason": "the call does not state its requested side-effect level"},
				}},
				Deterministic: &yes, Fuzzy: &no,
				Metadata: map[string]any{
					"operation_index": num("1"), "status": "error", "error_category": "timeout",
					"domain": "net", "op": "ping",
				},
			},
			{
				ID: "c-notes", Kind: trace.KindToolCall, Name: "write_file",
				Parameters:    map[string]any{"path": "NOTES.md", "text": "ok"},
				Output:        map[string]any{"bytes": num("2")},
				Capabilities:  []string{"workspace.write_text"},
				SideEffects:   []trace.SideEffect{{Kind: "workspace_write", Target: "write_file", Capability: "workspace.write_text"}},
				DurationMS:    ms(3),
				Deterministic: &yes, Fuzzy: &no,
				Metadata: map[string]any{
					"operation_index": num("2"), "status": "ok", "requested_side_effect_level": "workspace_write",
					"annotations": map[string]any{"destructiveHint": false}, "policy_context": map[string]any{"decision": "allow"},
					"domain": "workspace", "op": "write_text",
				},
			},
		},
		ReplayRun: map[string]any{
			"run_id":                "run-9",
			"snippet_hash":          identity["snippet_hash"],
			"binding_manifest_hash": identity["binding_manifest_hash"],
			"effect_receipts": []any{
				map[string]any{
					"kind": "composition_run", "run_id": "run-9", "calls": num("3"), "ok": false, "failure_category": "tool_error",
					"snippet_hash": identity["snippet_hash"], "binding_manifest_hash": identity["binding_manifest_hash"],
					"language": "python", "requested_side_effect_ceiling": "workspace_write",
				},
				map[string]any{
					"kind": "tool_call", "tool_call_id": "c-read", "operation_index": num("0"), "tool_name": "read_file",
					"capability": "workspace.read_text", "requested_side_effect_level": "READ_ONLY", "status": "ok",
					"output": map[string]any{"text": "# readme"},
				},
				map[string]any{
					"kind": "tool_call", "tool_call_id": "c-ping", "operation_index": num("1"), "tool_name": "ping",
					"capability": "net.ping", "status": "error", "error_category": "timeout",
				},
				map[string]any{
					"kind": "tool_call", "tool_call_id": "c-notes", "operation_index": num("2"), "tool_name": "write_file",
					"capability": "workspace.write_text", "requested_side_effect_level": "workspace_write", "status": "ok",
					"output": map[string]any{"bytes": num("2")},
				},
			},
		},
		ReplayAllowlist: []trace.AllowlistRule{
			{Path: "/run_id", Reason: "composition run ids are allocated per execution"},
			{Path: "/effect_receipts/0/run_id", Reason: "composition run ids are allocated per execution"},
			{Path: "/effect_receipts/*/tool_call_id", Reason: "tool call ids are allocated per execution"},
		},
		Usage: &trace.Usage{WallMS: 4},
		Metadata: map[string]any{
			"composition.run_id":                        "run-9",
			"composition.snippet_hash":                  identity["snippet_hash"],
			"composition.binding_manifest_hash":         identity["binding_manifest_hash"],
			"composition.language":                      "python",
			"composition.requested_side_effect_ceiling": "workspace_write",
			"composition.ok":                            false,
			"composition.failure_category":              "tool_error",
			"composition.child_statuses":                []any{"ok", "error", "ok"},
			"composition.events":                        []any{map[string]any{"type": "snippet_started"}},
		},
		Extra: map[string]any{"host_version": "1.4.0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CompositionTrace(mixed.json) (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(got.SourceHash, "sha256:") || len(got.SourceHash) != len("sha256:")+64 {
		t.Errorf("source hash = %q, want sha256:<64 hex>", got.SourceHash)
	}

	// The hash is of the report's content, not of how it was held: the
	// same report parsed again hashes the same, a changed one differently.
	again, err := CompositionTrace(readReport(t, filepath.Join(compositionTestdata, "mixed.json")), "other.json")
	if err != nil {
		t.Fatal(err)
	}
	if again.SourceHash != got.SourceHash {
		t.Errorf("source hash of the same report = %s, then %s", got.SourceHash, again.SourceHash)
	}
	changed := readReport(t, filepath.Join(compositionTestdata, "mixed.json"))
	changed["results"].([]any)[0].(map[string]any)["output"] = "other"
	other, err := CompositionTrace(changed, "mixed.json")
	if err != nil {
		t.Fatal(err)
	}
	if other.SourceHash == got.SourceHash {
		t.Errorf("a report with another output has the same source hash %s", got.SourceHash)
	}

	// What was built is what is written: the trace survives the codec.
	enc, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	back, err := trace.Decode(enc, "mixed.json", 0)
	if err != nil {
		t.Fatalf("Decode(Marshal(trace)): %v", err)
	}
	if diff := cmp.Diff(got, back); diff != "" {
		t.Errorf("round trip (-built +decoded):\n%s", diff)
	}
}

// TestCompositionOrder checks that children follow operation_index, not
// the order the host listed them in, and that the receipts follow them.
func TestCompositionOrder(t *testing.T) {
	doc := `{"run": {"id": "r", "snippet_hash": "s", "binding_manifest_hash": "m"}, "calls": [
		{"operation_index": 10, "tool_call_id": "c10", "tool_name": "t10", "domain": "d", "op": "o", "requested_side_effect_level": "none"},
		{"operation_index": 2, "tool_call_id": "c2", "tool_name": "t2", "domain": "d", "op": "o", "requested_side_effect_level": "read"},
		{"operation_index": 0, "tool_call_id": "c0", "tool_name": "t0", "domain": "d", "op": "o", "requested_side_effect_level": "read_only"},
		{"operation_index": 7, "tool_call_id": "c7", "tool_name": "t7", "domain": "d", "op": "o", "requested_side_effect_level": "readonly"}]}`
	tr, err := CompositionTrace(parseReport(t, []byte(doc)), "order.json")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range tr.Actions {
		ids = append(ids, a.ID)
		if a.Kind == trace.KindToolCall && len(a.SideEffects) > 0 {
			t.Errorf("read-only call %s has side effects %v", a.ID, a.SideEffects)
		}
	}
	if diff := cmp.Diff([]string{"r", "c0", "c2", "c7", "c10"}, ids); diff != "" {
		t.Errorf("action ids (-want +got):\n%s", diff)
	}
	var receipts []string
	for _, r := range tr.ReplayRun["effect_receipts"].([]any) {
		m := r.(map[string]any)
		id, _ := m["tool_call_id"].(string)
		if id == "" {
			id, _ = m["run_id"].(string)
		}
		receipts = append(receipts, id)
	}
	if diff := cmp.Diff(ids, receipts); diff != "" {
		t.Errorf("receipt order differs from action order (-actions +receipts):\n%s", diff)
	}
}

// TestCompositionNoCalls checks that a run without calls is a one-action
// trace whose allowlist names nothing the run does not have.
func TestCompositionNoCalls(t *testing.T) {
	doc := `{"run": {"id": "r", "snippet_hash": "s", "binding_manifest_hash": "m"}, "calls": []}`
	tr, err := CompositionTrace(parseReport(t, []byte(doc)), "empty.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Actions) != 1 || tr.Actions[0].Kind != KindCompositionRun {
		t.Errorf("actions = %+v, want the composition_run alone", tr.Actions)
	}
	for _, r := range tr.ReplayAllowlist {
		if strings.Contains(r.Path, "tool_call_id") {
			t.Errorf("allowlist has %s for a run without calls", r.Path)
		}
	}
}

func TestCompositionErrors(t *testing.T) {
	const run = `"run": {"id": "r", "snippet_hash": "s", "binding_manifest_hash": "m"}`
	const call = `{"operation_index": 0, "tool_call_id": "c", "tool_name": "t", "domain": "d", "op": "o"}`
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"no run", `{"calls": []}`, []string{"bad.json: $.run: missing required field"}},
		{"no calls", `{` + run + `}`, []string{"bad.json: $.calls: missing required field"}},
		{"run not object", `{"run": [], "calls": []}`, []string{"bad.json: $.run: expected object, got array"}},
		{"calls not array", `{` + run + `, "calls": {}}`, []string{"bad.json: $.calls: expected array, got object"}},
		{"run fields", `{"run": {"id": "", "snippet_hash": 1, "binding_manifest_hash": null, "language": 2,
			"requested_side_effect_ceiling": true, "ok": "yes", "failure_category": [], "stdout": {},
			"agent_run_id": 3, "transcript_ref": 4}, "calls": []}`, []string{
			"bad.json: $.run.id: empty id",
			"bad.json: $.run.snippet_hash: expected string, got number",
			"bad.json: $.run.binding_manifest_hash: expected string, got null",
			"bad.json: $.run.language: expected string, got number",
			"bad.json: $.run.requested_side_effect_ceiling: expected string, got boolean",
			"bad.json: $.run.ok: expected boolean, got string",
			"bad.json: $.run.failure_category: expected string, got array",
			"bad.json: $.run.stdout: expected string, got object",
			"bad.json: $.run.agent_run_id: expected string, got number",
			"bad.json: $.run.transcript_ref: expected string, got number",
		}},
		{"call not object", `{` + run + `, "calls": ["x"]}`, []string{"bad.json: $.calls[0]: expected object, got string"}},
		{"call required", `{` + run + `, "calls": [{}]}`, []string{
			"bad.json: $.calls[0].operation_index: missing required field",
			"bad.json: $.calls[0].tool_call_id: missing required field",
			"bad.json: $.calls[0].tool_name: missing required field",
			"bad.json: $.calls[0].domain: missing required field",
			"bad.json: $.calls[0].op: missing required field",
		}},
		{"call fields", `{` + run + `, "calls": [{"operation_index": -1, "tool_call_id": 5, "tool_name": "", "domain": "d", "op": "o",
			"requested_side_effect_level": 1, "annotations": [], "policy_context": "p", "status": false,
			"error_category": 2, "duration_ms": 1.5}]}`, []string{
			"bad.json: $.calls[0].operation_index: expected non-negative integer, got -1",
			"bad.json: $.calls[0].tool_call_id: expected string, got number",
			"bad.json: $.calls[0].tool_name: empty tool_name",
			"bad.json: $.calls[0].requested_side_effect_level: expected string, got number",
			"bad.json: $.calls[0].annotations: expected object, got array",
			"bad.json: $.calls[0].policy_context: expected object, got string",
			"bad.json: $.calls[0].status: expected string, got boolean",
			"bad.json: $.calls[0].error_category: expected string, got number",
			"bad.json: $.calls[0].duration_ms: expected integer, got 1.5",
		}},
		{"operation index type", `{` + run + `, "calls": [{"operation_index": "1", "tool_call_id": "c", "tool_name": "t", "domain": "d", "op": "o"}]}`,
			[]string{"bad.json: $.calls[0].operation_index: expected integer, got string"}},
		{"duplicate operation index", `{` + run + `, "calls": [` + call + `, {"operation_index": 0, "tool_call_id": "c2", "tool_name": "t", "domain": "d", "op": "o"}]}`,
			[]string{"bad.json: $.calls[1].operation_index: duplicate operation_index 0 (first at $.calls[0].operation_index)"}},
		{"duplicate tool call id", `{` + run + `, "calls": [` + call + `, {"operation_index": 1, "tool_call_id": "c", "tool_name": "t", "domain": "d", "op": "o"}]}`,
			[]string{`bad.json: $.calls[1].tool_call_id: duplicate id "c" (first at $.calls[0].tool_call_id)`}},
		{"duplicates out of order", `{` + run + `, "calls": [{"operation_index": 5, "tool_call_id": "c", "tool_name": "t", "domain": "d", "op": "o"}, ` + call + `]}`,
			[]string{`bad.json: $.calls[1].tool_call_id: duplicate id "c" (first at $.calls[0].tool_call_id)`}},
		{"tool call id is the run id", `{` + run + `, "calls": [{"operation_index": 0, "tool_call_id": "r", "tool_name": "t", "domain": "d", "op": "o"}]}`,
			[]string{`bad.json: $.calls[0].tool_call_id: duplicate id "r" (first at $.run.id)`}},
		{"results not array", `{` + run + `, "calls": [], "results": {}}`, []string{"bad.json: $.results: expected array, got object"}},
		{"result not object", `{` + run + `, "calls": [` + call + `], "results": [1]}`, []string{"bad.json: $.results[0]: expected object, got number"}},
		{"result without id", `{` + run + `, "calls": [` + call + `], "results": [{"output": 1}]}`,
			[]string{"bad.json: $.results[0].tool_call_id: missing required field"}},
		{"result of no call", `{` + run + `, "calls": [` + call + `], "results": [{"tool_call_id": "zz", "output": 1}]}`,
			[]string{`bad.json: $.results[0].tool_call_id: no call has tool_call_id "zz"`}},
		{"result of a bad call", `{` + run + `, "calls": [{"tool_call_id": "c", "tool_name": "t", "domain": "d", "op": "o"}], "results": [{"tool_call_id": "c", "output": 1}]}`,
			[]string{"bad.json: $.calls[0].operation_index: missing required field"}},
		{"duplicate result", `{` + run + `, "calls": [` + call + `], "results": [{"tool_call_id": "c", "output": 1}, {"tool_call_id": "c", "output": 2}]}`,
			[]string{`bad.json: $.results[1].tool_call_id: duplicate result for tool_call_id "c" (first at $.results[0].tool_call_id)`}},
		{"events not array", `{` + run + `, "calls": [], "events": "e"}`, []string{"bad.json: $.events: expected array, got string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := CompositionTrace(parseReport(t, []byte(tt.doc)), "bad.json")
			if err == nil {
				t.Fatalf("CompositionTrace = trace %s, want errors %q", tr.ID, tt.want)
			}
			var list trace.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error %T %v is not a trace.ErrorList", err, err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompositionAdapter checks that the loader recognizes reports by their
// shape and that the examples load, in both directories, as traces of
// the same procedure.
func TestCompositionAdapter(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want bool
	}{
		{`{"run": {}, "calls": []}`, true},
		{`{"run": {}}`, false},
		{`{"calls": []}`, false},
	} {
		var doc map[string]any
		if err := json.Unmarshal([]byte(tt.doc), &doc); err != nil {
			t.Fatal(err)
		}
		if got := (Composition{}).Detect(doc); got != tt.want {
			t.Errorf("Composition.Detect(%s) = %v, want %v", tt.doc, got, tt.want)
		}
	}
	res, err := Load(context.Background(), compositionExamples, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tr := range res.Traces {
		ids = append(ids, tr.ID)
		if tr.SourceHash == "" || tr.Origin.Path == "" {
			t.Errorf("trace %s: source hash %q, origin %q; want both set by the loader", tr.ID, tr.SourceHash, tr.Origin)
		}
		var sigs []string
		for i := range tr.Actions {
			sigs = append(sigs, tr.Actions[i].Signature())
		}
		want := []string{
			"composition_run:composition_run:binding_manifest_hash,language,requested_side_effect_ceiling,snippet_hash",
			"tool_call:read_file:path",
			"tool_call:list_pull_requests:base,repo,state",
			"tool_call:get_combined_status:ref,repo",
		}
		if diff := cmp.Diff(want, sigs); diff != "" {
			t.Errorf("trace %s signatures (-want +got):\n%s", tr.ID, diff)
		}
	}
	want := []string{"composition-comp-run-0003", "composition-comp-run-0001", "composition-comp-run-0002"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("example trace ids (-want +got):\n%s", diff)
	}
}

func compileCompositionSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(compositionSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("parsing %s: %v", compositionSchemaFile, err)
	}
	if id, _ := doc.(map[string]any)["$id"].(string); id != compositionSchemaID {
		t.Errorf("%s: $id = %q, want %q", compositionSchemaFile, id, compositionSchemaID)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(compositionSchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(compositionSchemaID)
	if err != nil {
		t.Fatalf("compiling %s: %v", compositionSchemaFile, err)
	}
	return sch
}

// TestCompositionSchemaAccepts checks that the schema and the decoder both
// accept every shipped example and test report.
func TestCompositionSchemaAccepts(t *testing.T) {
	sch := compileCompositionSchema(t)
	n := 0
	for _, dir := range []string{compositionExamples, compositionTestdata} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			n++
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if err := sch.Validate(inst); err != nil {
				t.Errorf("%s: schema rejects a report: %v", path, err)
			}
			if _, err := CompositionTrace(parseReport(t, data), path); err != nil {
				t.Errorf("%s: CompositionTrace rejects a report: %v", path, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 4 {
		t.Errorf("checked %d reports, want the 3 examples and the test reports", n)
	}
}

// TestCompositionSchemaAgreesOnInvalid checks reports both the schema and
// the decoder reject, so the schema promises no more than is read.
func TestCompositionSchemaAgreesOnInvalid(t *testing.T) {
	sch := compileCompositionSchema(t)
	const run = `"run": {"id": "r", "snippet_hash": "s", "binding_manifest_hash": "m"}`
	const call = `"operation_index": 0, "tool_call_id": "c", "tool_name": "t", "domain": "d", "op": "o"`
	docs := []string{
		`{"calls": []}`,
		`{` + run + `}`,
		`{"run": null, "calls": []}`,
		`{` + run + `, "calls": null}`,
		`{"run": {"id": "", "snippet_hash": "s", "binding_manifest_hash": "m"}, "calls": []}`,
		`{"run": {"id": "r", "binding_manifest_hash": "m"}, "calls": []}`,
		`{"run": {"id": "r", "snippet_hash": "s", "binding_manifest_hash": "m", "ok": "yes"}, "calls": []}`,
		`{` + run + `, "calls": [1]}`,
		`{` + run + `, "calls": [{"tool_call_id": "c", "tool_name": "t", "domain": "d", "op": "o"}]}`,
		`{` + run + `, "calls": [{` + call + `, "duration_ms": -1}]}`,
		`{` + run + `, "calls": [{` + call + `, "duration_ms": 0.5}]}`,
		`{` + run + `, "calls": [{` + call + `, "annotations": []}]}`,
		`{` + run + `, "calls": [{"operation_index": -2, "tool_call_id": "c", "tool_name": "t", "domain": "d", "op": "o"}]}`,
		`{` + run + `, "calls": [{"operation_index": 0, "tool_call_id": "c", "tool_name": "t", "domain": "", "op": "o"}]}`,
		`{` + run + `, "calls": [], "results": [{"output": 1}]}`,
		`{` + run + `, "calls": [], "events": {}}`,
	}
	for _, doc := range docs {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if sch.Validate(inst) == nil {
			t.Errorf("schema accepts %s", doc)
		}
		if _, err := CompositionTrace(parseReport(t, []byte(doc)), "bad.json"); err == nil {
			t.Errorf("CompositionTrace accepts %s", doc)
		}
	}
}

// FuzzCompositionTrace checks that no report makes the conversion panic,
// that failures are trace.ErrorLists, and that every trace it builds
// survives the trace codec.
func FuzzCompositionTrace(f *testing.F) {
	for _, dir := range []string{compositionTestdata, filepath.Join(compositionExamples, "runs")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(`{"run": {"id": "r", "snippet_hash": "s", "binding_manifest_hash": "m"}, "calls": [{"operation_index": 0, "tool_call_id": "c", "tool_name": "t", "domain": "d", "op": "o", "raw_input": [1]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := DecodeDocument(data, "fuzz.json", 0)
		if err != nil {
			var list trace.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error %T %v is not a non-empty trace.ErrorList", err, err)
			}
			return
		}
		trace.Normalize(tr)
		enc, err := json.Marshal(tr)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := trace.Decode(enc, "fuzz.json", 0)
		if err != nil {
			t.Fatalf("Decode(Marshal(DecodeDocument(%q))): %v\n%s", data, err, enc)
		}
		if diff := cmp.Diff(tr, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func BenchmarkCompositionTrace(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(compositionExamples, "runs", "01-release-readiness.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeDocument(data, "r.json", 0); err != nil {
			b.Fatal(err)
		}
	}
}
