package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// ReadParams reads a file of run parameters: one JSON object, a regular
// file of at most MaxArgumentBytes. An object that names a parameter
// twice is refused with the line and path of the second: the decoder
// would keep the last, so a reviewer of the file could read another value
// than the one the run gets.
func ReadParams(file string) (Params, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxArgumentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxArgumentBytes {
		return nil, fmt.Errorf("%s: more than %d bytes of parameters", file, MaxArgumentBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, fmt.Errorf("%s: not a JSON object of parameters", file)
	}
	if errs := trace.Duplicates(data, file, 1); len(errs) > 0 {
		return nil, errs
	}
	if dec.More() {
		return nil, errors.New(file + ": data after the JSON object")
	}
	return Params(obj), nil
}
