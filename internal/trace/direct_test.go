package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// checkDirect checks Parser.DecodeDirect against Decode on data: when
// DecodeDirect accepts a document, Decode decodes it to an equal trace;
// when Decode refuses it, DecodeDirect declines it. It reports whether
// DecodeDirect accepted data.
func checkDirect(t *testing.T, p *Parser, data []byte, file string, line int) bool {
	t.Helper()
	got, ok := p.DecodeDirect(data, file, line)
	want, err := Decode(data, file, line)
	if !ok {
		if got != nil {
			t.Fatalf("DecodeDirect(%q) declined but returned %+v", data, got)
		}
		return false
	}
	if err != nil {
		t.Fatalf("DecodeDirect(%q) accepted a document Decode refuses: %v", data, err)
	}
	// reflect.DeepEqual tells nil from empty maps and slices; cmp.Diff,
	// far slower on deep values, only names the difference.
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("DecodeDirect(%q) differs from Decode (-Decode +DecodeDirect):\n%s", data, cmp.Diff(want, got))
	}
	return true
}

// directSeeds reach the members DecodeDirect reads that skimSeeds leave
// out: unknown members of every object it reads itself, and the forms of
// each typed field.
var directSeeds = []string{
	`{"id":"t","actions":[{"kind":"k","name":"n","x":null,"y":{"a":[]}}],"z":null}`,
	`{"actions":[{"kind":"k","name":"n","side_effects":[{"kind":"w","target":null,"capability":null,"mutation":"m","x":[1,{"b":"c"}]}]}]}`,
	`{"actions":[{"kind":"k","name":"n","side_effects":[]}]}`,
	`{"actions":[{"kind":"k","name":"n","side_effects":null,"capabilities":null,"required_secrets":["s"]}]}`,
	`{"actions":[{"kind":"k","name":"n","approval":{"required":null,"x":1}}]}`,
	`{"actions":[{"kind":"k","name":"n","approval":{"required":false}}]}`,
	`{"actions":[{"kind":"k","name":"n","approval":{}}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{}}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"model":null,"model_calls":null,"total_cost_usd":null,"wall_ms":0}}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"total_cost_usd":0}}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"total_cost_usd":12345678901234567890.5}}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"input_tokens":999999999999999999}}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"input_tokens":9999999999999999999}}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"input_tokens":-0}}]}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"input_tokens":1.0}}]}`,
	`{"actions":[{"kind":"k","name":"n","duration_ms":0,"deterministic":null,"fuzzy":null}]}`,
	`{"actions":[{"kind":"k","name":"n","duration_ms":null}]}`,
	`{"actions":[{"kind":"k","name":"n","duration_ms":1e2}]}`,
	`{"actions":[{"kind":"k","name":"n","inputs":null,"output":null,"observed_output":[null]}]}`,
	`{"actions":[{"kind":"k","name":"n","parameters":{}}],"metadata":{},"replay_run":{}}`,
	`{"actions":[{"kind":"k","name":"n","parameters":[]}]}`,
	`{"actions":[{"kind":"k","name":"n","metadata":"m"}]}`,
	`{"actions":[{"id":"","kind":"k","name":"n"},{"id":"action_1","kind":"k","name":"n"}]}`,
	`{"actions":[{"kind":"k","name":"n","side_effects":[{"target":"t"}]}]}`,
	`{"actions":[{"kind":"k","name":"n","side_effects":[1]}]}`,
	`{"actions":[{"kind":"k","name":"n","capabilities":[1]}]}`,
	`{"actions":[{"kind":"k","name":"n","timestamp":5}]}`,
	`{"actions":[],"flow":null,"usage":null,"replay_allowlist":null,"metadata":null,"replay_run":null}`,
	`{"actions":[],"flow":{},"usage":{},"replay_allowlist":[]}`,
	`{"actions":[],"flow":{"transcript_ref":"r","atom_ids":[],"slice_ids":["a","b"],"x":1}}`,
	`{"actions":[],"flow":{"atom_ids":[null]}}`,
	`{"actions":[],"flow":[]}`,
	`{"actions":[],"usage":{"model_calls":0,"input_tokens":1,"output_tokens":2,"total_cost_usd":3.5,"wall_ms":4,"x":{"y":1}}}`,
	`{"actions":[],"usage":{"wall_ms":1.5}}`,
	`{"actions":[],"replay_allowlist":[{"path":"/a","reason":"r","replacement":{"v":1},"x":true}]}`,
	`{"actions":[],"replay_allowlist":[{"path":"/a"}]}`,
	`{"actions":[],"replay_allowlist":[{"reason":"r"}]}`,
	`{"actions":[],"replay_allowlist":[{"path":"/a","reason":""}]}`,
	`{"actions":[],"replay_allowlist":[1]}`,
	`{"actions":[],"replay_run":[]}`,
	`{"actions":[],"id":null,"source":"s","source_hash":"h","workflow_id":null,"started_at":null,"finished_at":"f"}`,
	`{"actions":[],"id":7}`,
	`{"version":null,"actions":[]}`,
	`{"version":1,"actions":[]}`,
	`{"version":-1,"actions":[]}`,
	`{"version":10,"actions":[]}`,
	`{"actions":[],"payload":{"a":1},"resourceSpans":[]}`,
	`{"\u0061ctions":[{"k\u0069nd":"k","name":"n\u00e9","parameters":{"\u00e9":"\n"}}]}`,
	`{"actions":[],"x":{"a":1},"x":{"a":1}}`,
	`{"actions":[{"kind":"k","name":"n","cost":{"model":"m","model":"m"}}]}`,
	`{"actions":[{"kind":"k","name":"n","output":{"a":{"b":1,"b":2}}}]}`,
	`{"actions":[]`,
	`{"actions":[]}}`,
	"\t{\"actions\" : [ { \"kind\" : \"k\" , \"name\" : \"n\" } ] }\n",
	`{"actions":[{"kind":"k","name":"n","output":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}]}`,
	`{"actions":[{"kind":"k","name":"n","output":` + strings.Repeat("[", 9996) + strings.Repeat("]", 9996) + `}]}`,
	`{"actions":[{"kind":"k","name":"n","output":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}]}`,
}

