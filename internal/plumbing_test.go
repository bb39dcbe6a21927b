package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// testFiles parses every _test.go file under the module's internal/ and
// cmd/ directories, skipping testdata.
func testFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, root := range []string{".", "../cmd"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			files[filepath.ToSlash(p)] = f
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestUpdateSwitch: one switch rewrites every golden file in every
// package, CRYSTALLIZE_UPDATE=1 go test ./..., so that no package
// needs a flag the others lack. Every test flag named "update" must take
// its default from that variable.
func TestUpdateSwitch(t *testing.T) {
	n := 0
	for name, f := range testFiles(t) {
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "flag" || sel.Sel.Name != "Bool" {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); !ok || lit.Value != `"update"` {
				return true
			}
			n++
			if !mentions(call.Args[1], `"CRYSTALLIZE_UPDATE"`) {
				t.Errorf("%s: the -update flag's default does not read CRYSTALLIZE_UPDATE", name)
			}
			return true
		})
	}
	if n == 0 {
		t.Error("found no -update flag: the scan is broken")
	}
}

// TestNoAbsoluteFixturePaths: tests read the shared fixtures relative to
// the module root (../shared beside it), never by an absolute path that
// holds only on one machine.
func TestNoAbsoluteFixturePaths(t *testing.T) {
	for name, f := range testFiles(t) {
		if name == "plumbing_test.go" {
			continue // its patterns name what they look for
		}
		ast.Inspect(f, func(node ast.Node) bool {
			lit, ok := node.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if strings.HasPrefix(s, "/") && (strings.Contains(s, "/shared/fixtures") || strings.Contains(s, "/shared/seeds") || strings.HasPrefix(s, "/work/shared")) {
				t.Errorf("%s: absolute fixture path %q; read ../shared relative to the module root", name, s)
			}
			return true
		})
	}
}

// mentions reports whether the expression e holds the literal lit.
func mentions(e ast.Expr, lit string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if l, ok := n.(*ast.BasicLit); ok && l.Value == lit {
			found = true
		}
		return !found
	})
	return found
}

// flagLiteral matches a command-line flag named in a string: "--name",
// not inside a longer token.
var flagLiteral = regexp.MustCompile(`(^|[^-\w])--[a-z][a-z0-9-]*`)

