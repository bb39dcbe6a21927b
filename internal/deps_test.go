package internal_test

import (
	"go/build"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/crystallize-dev/crystallize/"

// allowed is the import graph of the project's packages: each package may
// import only the ones listed for it (and the standard library and
// third-party modules). Imports point downstream along the pipeline
// trace → mine → codegen → …; internal/cli alone sits on top and may import
// everything. A new package must be added here, which makes its place in
// the pipeline a reviewed decision.
var allowed = map[string][]string{
	"internal/trace":     {"internal/jsontext"},
	"internal/candidate": {"internal/trace", "internal/redact", "internal/jsontext"},
	"internal/source":    {"internal/trace", "internal/normalize"},
	"internal/normalize": {"internal/trace", "internal/redact"},
	"internal/mine":      {"internal/trace", "internal/candidate", "internal/redact", "internal/derive", "internal/price"},
	"internal/price":     {},
	// The one JSON text core: quoting, unquoting, scanning and the
	// canonical writer, below every stage that reads or writes JSON.
	"internal/jsontext":     {},
	"internal/codegen":      {"internal/trace", "internal/candidate", "internal/derive", "internal/assert"},
	"internal/replay":       {"internal/trace", "internal/candidate", "internal/derive"},
	"internal/redact":       {"internal/jsontext"},
	"internal/plan":         {"internal/candidate", "internal/trace", "internal/jsontext", "internal/atomicfile", "internal/proc"},
	"internal/toon":         {"internal/jsontext"},
	"internal/capped":       {},
	"internal/textdiff":     {},
	"internal/session":      {"internal/trace", "internal/mdtext", "internal/redact", "internal/atomicfile", "internal/proc"},
	"internal/proc":         {},
	"internal/store":        {"internal/proc", "internal/atomicfile"},
	"internal/sessionindex": {"internal/capped", "internal/session", "internal/store", "internal/toon", "internal/trace"},
	"internal/registry":     {"internal/store", "internal/runstate", "internal/sessionindex", "internal/atomicfile", "internal/proc"},
	"internal/stepvalue":    {"internal/jsontext"},
	"internal/model":        {"internal/runconfig", "internal/stepvalue"},
	"internal/toolexec":     {"internal/candidate", "internal/capped", "internal/normalize", "internal/proc", "internal/redact", "internal/runconfig", "internal/stepvalue", "internal/trace"},
	"internal/runconfig":    {"internal/price", "internal/trace"},
	"internal/runstate":     {},
	"internal/runstats":     {"internal/runner", "internal/runstate", "internal/bundle", "internal/capped", "internal/price", "internal/trace"},
	"internal/membudget":    {},
	// The run record: trace.json and session.md written from a plain
	// value the runner fills.
	"internal/runrecord": {"internal/atomicfile", "internal/jsontext", "internal/mdtext", "internal/runstate", "internal/session", "internal/stepvalue", "internal/trace"},
	// Receipt verification: a run's receipts against its candidate's.
	"internal/verify": {"internal/candidate", "internal/replay", "internal/runrecord", "internal/trace"},
	// The world preconditions of a step, looked at through a value the
	// runner fills.
	"internal/precond": {"internal/candidate", "internal/runconfig", "internal/toolexec"},
	// What a workflow's source says, read from its syntax tree.
	"internal/starfile": {"internal/codegen"},
	// The key that authenticates what a run leaves in its state
	// directory.
	"internal/statekey": {"internal/atomicfile"},
	// The state directory's record of people's decisions on bundles: the
	// approval ledger and the archive of approved workflows, read by the
	// runner and written by review. It keeps copies of bundle's and
	// toolexec's names rather than import them, a level below both.
	"internal/ledger":     {"internal/atomicfile", "internal/capped", "internal/statekey", "internal/stepvalue", "internal/trace"},
	"internal/runner":     {"internal/jsontext", "internal/membudget", "internal/runstate", "internal/runrecord", "internal/verify", "internal/precond", "internal/starfile", "internal/statekey", "internal/ledger", "internal/toolexec", "internal/model", "internal/runconfig", "internal/stepvalue", "internal/capped", "internal/price", "internal/trace", "internal/candidate", "internal/codegen", "internal/bundle", "internal/redact", "internal/replay", "internal/session", "internal/mdtext", "internal/atomicfile", "internal/plan"},
	"internal/tracestore": {"internal/trace", "internal/candidate", "internal/mine", "internal/normalize", "internal/source", "internal/store"},
	"internal/persona":    {"internal/trace", "internal/candidate", "internal/mine", "internal/codegen", "internal/bundle", "internal/pipeline"},
	"internal/codify":     {"internal/trace", "internal/candidate", "internal/mine", "internal/normalize", "internal/derive", "internal/codegen", "internal/session", "internal/model", "internal/runconfig", "internal/pipeline"},
	// SKILL.md takes the step projections it shares with the workflow
	// from candidate; its callers pass the workflow's name (codegen.FuncName).
	"internal/skill":      {"internal/trace", "internal/candidate", "internal/mdtext"},
	"internal/pipeline":   {"internal/trace", "internal/redact", "internal/session", "internal/candidate", "internal/source", "internal/normalize", "internal/mine", "internal/replay", "internal/codegen", "internal/skill", "internal/bundle", "internal/synth", "internal/atomicfile", "internal/tracestore", "internal/store", "internal/model", "internal/runconfig", "internal/plan"},
	"internal/atomicfile": {},
	"internal/mdtext":     {},
	"internal/bundle":     {"internal/jsontext", "internal/trace", "internal/candidate", "internal/codegen", "internal/replay", "internal/redact", "internal/assert", "internal/skill", "internal/atomicfile"},
	"internal/tracetest":  {"internal/trace"},
	"internal/capture":    {"internal/trace", "internal/redact", "internal/atomicfile"},
	"internal/install":    {"internal/bundle", "internal/skill", "internal/runner", "internal/atomicfile", "internal/textdiff"},
	"internal/review":     {"internal/bundle", "internal/candidate", "internal/trace", "internal/runner", "internal/ledger", "internal/registry", "internal/store", "internal/textdiff"},
	"internal/serve":      {"internal/runner", "internal/runstate", "internal/bundle", "internal/candidate", "internal/trace", "internal/registry"},
	// Runs on Temporal are driven through runner.Advance; the test
	// server helper is used by the tests of temporal and cli only.
	"internal/temporal":              {"internal/runconfig", "internal/runstate", "internal/runner", "internal/bundle"},
	"internal/temporal/temporaltest": {},
	"internal/synth":                 {"internal/capped", "internal/trace", "internal/redact", "internal/atomicfile"},
	"internal/derive":                {},
	"internal/tools/gencorpus":       {"internal/trace", "internal/tracetest"},
	"internal/tools/procbench":       {},
	"internal/tools/mutate":          {},
	"internal/assert":                {"internal/trace"},
	"internal/harness":               {"internal/capped", "internal/proc", "internal/trace", "internal/store", "internal/assert", "internal/redact", "internal/atomicfile", "internal/textdiff", "internal/harness/memory"},
	// Memories are a file of their own, apart from the ledger in store:
	// the package may not import store.
	"internal/harness/memory": {"internal/trace", "internal/atomicfile", "internal/capped"},
	"internal/harness/web":    {"internal/trace", "internal/atomicfile", "internal/textdiff"},
	"internal/cli":            {"*"},
	// The module root is the library interface, package crystallize: a
	// thin layer over the stages for callers outside the module, which
	// cannot import internal/. No package of the project imports it.
	".":               {"internal/trace", "internal/candidate", "internal/source", "internal/mine", "internal/pipeline", "internal/plan", "internal/bundle"},
	"cmd/crystallize": {"internal/cli"},
}

// testOnly lists what a package's tests may import beyond its own graph:
// the synthetic corpus generator is test input, not a pipeline stage, and
// codegen.Check is the plan lowering's oracle.
var testOnly = map[string][]string{
	"internal/mine": {"internal/tracetest"},
	// The trace store is tested on generated corpora too.
	"internal/tracestore": {"internal/tracetest"},
	// Publishing is tested and benchmarked on generated corpora mined in
	// two passes, and a bundle it wrote is approved as review approves
	// one.
	"internal/pipeline": {"internal/tracetest", "internal/review", "internal/ledger"},
	// Generated agent sessions pin what the session decoders make of them.
	"internal/source": {"internal/tracetest"},
	// The persona tests compare a proposal with the shadow comparison's
	// own verdict.
	"internal/persona": {"internal/replay"},
	// A codified draft is published with the bundle's options.
	"internal/codify": {"internal/bundle"},
	// The configuration's copy of the bundle markers is pinned to
	// bundle's.
	"internal/runconfig": {"internal/bundle"},
	// Lowered plans must pass the same check as generated workflows.
	"internal/plan": {"internal/codegen"},
	// The web-app kit's scenarios must parse as the web runner reads them.
	"internal/harness": {"internal/harness/web"},
	// The integration tests run against a Temporal dev server, with
	// in-process tools.
	"internal/temporal": {"internal/temporal/temporaltest", "internal/toolexec"},
	// The record's encoders are held to the bytes of candidate.EncodeJSON.
	"internal/runrecord": {"internal/candidate"},
	// A skill is tested under the workflow name code generation gives,
	// as its callers pass it.
	"internal/skill": {"internal/codegen"},
	// The session tools are tested against the registry's database as
	// a person's commands read it.
	"internal/serve": {"internal/store"},
	// The ledger's copies of names are pinned to bundle's and toolexec's.
	"internal/ledger": {"internal/bundle", "internal/toolexec"},
}

func TestImportGraph(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "examples") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if len(pkg.GoFiles) == 0 {
			return nil // only tests, such as this one
		}
		seen[rel] = true
		rules, ok := allowed[rel]
		if !ok {
			t.Errorf("package %s is not in the import graph in deps_test.go; add it with the packages it may import", rel)
			return nil
		}
		check := func(imports, rules []string, what string) {
			sort.Strings(imports)
			for _, imp := range imports {
				dep, ok := strings.CutPrefix(imp, module)
				if imp == strings.TrimSuffix(module, "/") {
					dep, ok = ".", true
				}
				if !ok {
					continue
				}
				if dep == rel || permits(rules, dep) {
					continue
				}
				t.Errorf("%s %s %s, which the import graph does not allow (allowed: %v)", rel, what, dep, rules)
			}
		}
		check(pkg.Imports, rules, "imports")
		check(append(pkg.TestImports, pkg.XTestImports...), append(append([]string{}, rules...), testOnly[rel]...), "tests import")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"internal/trace", "internal/mine", "internal/cli"} {
		if !seen[must] {
			t.Errorf("package %s not found; is the test running from internal/?", must)
		}
	}
}

func permits(rules []string, dep string) bool {
	for _, r := range rules {
		if r == "*" || r == dep {
			return true
		}
	}
	return false
}