func TestDecodeDirectSeeds(t *testing.T) {
	var p Parser
	accepted := 0
	for _, seed := range append(append([]string(nil), skimSeeds...), directSeeds...) {
		if checkDirect(t, &p, []byte(seed), "runs/a.jsonl", 3) {
			accepted++
		}
	}
	// Most seeds are there to be declined; the usual forms must not be.
	if accepted < 45 {
		t.Errorf("DecodeDirect accepted %d seeds, want the 45 or more written in the usual forms", accepted)
	}
}

// TestDecodeDirectTestdata checks DecodeDirect on every trace under
// testdata, as a file and as a JSON Lines record: the valid ones written
// in the usual forms are accepted, the invalid ones declined.
func TestDecodeDirectTestdata(t *testing.T) {
	// Written in forms DecodeDirect leaves to Decode (a count as 1.2e2).
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
			want := dir == "valid" && !declined[filepath.Base(file)]
			if ok := checkDirect(t, &p, data, filepath.Base(file), 0); ok != want {
				t.Errorf("DecodeDirect(%s) accepted = %v, want %v", file, ok, want)
			}
			if line := bytes.ReplaceAll(data, []byte("\n"), nil); checkDirect(t, &p, line, "all.jsonl", 7) != want {
				t.Errorf("DecodeDirect(%s as one line) accepted = %v, want %v", file, !want, want)
			}
		}
	}
}

// TestDecodeDirectBenchDocument checks the document shaped like a
// generated corpus's, which is what reading back a store meets most.
func TestDecodeDirectBenchDocument(t *testing.T) {
	var p Parser
	if !checkDirect(t, &p, benchDocument(), "a.json", 0) {
		t.Fatal("DecodeDirect declined the generated-corpus document")
	}
}