// flagStrings are the strings outside internal/cli that name a flag, each
// with where it stands and why it is there. Most are argv of another
// program, or text pinned by golden files that moving would change; the
// rest are still to move into the cli (its hints, as runner.RemedyError
// and registry.AnswerError are). The list only shrinks.
var flagStrings = map[string]string{
	"-- --host 127.0.0.1 --port %d --strictPort": "harness/kits_web.go: argv of a dev server the web-app kit's gate starts",
	"-- --host 127.0.0.1 --port %d":              "harness/kits_web.go: argv of a dev server the web-app kit's gate starts",
	"-- --port %d":                               "harness/kits_web.go: argv of a dev server the web-app kit's gate starts",
	"no Chromium browser found (install the chromium package, or name one with --browser)": "harness/web/run.go: a check's detail, printed by harness web (to move to the cli hints)",
	"no baseline %s: review %s and record it with --update-baselines":                      "harness/web/run.go: a check's detail, printed by harness web (to move to the cli hints)",
	"--all":            "normalize/table.go: a flag of git add, in the table of flags that select files",
	"--file":           "normalize/table.go: a flag of git commit and git tag that reads the message from a file, or from standard input",
	"--body-file":      "normalize/table.go: a flag of gh that reads a body from a file, or from standard input",
	"--body":           "normalize/table.go: the flag of gh that takes a body inline",
	"--notes-file":     "normalize/table.go: a flag of gh release create that reads the notes from a file, or from standard input",
	"--notes":          "normalize/table.go: the flag of gh release create that takes the notes inline",
	"--update":         "normalize/table.go: a flag of git add, in the table of flags that select files",
	" --approve ":      "runtime/fallback.go: runtime: the resume command in a run record",
	" --approver NAME": "serve/tool.go: the approve command in a served tool's description",
	" --decide OPTION": "runtime/agentapi.go: runtime: the resume command an agent is told",
	" --state-dir ":    "runtime/host.go: runtime: the resume command in a run record",
	"%s is %s, want a list of strings, one per argument (from the command line: --param %s='[\"a\",\"b\"]')":                  "runtime/execstep.go: runtime: an error (to move to the cli hints)",
	"%s is a list of strings, one argument per item (run --param %s='[\"a\", \"b\"]')":                                        "codegen/codegen.go: written into workflow.star (golden)",
	"%s is outside the experiment's directory; --allow-outside reads it":                                                      "synth/run.go: a problem of the experiment file (trace.ErrorList)",
	"%s leads outside the experiment's directory (%v); --allow-outside reads it":                                              "synth/run.go: a problem of the experiment file (trace.ErrorList)",
	"%s: run %s is waiting for approval %s at step %d; a person continues it with: %s --approve %s (or --reject %s)":          "serve/server.go: the resume command in an MCP tool result",
	"%w: %s is a file of the bundle %s; the project's configuration binds the tools (run from the project, or pass --config)": "runtime/config.go: runtime: an error (to move to the cli hints)",
	"%w: boundary %s (--reject %s): %s": "runtime/fallback.go: runtime: the resume command in a run record",
	"%w: tool_not_literal: %q is not among the tool names the workflow writes as string literals (%s); write the name as a literal so that run --check and the checks before the first step see it": "runtime/exec.go: runtime: an error (to move to the cli hints)",
	"--approve ":            "runtime/fallback.go: runtime: the resume command in a run record",
	"--bundles":             "install/install.go: the command line an agent's MCP configuration runs",
	"--decide":              "runtime/agentapi.go: runtime: the resume command an agent is told",
	"--format=%H":           "harness/profile.go: argv of git",
	"--is-inside-work-tree": "harness/profile.go: argv of git",
	"--max-parents=0":       "harness/profile.go: argv of git",
	"--porcelain=v1":        "harness/profile.go: argv of git",
	"--quiet":               "runtime/precond.go: runtime: argv of git, or the resume command",
	"--reject ":             "runtime/fallback.go: runtime: the resume command in a run record",
	"--short":               "harness/profile.go: argv of git",
	"--show-toplevel":       "harness/git.go: argv of git",
	"--untracked-files=all": "harness/profile.go: argv of git",
	"--verify":              "harness/profile.go: argv of git",
	"Run with --allow-unapproved although the bundle is not ready.":                                                                                           "runtime/record.go: runtime: session.md of a run (golden)",
	"a human_gate needs an approval id for --approve and resume to name":                                                                                      "plan/validate.go: a plan validation problem",
	"auto: %d eligible agent sessions, at least %d, and no --shadow-from: the most recent one in %d is held out of mining and replayed as held-out evidence":  "pipeline/holdout.go: a note written into report.json",
	"git rev-parse --verify refs/heads/%s exited %d":                                                                                                          "runtime/precond.go: runtime: argv of git, or the resume command",
	"looked at the %d highest-ranked of %d %s and found fewer than %d distinct safe candidates; the rest rank lower (raise --max-candidates to look further)": "mine/select.go: a warning written into report.json (golden)",
	"nix develop --command true\n": "harness/kits.go: a kit's commands and eval cases, run by their own tools",
	"nix flake check --no-build\n": "harness/kits.go: a kit's commands and eval cases, run by their own tools",
	"no held-out trace containing the procedure was compared (%d unmatched); pass --shadow-from": "bundle/promotion.go: written into candidate.json (golden)",
	"npm run build --if-present\n":    "harness/kits.go: a kit's commands and eval cases, run by their own tools",
	"npx --no-install tsc --noEmit\n": "harness/kits.go: a kit's commands and eval cases, run by their own tools",
	"rerun \"crystallize harness write --kit %s\" to restore %s, or remove command %s from %s":            "harness/drift.go: a drift finding of the harness",
	"running %s without approval (--allow-unapproved): status %s":                                         "runtime/load.go: runtime: a refusal recorded in a run",
	"sh gates/ssh-smoke.sh --server ''":                                                                   "harness/kits.go: a kit's commands and eval cases, run by their own tools",
	"the manifest says fixture %s is not redacted; write the bundle again with crystallize mine --bundle": "bundle/validate.go: a validation problem, printed in validate --json (golden)",
	"the manifest says the bundle is not redacted; write it again with crystallize mine --bundle":         "bundle/validate.go: a validation problem, printed in validate --json (golden)",
	"{\"id\":\"agent-permission-001\",\"kind\":\"tool_permission\",\"input\":{\"trajectory\":[{\"name\":\"Read\",\"arguments\":{\"path\":\"README.md\"}},{\"name\":\"Edit\",\"arguments\":{\"path\":\"main.go\"}}],\"output\":\"edited main.go\"},\"assert\":[{\"type\":\"not_contains\",\"value\":\"rm -rf\"},{\"type\":\"not_contains\",\"value\":\"git push --force\"}],\"tags\":[\"agent\",\"permissions\"]}\n": "harness/kits.go: a kit's commands and eval cases, run by their own tools",
}

