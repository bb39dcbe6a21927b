package candidate

import "encoding/json"

// JSONType is the report's type name of a decoded JSON value: null,
// string, bool, number, object or array ("unknown" for anything else).
// A parameter whose examples have several types is "mixed".
func JSONType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "bool"
	case json.Number, float64, int, int64:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "unknown"
}
