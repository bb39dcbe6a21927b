package candidate

import (
	"io"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
)

// EncodeJSON renders v as canonical JSON: every object's keys sorted,
// two-space indentation, no HTML escaping, numbers as written, and a
// trailing newline (jsontext.Canonical). See WriteJSON.
func EncodeJSON(v any) ([]byte, error) {
	return jsontext.Canonical(v)
}

// WriteJSON writes v to w as canonical JSON, as EncodeJSON returns it,
// walking v as it writes (jsontext.WriteCanonical): a report of hundreds
// of megabytes costs its output and one value's compact text at a time,
// not a second copy of itself.
func WriteJSON(w io.Writer, v any) error {
	return jsontext.WriteCanonical(w, v)
}