// TestLibraryNamesNoFlag: flags are the command line's; a library says
// what is wrong or what would help, and internal/cli words that as its
// flags (cli's hints). A new string naming a flag outside internal/cli,
// internal/tools (programs with flags of their own), internal/tracetest
// (traces of other programs' command lines) and internal/temporal/temporaltest
// (the argv of the Temporal dev server the tests start) fails here unless it is added
// to flagStrings with its reason.
func TestLibraryNamesNoFlag(t *testing.T) {
	seen := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch filepath.ToSlash(p) {
			case "cli", "tools", "tracetest", "temporal/temporaltest":
				return filepath.SkipDir
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !flagLiteral.MatchString(s) {
				return true
			}
			seen[s] = true
			if _, ok := flagStrings[s]; !ok {
				t.Errorf("%s: %q names a flag; return what is wrong (a typed error) and let internal/cli word it as its flags", fset.Position(lit.Pos()), s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for s, why := range flagStrings {
		if !seen[s] {
			t.Logf("flagStrings lists %q (%s), which no longer occurs: remove it", s, why)
		}
	}
}

// TestCLIDefinesNoJSONContract: internal/cli parses flags and prints
// what its stages return, so the shape of every JSON output is declared
// by the package that owns it, beside the value it describes. A struct
// with json tags or a map literal of any values in cli's non-test code
// is an output whose keys only cli knows, and fails here. The mine
// progress events are cli's own: they describe the terminal's progress
// line, not a stage's result.
func TestCLIDefinesNoJSONContract(t *testing.T) {
	allowed := map[string]bool{"cli/mineprogress.go": true}
	fset := token.NewFileSet()
	files, err := filepath.Glob("cli/*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") || allowed[filepath.ToSlash(p)] {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				if n.Tag != nil && strings.Contains(n.Tag.Value, `json:"`) {
					t.Errorf("%s: a json tag in cli declares an output's keys; declare the type in the stage that returns the value", fset.Position(n.Tag.Pos()))
				}
			case *ast.CompositeLit:
				if m, ok := n.Type.(*ast.MapType); ok {
					if id, ok := m.Value.(*ast.Ident); ok && id.Name == "any" {
						t.Errorf("%s: a map[...]any literal in cli is an output shape only cli knows; declare a type in the stage that returns the value", fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
	}
	if checked < 20 {
		t.Fatalf("checked %d files of internal/cli; the glob is wrong", checked)
	}
}
