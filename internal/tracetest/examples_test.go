package tracetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// The example traces in examples/traces are hand-written, and the README's
// quickstart and golden tests depend on exactly what they contain. This
// test pins it: the files are well-formed and pretty-printed, and the
// only repeated action sequences are the two procedures examples/README.md
// describes, with the parameters, constants and bindings it lists.

const examplesDir = "../../examples/traces"

// exampleProcedure is what examples/README.md says the miner should find.
type exampleProcedure struct {
	names    []string // tool names in order
	traces   []string // ids of the traces that contain it, excluded ones too
	varying  []string
	constant []string
	bindings []string // "steps[i].parameters.k <- steps[j].output.k"
}

var exampleProcedures = map[string]exampleProcedure{
	"bump a Go dependency": {
		names:  []string{"git.create_branch", "go.get", "go.mod_tidy", "go.test", "git.commit", "github.open_pr"},
		traces: []string{"pay-01-bump-x-net", "pay-02-bump-grpc", "pay-04-triage-and-bump-pgx", "pay-06-bump-otel", "pay-09-bump-testify-policy-violation"},
		varying: []string{
			"steps[1].parameters.branch", "steps[2].parameters.module", "steps[2].parameters.version",
			"steps[5].parameters.message", "steps[6].parameters.title",
		},
		constant: []string{
			"steps[1].parameters.repo_path", "steps[2].parameters.repo_path", "steps[3].parameters.repo_path",
			"steps[4].parameters.packages", "steps[4].parameters.repo_path", "steps[5].parameters.repo_path",
			"steps[6].parameters.repo",
		},
		bindings: []string{"steps[6].parameters.branch <- steps[1].output.branch"},
	},
	"triage an incoming ticket": {
		names:  []string{"tracker.get_issue", "classify_issue", "tracker.set_labels", "tracker.add_comment"},
		traces: []string{"pay-03-triage-refund-500", "pay-04-triage-and-bump-pgx", "pay-05-triage-flaky-test"},
		varying: []string{
			"steps[1].parameters.issue_id", "steps[2].parameters.issue_id", "steps[3].parameters.issue_id",
			"steps[4].parameters.issue_id",
		},
		constant: []string{"steps[4].parameters.body_template"},
		bindings: []string{
			"steps[2].parameters.title <- steps[1].output.title",
			"steps[3].parameters.labels <- steps[2].output.labels",
		},
	},
}

// excludedExample is the trace that carries an unresolved policy
// violation.
const excludedExample = "pay-09-bump-testify-policy-violation"

