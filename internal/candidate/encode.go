package candidate

import (
	"bytes"
	"encoding/json"
)

// EncodeJSON renders v as canonical JSON: every object's keys sorted,
// two-space indentation, no HTML escaping, numbers as written, and a
// trailing newline. Go structs encode their fields in declaration order, so
// v is first encoded, decoded into generic maps and encoded again.
func EncodeJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
