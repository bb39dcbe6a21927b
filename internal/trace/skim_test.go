package trace

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkSkim checks Parser.Skim against Decode on data: when Skim accepts a
// document, Decode decodes it and every field of the skim is what the
// decoded (and normalized) trace says; when Decode refuses it, Skim
// declines it. It reports whether Skim accepted data.
func checkSkim(t *testing.T, p *Parser, data []byte, file string, line int) bool {
	t.Helper()
	s, ok := p.Skim(data, file, line)
	tr, err := Decode(data, file, line)
	if !ok {
		if s != nil {
			t.Fatalf("Skim(%q) declined but returned %+v", data, s)
		}
		return false
	}
	if err != nil {
		t.Fatalf("Skim(%q) accepted a document Decode refuses: %v", data, err)
	}
	Normalize(tr)
	var doc map[string]any
	if v, err := ParseJSON(data, file, line); err == nil {
		doc, _ = v.(map[string]any)
	}
	for _, key := range []string{"payload", "resourceSpans"} {
		if _, ok := doc[key]; ok {
			t.Fatalf("Skim(%q) accepted a document with %q, which the loader may take for a session record", data, key)
		}
	}
	if _, ok := doc["actions"]; !ok {
		t.Fatalf("Skim(%q) accepted a document without actions", data)
	}
	want := &Skim{ID: tr.ID, MetadataViolation: unresolvedPolicyViolation(tr.Metadata)}
	want.Agent, want.HasAgent = tr.Metadata["agent"]
	want.ParentSession, _ = tr.Metadata["parent_session_id"].(string)
	for i := range tr.Actions {
		a := &tr.Actions[i]
		want.Actions = append(want.Actions, SkimAction{
			ID:                         a.ID,
			Kind:                       a.Kind,
			Name:                       a.Name,
			Signature:                  a.Signature(),
			Failed:                     a.Failed(),
			Violation:                  unresolvedPolicyViolation(a.Metadata),
			NondeterministicSideEffect: a.NondeterministicSideEffect(),
			HasSideEffects:             len(a.SideEffects) > 0,
			ApprovalRequired:           a.Approval != nil && a.Approval.Required,
		})
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Skim(%q) =\n%+v\nwant (from Decode)\n%+v", data, s, want)
	}
	gotAction, gotOK := s.PolicyViolation()
	wantAction, wantOK := tr.PolicyViolation()
	if gotAction != wantAction || gotOK != wantOK {
		t.Fatalf("Skim(%q).PolicyViolation() = %q, %v; Trace.PolicyViolation() = %q, %v", data, gotAction, gotOK, wantAction, wantOK)
	}
	return true
}