// TestDecodeDirectSharesParser checks that a Parser decodes, skims and
// parses documents in any order with the same results, its scratch space
// left clean between them, including after a declined document.
func TestDecodeDirectSharesParser(t *testing.T) {
	var p Parser
	seeds := append(append([]string(nil), directSeeds...), skimSeeds...)
	for range 3 {
		for _, seed := range seeds {
			checkDirect(t, &p, []byte(seed), "a.json", 0)
			p.Skim([]byte(seed), "a.json", 0)
			checkDirect(t, &p, []byte(seed), "a.json", 0)
			if _, err := p.Parse([]byte(seed), "a.json", 0); err == nil {
				checkDirect(t, &p, []byte(seed), "a.json", 0)
			}
		}
	}
}

// FuzzDecodeDirect checks that DecodeDirect accepts only documents Decode
// decodes, and decodes them to the same trace.
func FuzzDecodeDirect(f *testing.F) {
	for _, seed := range append(append([]string(nil), skimSeeds...), directSeeds...) {
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
	f.Add(benchDocument(), 0)
	var p Parser
	f.Fuzz(func(t *testing.T, data []byte, line int) {
		line = max(0, line%1000)
		checkDirect(t, &p, data, "runs/"+strings.Repeat("x", line%3)+"a.json", line)
	})
}

// TestDecodeDirectSharesStrings checks that the strings a corpus repeats
// (kinds, names, side effects' targets, approvals' boundaries) are shared
// between the traces one Parser decodes, as Parse shares them, so that a
// second pass holding many examples does not hold a copy per action.
func TestDecodeDirectSharesStrings(t *testing.T) {
	const doc = `{"id": %q, "actions": [{"kind": "tool_call", "name": "git.push",
		"side_effects": [{"kind": "git_ref", "target": "main", "mutation": "update"}],
		"approval": {"required": true, "boundary": "push"}}]}`
	var p Parser
	var got []*Trace
	for _, id := range []string{"a", "b"} {
		tr, ok := p.DecodeDirect([]byte(fmt.Sprintf(doc, id)), "a.json", 1)
		if !ok {
			t.Fatalf("trace %s declined", id)
		}
		got = append(got, tr)
	}
	fields := func(tr *Trace) map[string]string {
		a := tr.Actions[0]
		return map[string]string{"kind": string(a.Kind), "name": a.Name, "side effect kind": a.SideEffects[0].Kind,
			"target": a.SideEffects[0].Target, "mutation": a.SideEffects[0].Mutation, "boundary": a.Approval.Boundary}
	}
	first := fields(got[0])
	for field, s := range fields(got[1]) {
		if unsafe.StringData(s) != unsafe.StringData(first[field]) {
			t.Errorf("%s %q is a copy, not shared", field, s)
		}
	}
}

// TestCostCacheTokens checks that the prompt-cache counts of a cost are
// read as fields by both decoders, not kept as unknown members, and are
// written back only when known.
func TestCostCacheTokens(t *testing.T) {
	doc := []byte(`{"id":"t","actions":[{"kind":"tool_call","name":"n","cost":{"model":"m","model_calls":1,"input_tokens":100,"output_tokens":5,"cache_read_tokens":60,"cache_write_tokens":30,"total_cost_usd":0,"wall_ms":0}}]}`)
	want := Cost{Model: "m", ModelCalls: 1, InputTokens: 100, OutputTokens: 5, CacheReadTokens: 60, CacheWriteTokens: 30}
	decoded, err := Decode(doc, "t.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	var p Parser
	direct, ok := p.DecodeDirect(doc, "t.json", 0)
	if !ok {
		t.Fatal("DecodeDirect declined the document")
	}
	for name, tr := range map[string]*Trace{"Decode": decoded, "DecodeDirect": direct} {
		if diff := cmp.Diff(want, *tr.Actions[0].Cost); diff != "" {
			t.Errorf("%s cost (-want +got):\n%s", name, diff)
		}
	}
	out, err := json.Marshal(decoded.Actions[0].Cost)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != `{"model":"m","model_calls":1,"input_tokens":100,"output_tokens":5,"cache_read_tokens":60,"cache_write_tokens":30,"total_cost_usd":0,"wall_ms":0}` {
		t.Errorf("encoded cost = %s", got)
	}
	out, _ = json.Marshal(Cost{Model: "m"})
	if strings.Contains(string(out), "cache") {
		t.Errorf("encoded cost without cache counts = %s, want none written", out)
	}
}