func readExamples(t *testing.T) []*trace.Trace {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(examplesDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 8 {
		t.Fatalf("found %d example traces in %s, want at least 8", len(paths), examplesDir)
	}
	var traces []*trace.Trace
	traceIDs, actionIDs := map[string]string{}, map[string]string{}
	for _, path := range paths {
		name := filepath.Base(path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Pretty-printed with a two-space indent and a final newline,
		// exactly as json.Indent writes it.
		var compact, pretty bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		json.Indent(&pretty, compact.Bytes(), "", "  ")
		pretty.WriteByte('\n')
		if !bytes.Equal(pretty.Bytes(), data) {
			t.Errorf("%s is not formatted as json.Indent with two spaces would", name)
		}

		if _, err := trace.Decode(data, name, 0); err != nil {
			t.Errorf("trace.Decode: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		tr := new(trace.Trace)
		if err := dec.Decode(tr); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if tr.Version != 1 || tr.ID == "" {
			t.Errorf("%s: version %d, id %q; want version 1 and an id", name, tr.Version, tr.ID)
		}
		if other, dup := traceIDs[tr.ID]; dup {
			t.Errorf("%s: trace id %q also in %s", name, tr.ID, other)
		}
		traceIDs[tr.ID] = name
		if tr.Metadata["goal"] == nil || tr.Metadata["success_criteria"] == nil {
			t.Errorf("%s: metadata needs goal and success_criteria", name)
		}
		// Fields the format does not name end up in Extra: a typo.
		if len(tr.Extra) > 0 || (tr.Flow != nil && len(tr.Flow.Extra) > 0) || (tr.Usage != nil && len(tr.Usage.Extra) > 0) {
			t.Errorf("%s: unknown trace fields %v", name, tr.Extra)
		}
		for i := range tr.Actions {
			a := &tr.Actions[i]
			where := fmt.Sprintf("%s: $.actions[%d]", name, i)
			if a.ID == "" || a.Kind == "" || a.Name == "" {
				t.Errorf("%s: id %q kind %q name %q; want all three", where, a.ID, a.Kind, a.Name)
			}
			if other, dup := actionIDs[a.ID]; dup {
				t.Errorf("%s: action id %q also in %s", where, a.ID, other)
			}
			actionIDs[a.ID] = name
			if len(a.Extra) > 0 || (a.Cost != nil && len(a.Cost.Extra) > 0) {
				t.Errorf("%s: unknown action fields %v", where, a.Extra)
			}
			for _, s := range a.SideEffects {
				if len(s.Extra) > 0 || s.Kind == "" || s.Target == "" {
					t.Errorf("%s: side effect %+v", where, s)
				}
			}
			if a.Cost == nil || a.Cost.ModelCalls != 1 {
				t.Errorf("%s: want the agent's cost, one model call", where)
			}
		}
		traces = append(traces, tr)
	}
	return traces
}

func TestExamples(t *testing.T) {
	traces := readExamples(t)

	for _, tr := range traces {
		_, excluded := tr.PolicyViolation()
		if excluded != (tr.ID == excludedExample) {
			t.Errorf("%s: PolicyViolation() = %v, want %v", tr.ID, excluded, !excluded)
		}
	}

	// covered[trace id][i] is the procedure occurrence action i is in.
	covered := map[string][]string{}
	for _, tr := range traces {
		covered[tr.ID] = make([]string, len(tr.Actions))
	}
	for goal, p := range exampleProcedures {
		var sigs []string
		var runs [][]trace.Action
		var in []string
		for _, tr := range traces {
			if sigs == nil && slices.Contains(p.traces, tr.ID) {
				// The signatures are those of the first trace listed
				// that has the tool names in order.
				for i := 0; i+len(p.names) <= len(tr.Actions); i++ {
					if slices.Equal(names(tr.Actions[i:i+len(p.names)]), p.names) {
						for j := range p.names {
							sigs = append(sigs, signature(&tr.Actions[i+j]))
						}
						break
					}
				}
			}
		}
		if sigs == nil {
			t.Fatalf("%s: not found", goal)
		}
		for _, tr := range traces {
			for _, at := range occurrences(tr, sigs) {
				in = append(in, tr.ID)
				for j := range sigs {
					covered[tr.ID][at+j] = fmt.Sprintf("%s#%d", goal, len(in))
				}
				if tr.ID != excludedExample {
					runs = append(runs, tr.Actions[at:at+len(sigs)])
				}
			}
		}
		if diff := cmp.Diff(p.traces, in); diff != "" {
			t.Errorf("%s: traces (-want +got):\n%s", goal, diff)
		}
		varying, constant, bindings := classify(runs)
		if diff := cmp.Diff(p.varying, varying); diff != "" {
			t.Errorf("%s: varying parameters (-want +got):\n%s", goal, diff)
		}
		if diff := cmp.Diff(p.constant, constant); diff != "" {
			t.Errorf("%s: constant parameters (-want +got):\n%s", goal, diff)
		}
		if diff := cmp.Diff(p.bindings, bindings); diff != "" {
			t.Errorf("%s: bindings (-want +got):\n%s", goal, diff)
		}
	}

	// Apart from the procedures, no two adjacent actions repeat: so a
	// miner finds exactly those two, not a longer or shorter variant.
	pairs := map[[2]string][]string{}
	for _, tr := range traces {
		if tr.ID == excludedExample {
			continue
		}
		for i := 0; i+1 < len(tr.Actions); i++ {
			if c := covered[tr.ID][i]; c != "" && c == covered[tr.ID][i+1] {
				continue
			}
			pair := [2]string{signature(&tr.Actions[i]), signature(&tr.Actions[i+1])}
			pairs[pair] = append(pairs[pair], fmt.Sprintf("%s[%d]", tr.ID, i))
		}
	}
	for pair, at := range pairs {
		if len(at) > 1 {
			t.Errorf("actions %s then %s repeat outside the procedures, at %v", pair[0], pair[1], at)
		}
	}
}

func names(actions []trace.Action) []string {
	var s []string
	for i := range actions {
		s = append(s, actions[i].Name)
	}
	return s
}

// classify sorts the parameters of the runs of one procedure the way the
// README explains them: a parameter is bound when in every run it equals
// the same output field of an earlier step, else constant when it has one
// value, else varying.
func classify(runs [][]trace.Action) (varying, constant, bindings []string) {
	first := runs[0]
	for i := range first {
		keys := make([]string, 0, len(first[i].Parameters))
		for k := range first[i].Parameters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	param:
		for _, k := range keys {
			path := fmt.Sprintf("steps[%d].parameters.%s", i+1, k)
			for j := range i {
				out, ok := first[j].Output.(map[string]any)
				if !ok {
					continue
				}
				for _, f := range sortedKeys(out) {
					if all(runs, func(run []trace.Action) bool {
						o, _ := run[j].Output.(map[string]any)
						return reflect.DeepEqual(run[i].Parameters[k], o[f])
					}) {
						bindings = append(bindings, fmt.Sprintf("%s <- steps[%d].output.%s", path, j+1, f))
						continue param
					}
				}
			}
			if all(runs, func(run []trace.Action) bool {
				return reflect.DeepEqual(run[i].Parameters[k], first[i].Parameters[k])
			}) {
				constant = append(constant, path)
			} else {
				varying = append(varying, path)
			}
		}
	}
	return varying, constant, bindings
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func all(runs [][]trace.Action, f func([]trace.Action) bool) bool {
	for _, run := range runs {
		if !f(run) {
			return false
		}
	}
	return true
}
