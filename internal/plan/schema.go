package plan

import (
	"bytes"
	_ "embed"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaID is the $id of the task-plan JSON Schema.
const SchemaID = "https://crystallize.dev/schemas/task-plan.v1.json"

// schemaJSON is the task-plan JSON Schema (draft 2020-12). The copy in the
// repository's schemas directory is checked against it by a test, so the
// published schema and the one the validator applies cannot drift.
//
//go:embed task-plan.v1.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of a task plan, the bytes
// of schemas/task-plan.v1.json. The caller may modify the returned slice.
func Schema() []byte {
	return bytes.Clone(schemaJSON)
}

// compiledSchema compiles the embedded schema once. The schema is a
// constant of the program, so a failure here is a bug that the package's
// tests catch; Validate reports it as an error rather than panicking.
var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		return nil, err
	}
	return c.Compile(SchemaID)
})
