package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// The shapes of output that several commands print.

// writeJSON prints v as canonical JSON on w.
func writeJSON(w io.Writer, v any) error {
	b, err := candidate.EncodeJSON(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// printResult prints v on stdout: as canonical JSON with --json, else as
// human words it. A command whose --json is the value its text describes
// prints through it, and then decides its exit status from the value.
func printResult(e *env, asJSON bool, v any, human func(w io.Writer)) error {
	if asJSON {
		return writeJSON(e.stdout, v)
	}
	human(e.stdout)
	return nil
}

// writeIndentedJSON prints v as encoding/json writes it, indented by two
// spaces, for the summaries whose --json has always been that encoding
// (fields in declaration order, HTML characters escaped) rather than the
// canonical one of writeJSON.
func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

const validateDoc = `validate reads a bundle written by "crystallize mine --bundle" and checks
every claim it makes instead of trusting it:

  manifest   the schema marker is harn.crystallization.candidate.bundle,
             schema_version is one this tool understands, and every
             member name is exact: no duplicate, and none that differs
             from a known one only by case ("Path", "ſha256")
  workflow   workflow.star parses and resolves
  report     report.json is present and holds no secrets
  eval_pack  the eval pack parses and points at the bundle's fixtures
  skill      SKILL.md follows the Agent Skills rules and matches gate.json
  fixtures   every referenced file exists inside the bundle (no "..",
             absolute paths or symlinks) and matches its recorded sha256
  redaction  fixtures and report are scanned for secrets; required
             secrets are logical ids, never values
  approval   the recorded approval is for the workflow as it is now

It prints the workflow file the approval check read and its sha256 (the
bytes a ready bundle runs), the promotion status the criteria and the
approvals give for those bytes (needs_approval until someone approves
them: approval=ok only says the record is consistent), lists every problem
with a stable code and exits 1 when there is any.
--json prints {"bundle", "checks": [{"name", "status"}], "problems":
[{"code", "message", "path"}], "ok", "workflow", "workflow_sha256",
"promotion_status"}; the workflow's two are absent when the file could not
be read.`

// writeWrote prints the line that lists the files a command wrote,
// "Wrote: a, b", leaving out empty names; nothing when none is left.
func writeWrote(w io.Writer, files ...string) {
	var outs []string
	for _, f := range files {
		if f != "" {
			outs = append(outs, f)
		}
	}
	if len(outs) > 0 {
		fmt.Fprintf(w, "Wrote: %s\n", strings.Join(outs, ", "))
	}
}

// promotionStatus is a bundle's promotion status with the codes of its
// reasons, "blocked (heldout_required, low_confidence)", or the bare
// status when it has none.
func promotionStatus(m *bundle.Manifest) string {
	if codes := m.PromotionCodes(); len(codes) > 0 {
		return m.Promotion.Criteria.Status + " (" + strings.Join(codes, ", ") + ")"
	}
	return m.Promotion.Criteria.Status
}

// newTable returns a writer that aligns tab-separated cells into columns
// two spaces apart, for the listings (sessions, the index, the inbox);
// Flush writes the table.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 8, 2, ' ', 0) }

// orDash is s, or "-" for an empty s, so that a table's columns stay
// aligned and a missing value reads as missing.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// passOrFail is the word a listing of checks gives a result: "pass", or
// "FAIL" in capitals to stand out among passes.
func passOrFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}
