package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/toon"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

const toonDoc = `toon converts JSON to TOON and back. Both subcommands read FILE, or
standard input when FILE is absent or "-", and write to standard output.
Key order is kept in both directions.`

// newToonCmd is "crystallize toon": JSON ↔ TOON conversion, the format the
// session index prints (toon-spec 4.0).
func newToonCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "toon",
		Short: "Convert between JSON and TOON (Token-Oriented Object Notation, spec 4.0)",
		Long:  toonDoc,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newToonEncodeCmd(e), newToonDecodeCmd(e))
	return cmd
}

const toonEncodeDoc = `encode reads one JSON value and prints it as TOON, followed by a newline.
--delimiter chooses the separator of array values and table cells (comma,
tab or pipe); --document-delimiter the one object field values are quoted
against (default comma). Arrays and objects nested more than 256 deep are
refused: TOON indents every level, so the text of a deep value grows
with the square of its depth.`

func newToonEncodeCmd(e *env) *cobra.Command {
	var delim, docDelim string
	var indent int
	cmd := &cobra.Command{
		Use:   "encode [FILE]",
		Short: "Convert JSON to TOON",
		Long:  toonEncodeDoc,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := toon.EncodeOptions{Indent: indent}
			var err error
			if opts.Delimiter, err = toon.ParseDelimiter(delim); err != nil {
				return usagef("--delimiter: %v", err)
			}
			if opts.DocumentDelimiter, err = toon.ParseDelimiter(docDelim); err != nil {
				return usagef("--document-delimiter: %v", err)
			}
			if indent < 1 {
				return usagef("--indent must be at least 1, got %d", indent)
			}
			name, data, err := readInput(cmd.InOrStdin(), args)
			if err != nil {
				return err
			}
			// The text streams to stdout: it can be far larger than the
			// JSON, and nothing is written when the JSON is refused.
			w := bufio.NewWriter(e.stdout)
			if err := toon.EncodeJSONTo(w, data, opts); err != nil {
				return inputError(name, err)
			}
			w.WriteByte('\n')
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&delim, "delimiter", "comma", "array and table delimiter: comma, tab or pipe")
	cmd.Flags().StringVar(&docDelim, "document-delimiter", "comma", "delimiter object field values are quoted against: comma, tab or pipe")
	cmd.Flags().IntVar(&indent, "indent", 2, "spaces per indentation level")
	return cmd
}

const toonDecodeDoc = `decode reads a TOON document and prints it as JSON indented by two spaces,
followed by a newline. Decoding is strict by default: declared lengths,
row widths, indentation, blank lines inside arrays, duplicate keys and
escapes are checked, and every problem is reported as FILE:LINE: message
(exit 1). --non-strict accepts what strict mode rejects where the spec
allows it.`

func newToonDecodeCmd(e *env) *cobra.Command {
	var nonStrict bool
	var indent int
	cmd := &cobra.Command{
		Use:   "decode [FILE]",
		Short: "Convert TOON to JSON",
		Long:  toonDecodeDoc,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if indent < 1 {
				return usagef("--indent must be at least 1, got %d", indent)
			}
			name, data, err := readInput(cmd.InOrStdin(), args)
			if err != nil {
				return err
			}
			out, err := toon.DecodeJSON(data, toon.DecodeOptions{Indent: indent, NonStrict: nonStrict})
			if err != nil {
				return inputError(name, err)
			}
			_, err = e.stdout.Write(append(out, '\n'))
			return err
		},
	}
	cmd.Flags().BoolVar(&nonStrict, "non-strict", false, "turn off the strict-mode checks")
	cmd.Flags().IntVar(&indent, "indent", 2, "spaces per indentation level")
	return cmd
}

// readInput reads the file named by args, or stdin when there is none or
// it is "-", and returns the name to put in error messages.
func readInput(stdin io.Reader, args []string) (string, []byte, error) {
	if len(args) == 0 || args[0] == "-" {
		data, err := io.ReadAll(stdin)
		return "stdin", data, err
	}
	data, err := os.ReadFile(args[0])
	return args[0], data, err
}

// inputError turns the toon package's line errors into a trace.ErrorList,
// which printError shows as FILE:LINE: message, one problem per line.
func inputError(name string, err error) error {
	var list toon.ErrorList
	var one *toon.Error
	switch {
	case errors.As(err, &list):
		out := make(trace.ErrorList, len(list))
		for i, e := range list {
			out[i] = &trace.Error{File: name, Line: e.Line, Msg: e.Msg}
		}
		if len(out) == 1 {
			return out
		}
		return fmt.Errorf("reading %s: %w", name, out)
	case errors.As(err, &one):
		return trace.ErrorList{{File: name, Line: one.Line, Msg: one.Msg}}
	}
	return err
}