// skimSeeds are documents that reach every branch of Skim: each field in
// its usual form, null and the rarer forms Skim declines, and the
// problems Decode reports.
var skimSeeds = []string{
	`{"actions":[]}`,
	`{"actions":[{"kind":"k","name":"n"}]}`,
	` {"version":0,"id":"","actions":[{"id":null,"kind":"k","name":"n","parameters":null}]} `,
	`{"version":1,"id":"t","source":"x","source_hash":null,"workflow_id":"w","started_at":"s","finished_at":"f",` +
		`"flow":{"trace_id":"a","agent_run_id":null,"atom_ids":["x"],"slice_ids":null,"other":{"a":[1]}},` +
		`"actions":[{"id":"a1","kind":"tool_call","name":"git.push","timestamp":"t","parameters":{"repo":"r","branch":{"x":1},"a\u00e9":[1,2]},` +
		`"inputs":[1],"output":{"ok":true,"n":[null]},"observed_output":"o","capabilities":["b","a","a"],"required_secrets":[],` +
		`"side_effects":[{"kind":"git_push","target":"r","capability":"c","mutation":"m","metadata":{"nondeterministic":false,"x":1}}],` +
		`"approval":{"prompt":"p","approver":null,"required":true,"boundary":"b","x":1},` +
		`"cost":{"model":"m","model_calls":1,"input_tokens":10,"output_tokens":0,"total_cost_usd":0.25,"wall_ms":3,"x":"y"},` +
		`"duration_ms":5,"deterministic":true,"fuzzy":false,"metadata":{"error":false,"exit_code":0,"note":"n"},"extra":1}],` +
		`"replay_run":{"a":1},"replay_allowlist":[{"path":"/a/*/b","reason":"r","replacement":null}],` +
		`"usage":{"model_calls":1,"input_tokens":2,"output_tokens":3,"total_cost_usd":0.001,"wall_ms":4},` +
		`"metadata":{"agent":{"name":"claude","v":[1]},"x":1},"unknown":[{}]}`,
	`{"actions":[{"kind":"observation","name":"read","metadata":{"exit_code":2}},{"kind":"file_mutation","name":"w","metadata":{"error":true}}],"metadata":{"agent":null}}`,
	`{"actions":[{"kind":"k","name":"n","side_effects":[{"kind":"w","target":"t"}],"deterministic":false}]}`,
	`{"actions":[{"kind":"k","name":"n","side_effects":[{"kind":"w"}],"fuzzy":true}]}`,
	`{"actions":[{"kind":"k","name":"n","side_effects":[{"kind":"w"}],"metadata":{"nondeterministic_side_effect":true}}]}`,
	`{"actions":[{"kind":"k","name":"n","side_effects":[{"kind":"w","metadata":{"nondeterministic":true}}]}]}`,
	`{"actions":[{"kind":"k","name":"n","fuzzy":true}]}`,
	`{"actions":[{"kind":"k","name":"n"}],"metadata":{"parent_session_id":"s1","agent":"a"}}`,
	`{"actions":[{"kind":"k","name":"n"}],"metadata":{"parent_session_id":"s1","parent_session_id":7}}`,
	`{"actions":[{"kind":"k","name":"n","metadata":{"Policy_Violation":["open"]}}],"metadata":{"POLICY_STATUS":"Resolved"}}`,
	`{"actions":[{"kind":"k","name":"n"}],"metadata":{"x_unresolved_policy_violation_y":"UNRESOLVED"}}`,
	`{"actions":[{"kind":"k","name":"n","metadata":{"pol\u0130cy_violation":true}}]}`,
	`{"actions":[{"kind":"k","name":"n","metadata":{"exit_code":1e400}}]}`,
	`{"actions":[{"id":"action_2","kind":"k","name":"n"},{"kind":"k","name":"n"}]}`,
	`{"actions":[{"id":"a","kind":"k","name":"n"},{"id":"a","kind":"k","name":"n"}]}`,
	`{"actions":[{"kind":"k","name":"n","parameters":{"a":1,"a":2}}]}`,
	`{"actions":[{"kind":"k","name":"n","output":{"a":1,"\u0061":2}}]}`,
	`{"actions":[{"kind":"k","name":"n"}],"actions":[]}`,
	`{"actions":[{"kind":"","name":"n"}]}`,
	`{"actions":[{"kind":"k"}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"input_tokens":1e3}}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"input_tokens":-1}}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"total_cost_usd":-0.5}}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"total_cost_usd":1e-3}}]}`,
	`{"actions":[{"kind":"k","name":"n","duration_ms":"5"}]}`,
	`{"version":2,"actions":[]}`,
	`{"version":1.0,"actions":[]}`,
	`{"actions":[],"replay_allowlist":[{"path":"a","reason":"r"}]}`,
	`{"actions":[],"payload":{}}`,
	`{"actions":[],"resourceSpans":[]}`,
	`{"actions":{}}`,
	`{"stages":[]}`,
	`[1]`,
	`{"actions":[]} x`,
	`{"actions":[{"kind":"k","name":"n","output":"\ud800"}]}`,
	`{"actions":[{"kind":"k","name":"n","parameters":{"b":1,"a":2,"":3}}]}`,
	"{\"actions\":[{\"kind\":\"k\xff\",\"name\":\"n\",\"parameters\":{\"\xfe\":1,\"\xff\":2}}]}",
}

func TestSkimSeeds(t *testing.T) {
	var p Parser
	accepted := 0
	for _, seed := range skimSeeds {
		if checkSkim(t, &p, []byte(seed), "runs/a.jsonl", 3) {
			accepted++
		}
	}
	// Most seeds are there to be declined; the usual forms must not be.
	if accepted < 15 {
		t.Errorf("Skim accepted %d seeds, want the 15 or more written in the usual forms", accepted)
	}
}

