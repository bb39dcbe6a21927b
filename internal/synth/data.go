package synth

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// MaxDataBytes bounds a data file.
const MaxDataBytes = 64 << 20

// LoadData reads an experiment's input. Format is "json", "jsonl" or
// "csv", or empty to go by the file's extension (.jsonl and .ndjson are
// JSON Lines, .csv is CSV, anything else JSON).
//
//   - JSON is one value.
//   - JSON Lines is a list with one value per non-empty line.
//   - CSV is a list of rows, each a dict keyed by the header; a cell that
//     parses as an integer or a finite float is a number, an empty cell
//     is None, anything else a string.
//
// Numbers written without a fraction or exponent are integers. Problems
// are a trace.ErrorList naming the file and line.
func LoadData(file, format string) (any, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("reading data: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxDataBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading data: %w", err)
	}
	return decodeData(data, file, format)
}

// decodeData decodes what LoadData read from file: at most MaxDataBytes,
// one more meaning the file is larger.
func decodeData(data []byte, file, format string) (any, error) {
	if len(data) > MaxDataBytes {
		return nil, trace.ErrorList{{File: file, Msg: fmt.Sprintf("data file is larger than %d bytes", MaxDataBytes)}}
	}
	if format == "" {
		switch strings.ToLower(filepath.Ext(file)) {
		case ".jsonl", ".ndjson":
			format = "jsonl"
		case ".csv":
			format = "csv"
		default:
			format = "json"
		}
	}
	return ParseData(data, file, format)
}

// ParseData decodes data in format; see LoadData.
func ParseData(data []byte, file, format string) (any, error) {
	switch format {
	case "json":
		v, err := decodeOne(data)
		if err != nil {
			return nil, trace.ErrorList{{File: file, Line: lineOf(data, err), Msg: "malformed JSON: " + err.Error()}}
		}
		return v, nil
	case "jsonl":
		var out []any
		var errs trace.ErrorList
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, MaxDataBytes)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			v, err := decodeOne(line)
			if err != nil {
				errs = append(errs, &trace.Error{File: file, Line: n, Msg: "malformed JSON: " + err.Error()})
				continue
			}
			out = append(out, v)
		}
		if err := sc.Err(); err != nil {
			errs = append(errs, &trace.Error{File: file, Msg: err.Error()})
		}
		if len(errs) > 0 {
			return nil, errs
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case "csv":
		return parseCSV(data, file)
	}
	return nil, fmt.Errorf("unknown data format %q", format)
}

func decodeOne(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one value")
	}
	return normalize(v), nil
}

func lineOf(data []byte, err error) int {
	if se, ok := err.(*json.SyntaxError); ok {
		return 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
	}
	return 0
}

func parseCSV(data []byte, file string) (any, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err == io.EOF {
		return []any{}, nil
	}
	if err != nil {
		return nil, csvError(file, err)
	}
	seen := map[string]bool{}
	for i, h := range header {
		if h == "" || seen[h] {
			return nil, trace.ErrorList{{File: file, Line: 1, Msg: fmt.Sprintf("column %d: empty or repeated header %q", i+1, h)}}
		}
		seen[h] = true
	}
	rows := []any{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(file, err)
		}
		row := make(map[string]any, len(header))
		for i, cell := range rec {
			row[header[i]] = csvCell(cell)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func csvError(file string, err error) error {
	if pe, ok := err.(*csv.ParseError); ok {
		return trace.ErrorList{{File: file, Line: pe.Line, Col: pe.Column, Msg: pe.Err.Error()}}
	}
	return trace.ErrorList{{File: file, Msg: err.Error()}}
}

func csvCell(s string) any {
	if s == "" {
		return nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	// ParseFloat accepts "NaN", "Inf" and hex floats; a cell must look
	// like a decimal number to become one.
	if strings.ContainsAny(s, "0123456789") && !strings.ContainsAny(s, "xXnN") {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return s
}
