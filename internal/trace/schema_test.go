package trace

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const (
	schemaFile = "../../schemas/trace.v1.json"
	schemaID   = "https://crystallize.dev/schemas/trace.v1.json"
	// examplesDir holds the project's example traces; it is maintained
	// outside this package and may not exist yet in a partial checkout.
	examplesDir = "../../examples"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("parsing %s: %v", schemaFile, err)
	}
	if id, _ := doc.(map[string]any)["$id"].(string); id != schemaID {
		t.Errorf("%s: $id = %q, want %q", schemaFile, id, schemaID)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(schemaID)
	if err != nil {
		t.Fatalf("compiling %s: %v", schemaFile, err)
	}
	return sch
}

// checkAccepted asserts that both the schema and Decode accept data.
func checkAccepted(t *testing.T, sch *jsonschema.Schema, name string, data []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s: schema rejects a valid trace: %v", name, err)
	}
	if _, err := Decode(data, name, 0); err != nil {
		t.Errorf("%s: Decode rejects a trace: %v", name, err)
	}
}

func TestSchemaAcceptsTestdata(t *testing.T) {
	sch := compileSchema(t)
	files, err := filepath.Glob("testdata/valid/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no valid testdata: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkAccepted(t, sch, f, data)
	}
}

// TestSchemaAcceptsExamples validates every trace under examples/. Set
// CRYSTALLIZE_REQUIRE_EXAMPLES=1 (as CI does) to make a missing directory a
// failure instead of a skip. JSON files there that are not crystallization
// traces (no top-level "actions": run records, plans, reports) are another
// format's business and are only logged.
func TestSchemaAcceptsExamples(t *testing.T) {
	if _, err := os.Stat(examplesDir); err != nil {
		if os.Getenv("CRYSTALLIZE_REQUIRE_EXAMPLES") == "1" {
			t.Fatalf("examples directory %s is required (CRYSTALLIZE_REQUIRE_EXAMPLES=1): %v", examplesDir, err)
		}
		t.Skipf("examples directory %s not found; set CRYSTALLIZE_REQUIRE_EXAMPLES=1 to require it", examplesDir)
	}
	sch := compileSchema(t)
	traces := 0
	err := filepath.WalkDir(examplesDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		v, err := ParseJSON(data, path, 0)
		if err != nil {
			t.Errorf("%v", err)
			return nil
		}
		if obj, ok := v.(map[string]any); !ok || obj["actions"] == nil {
			t.Logf("%s: not a crystallization trace, not checked", path)
			return nil
		}
		traces++
		checkAccepted(t, sch, path, data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if traces == 0 && os.Getenv("CRYSTALLIZE_REQUIRE_EXAMPLES") == "1" {
		t.Errorf("no crystallization traces under %s", examplesDir)
	}
}

// TestSchemaAgreesOnInvalid checks documents that both the schema and
// Decode must reject, so the published schema does not promise more than
// the decoder accepts.
func TestSchemaAgreesOnInvalid(t *testing.T) {
	sch := compileSchema(t)
	docs := []string{
		`[]`,
		`{}`,
		`{"actions": {}}`,
		`{"actions": [{"kind": "tool_call"}]}`,
		`{"actions": [{"kind": "", "name": "n"}]}`,
		`{"actions": [{"kind": "k", "name": "n", "side_effects": "file_write"}]}`,
		`{"actions": [{"kind": "k", "name": "n", "side_effects": [{"target": "x"}]}]}`,
		`{"actions": [{"kind": "k", "name": "n", "capabilities": [1]}]}`,
		`{"actions": [{"kind": "k", "name": "n", "duration_ms": -1}]}`,
		`{"actions": [{"kind": "k", "name": "n", "duration_ms": 1.5}]}`,
		`{"actions": [{"kind": "k", "name": "n", "cost": {"total_cost_usd": "1"}}]}`,
		`{"actions": [{"kind": "k", "name": "n", "approval": {"required": "yes"}}]}`,
		`{"actions": [{"kind": "k", "name": "n", "parameters": []}]}`,
		`{"actions": [], "version": 2}`,
		`{"actions": [], "version": "1"}`,
		`{"actions": [], "id": 3}`,
		`{"actions": [], "flow": {"atom_ids": "a"}}`,
		`{"actions": [], "usage": {"wall_ms": -2}}`,
		`{"actions": [], "metadata": "m"}`,
		`{"actions": [], "replay_allowlist": [{"path": "run_id", "reason": "r"}]}`,
		`{"actions": [], "replay_allowlist": [{"path": "/a~2", "reason": "r"}]}`,
		`{"actions": [], "replay_allowlist": [{"path": "/run_id"}]}`,
	}
	for _, doc := range docs {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err == nil {
			t.Errorf("schema accepts invalid %s", doc)
		}
		if _, err := Decode([]byte(doc), "bad.json", 0); err == nil {
			t.Errorf("Decode accepts invalid %s", doc)
		}
	}
	files, _ := filepath.Glob("testdata/invalid/*.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(data, f, 0); err == nil {
			t.Errorf("Decode accepts %s", f)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			continue // not JSON: nothing for the schema to say
		}
		// Duplicate action ids are the one rule a schema cannot state.
		if err := sch.Validate(inst); err == nil && !strings.Contains(f, "duplicate_ids") {
			t.Errorf("schema accepts %s", f)
		}
	}
}

// TestSchemaAcceptsConformanceTraces validates the shared conformance
// traces (the original tool's own test inputs, read in place) against the
// schema and the decoder. CRYSTALLIZE_REQUIRE_CONFORMANCE=1 makes a
// missing corpus a failure instead of a skip.
func TestSchemaAcceptsConformanceTraces(t *testing.T) {
	const dir = "../../../shared/fixtures/harn"
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CRYSTALLIZE_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("conformance fixtures %s are required (CRYSTALLIZE_REQUIRE_CONFORMANCE=1): %v", dir, err)
		}
		t.Skipf("conformance fixtures %s not found; set CRYSTALLIZE_REQUIRE_CONFORMANCE=1 to require them", dir)
	}
	sch := compileSchema(t)
	var files []string
	for _, pattern := range []string{"crystallize_v2_release/*/*.json", "scenarios/*/*.json"} {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no traces under %s", dir)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkAccepted(t, sch, f, data)
	}
}