// TestSkimTestdata checks Skim on every trace under testdata, as a file
// and as a JSON Lines record: the valid ones written in the usual forms
// are accepted, the invalid ones declined.
func TestSkimTestdata(t *testing.T) {
	// Written in forms Skim leaves to Decode (a count as 1.2e2).
	declined := map[string]bool{"nulls_and_numbers.json": true}
	for _, dir := range []string{"valid", "invalid"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no testdata in %s: %v", dir, err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var p Parser
			ok := checkSkim(t, &p, data, filepath.Base(file), 0)
			want := dir == "valid" && !declined[filepath.Base(file)]
			if ok != want {
				t.Errorf("Skim(%s) accepted = %v, want %v", file, ok, want)
			}
			if line := bytes.ReplaceAll(data, []byte("\n"), nil); checkSkim(t, &p, line, "all.jsonl", 7) != want {
				t.Errorf("Skim(%s as one line) accepted = %v, want %v", file, !want, want)
			}
		}
	}
}

// TestSkimSharesParser checks that a Parser skims and parses documents in
// any order with the same results, its scratch space left clean between
// them, including after a declined document.
func TestSkimSharesParser(t *testing.T) {
	var p Parser
	for range 3 {
		for _, seed := range skimSeeds {
			checkSkim(t, &p, []byte(seed), "a.json", 0)
			if _, err := p.Parse([]byte(seed), "a.json", 0); err == nil {
				checkSkim(t, &p, []byte(seed), "a.json", 0)
			}
		}
	}
}

// FuzzSkim checks that Skim accepts only documents Decode decodes, and
// that what it keeps of them is what the decoded trace says.
func FuzzSkim(f *testing.F) {
	for _, seed := range skimSeeds {
		f.Add([]byte(seed), 0)
	}
	for _, dir := range []string{"testdata/valid", "testdata/invalid"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data, 0)
		}
	}
	var p Parser
	f.Fuzz(func(t *testing.T, data []byte, line int) {
		line = max(0, line%1000)
		checkSkim(t, &p, data, "runs/"+strings.Repeat("x", line%3)+"a.json", line)
	})
}

// benchDocument is a trace document shaped like a generated corpus's:
// 50 actions with parameters, outputs, capabilities, side effects and
// costs, about 20 KB.
func benchDocument() []byte {
	var b strings.Builder
	b.WriteString(`{"version":1,"id":"trace-000001","started_at":"2025-03-03T09:03:26.000Z","flow":{"agent_run_id":"run-000001"},"actions":[`)
	for i := range 50 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"t000001-a%03d","kind":"file_mutation","name":"proc%02d.step%02d_update","timestamp":"2025-03-03T09:03:29.273Z",`+
			`"parameters":{"message":"proc%02d: change %d","replicas":%d,"timeout_s":30,"repo":"acme/svc-p08-%04d"},`+
			`"output":{"status":"applied","request_id":"req-f2fc7b4b6f%02d","lines":["a","b","c"]},"capabilities":["fs.write"],`+
			`"side_effects":[{"kind":"file_write","target":"config/proc08/step%02d.yaml","capability":"fs.write"}],`+
			`"cost":{"model":"example-agent-llm","model_calls":1,"input_tokens":%d,"output_tokens":97,"total_cost_usd":0.008016,"wall_ms":1024},`+
			`"duration_ms":172,"deterministic":true}`, i, i%8, i, i%8, i, i%4, i, i, i, 1000+i)
	}
	b.WriteString(`],"usage":{"model_calls":50,"input_tokens":60000,"output_tokens":4000,"total_cost_usd":0.5,"wall_ms":90000},"metadata":{"goal":"release"}}`)
	return []byte(b.String())
}

// BenchmarkSkim compares skimming a trace document (read=skim) with
// decoding it straight into a Trace (read=direct) and through generic
// values (read=decode: Parse and FromValue), one core.
func BenchmarkSkim(b *testing.B) {
	doc := benchDocument()
	var p Parser
	if _, ok := p.Skim(doc, "a.json", 0); !ok {
		b.Fatal("the benchmark document is declined")
	}
	b.Run("read=skim", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := p.Skim(doc, "a.json", 0); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("read=direct", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := p.DecodeDirect(doc, "a.json", 0); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("read=decode", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			v, err := p.Parse(doc, "a.json", 0)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := FromValue(v.(map[string]any), "a.json", 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
