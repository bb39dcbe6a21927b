package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalRefuses checks that Eval returns an error, naming what is
// wrong, for a bundle it cannot evaluate: no eval pack, a pack path that
// leaves the bundle, a pack that does not parse. A failing assertion is a
// result; an eval that could not run is not.
func TestEvalRefuses(t *testing.T) {
	s, h := releaseTraces(t, nil)
	t.Run("no eval pack", func(t *testing.T) {
		o := opts()
		o.EvalPack = false
		dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: o}.write(t)
		if _, err := Eval(dir); !errors.Is(err, ErrNoEvalPack) {
			t.Errorf("Eval without an eval pack = %v, want %v", err, ErrNoEvalPack)
		}
	})
	t.Run("pack outside the bundle", func(t *testing.T) {
		dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
		rewriteManifest(t, dir, func(g map[string]any) { g["eval_pack"].(map[string]any)["path"] = "../" + EvalPackFile })
		mustWrite(t, filepath.Join(filepath.Dir(dir), EvalPackFile), mustRead(t, filepath.Join(dir, EvalPackFile)))
		if _, err := Eval(dir); err == nil || !strings.Contains(err.Error(), "leaves the bundle") {
			t.Errorf("Eval of a pack outside the bundle = %v, want leaves the bundle", err)
		}
	})
	t.Run("pack does not parse", func(t *testing.T) {
		dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
		p := filepath.Join(dir, EvalPackFile)
		mustWrite(t, p, append(mustRead(t, p), "\n[[cases]\n"...))
		if _, err := Eval(dir); err == nil || !strings.Contains(err.Error(), EvalPackFile) {
			t.Errorf("Eval of a pack that does not parse = %v, want an error naming %s", err, EvalPackFile)
		}
	})
}

// TestEvalCaseTraceInputs checks where a case's trace input is read
// from: a fixture of the manifest only as recorded (a changed one fails
// the assertion), another file of the bundle as it is, and nothing
// through a symlink.
func TestEvalCaseTraceInputs(t *testing.T) {
	s, h := releaseTraces(t, nil)
	const tmpl = `
[[rubrics]]
id = "tools"
kind = "agent"
[[rubrics.assertions]]
kind = "tool_call_f1"
calibrated = true
[[cases]]
id = "flow"
rubrics = ["tools"]
severity = "blocking"
[cases.input]
trace = "TRACE"
expected_tool_calls = [{name = "git.checkout_branch"}, {name = "update_manifest_version"}, {name = "cargo.package_dry_run"}]
`
	for _, tt := range []struct {
		name   string
		trace  func(m *Manifest) string
		edit   func(t *testing.T, dir string, m *Manifest)
		passed bool
		msg    string
	}{
		{"a fixture as recorded", func(m *Manifest) string { return m.Fixtures[0].Path }, nil, true, ""},
		{"a changed fixture", func(m *Manifest) string { return m.Fixtures[0].Path }, func(t *testing.T, dir string, m *Manifest) {
			p := filepath.Join(dir, filepath.FromSlash(m.Fixtures[0].Path))
			mustWrite(t, p, append(mustRead(t, p), '\n'))
		}, false, "differs from the manifest's"},
		{"a file of the bundle that is no fixture", func(*Manifest) string { return "extra/run.json" }, func(t *testing.T, dir string, m *Manifest) {
			if err := os.Mkdir(filepath.Join(dir, "extra"), 0o755); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(dir, "extra", "run.json"), mustRead(t, filepath.Join(dir, filepath.FromSlash(m.Fixtures[0].Path))))
		}, true, ""},
		// A link could reach a file outside the bundle.
		{"a symlink", func(*Manifest) string { return "extra/run.json" }, func(t *testing.T, dir string, m *Manifest) {
			if err := os.Mkdir(filepath.Join(dir, "extra"), 0o755); err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(t.TempDir(), "run.json")
			mustWrite(t, outside, mustRead(t, filepath.Join(dir, filepath.FromSlash(m.Fixtures[0].Path))))
			if err := os.Symlink(outside, filepath.Join(dir, "extra", "run.json")); err != nil {
				t.Skip("no symlinks here:", err)
			}
		}, false, "is a symlink"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
			pack := filepath.Join(dir, EvalPackFile)
			mustWrite(t, pack, append(mustRead(t, pack), strings.ReplaceAll(tmpl, "TRACE", tt.trace(m))...))
			if tt.edit != nil {
				tt.edit(t, dir, m)
			}
			res, err := Eval(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got *AssertionResult
			for i := range res.Assertions {
				if res.Assertions[i].ID == "flow/tools/0" {
					got = &res.Assertions[i]
				}
			}
			if got == nil || got.Passed != tt.passed || !strings.Contains(got.Message, tt.msg) {
				t.Errorf("flow/tools/0 = %+v, want passed %v saying %q", got, tt.passed, tt.msg)
			}
		})
	}
}
