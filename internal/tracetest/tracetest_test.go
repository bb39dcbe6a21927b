package tracetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// signature is the miner's action signature: kind:name:sorted,param,keys.
func signature(a *trace.Action) string {
	keys := make([]string, 0, len(a.Parameters))
	for k := range a.Parameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return string(a.Kind) + ":" + a.Name + ":" + strings.Join(keys, ",")
}

// occurrences returns the start indexes of sigs as a contiguous run in t.
func occurrences(t *trace.Trace, sigs []string) []int {
	var at []int
	for i := 0; i+len(sigs) <= len(t.Actions); i++ {
		ok := true
		for j, s := range sigs {
			if signature(&t.Actions[i+j]) != s {
				ok = false
				break
			}
		}
		if ok {
			at = append(at, i)
		}
	}
	return at
}

// step parses "steps[i].parameters.key" or "steps[i].output.key" into the
// 0-based step index and the key.
func parsePath(t *testing.T, path string) (int, string) {
	t.Helper()
	rest, ok := strings.CutPrefix(path, "steps[")
	num, rest, ok2 := strings.Cut(rest, "].")
	_, key, ok3 := strings.Cut(rest, ".")
	i, err := strconv.Atoi(num)
	if !ok || !ok2 || !ok3 || err != nil || i < 1 {
		t.Fatalf("bad path %q", path)
	}
	return i - 1, key
}

func encode(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestConfigDefaults(t *testing.T) {
	for _, tc := range []struct {
		in, want Config
	}{
		{Config{}, Config{Procedures: 8, MinLen: 2, MaxLen: 40, Actions: 50, Support: 0.05, NoiseVocabulary: 200}},
		{Config{Traces: -1, Procedures: -3, MinLen: -1, MaxLen: -1, Actions: -1, Support: -1, NoiseVocabulary: -1, FuzzyEvery: -2},
			Config{Procedures: 8, MinLen: 2, MaxLen: 40, Actions: 50, Support: 0.05, NoiseVocabulary: 200}},
		{Config{Traces: 7, Seed: 9, Procedures: 2, MinLen: 50, Actions: 10, Support: 3, NoiseVocabulary: 5, FuzzyEvery: 1},
			Config{Traces: 7, Seed: 9, Procedures: 2, MinLen: 50, MaxLen: 50, Actions: 10, Support: 1, NoiseVocabulary: 5, FuzzyEvery: 1}},
		{Config{Support: math.NaN()}, Config{Procedures: 8, MinLen: 2, MaxLen: 40, Actions: 50, Support: 0.05, NoiseVocabulary: 200}},
	} {
		if got := tc.in.withDefaults(); got != tc.want {
			t.Errorf("%+v.withDefaults() = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	cfg := Config{Traces: 300, Seed: 42, FuzzyEvery: 3}
	a := encode(t, Generate(cfg))
	b := encode(t, Generate(cfg))
	if !bytes.Equal(a, b) {
		t.Fatal("Generate twice with the same config gave different JSON")
	}
	// Parallel building must not leak into the result.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if c := encode(t, Generate(cfg)); !bytes.Equal(a, c) {
		t.Fatal("Generate with GOMAXPROCS=1 gave different JSON")
	}
	cfg.Seed++
	if d := encode(t, Generate(cfg)); bytes.Equal(a, d) {
		t.Fatal("Generate with a different seed gave the same JSON")
	}
}

func TestGeneratePlanted(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cfg         Config
		support     int
		lens        []int
		fuzzy       int // procedures with a fuzzy step
		minBindings int // procedures with data flow
	}{
		{"defaults", Config{Traces: 400, Seed: 1}, 20, []int{2, 7, 13, 18, 24, 29, 35, 40}, 0, 4},
		{"min-support", Config{Traces: 20, Seed: 2, Procedures: 3, MinLen: 4, MaxLen: 6}, 3, []int{4, 5, 6}, 0, 1},
		{"fuzzy", Config{Traces: 100, Seed: 3, Procedures: 4, MinLen: 3, MaxLen: 12, Support: 0.1, FuzzyEvery: 2}, 10, []int{3, 6, 9, 12}, 2, 2},
		{"every-trace", Config{Traces: 5, Seed: 4, Procedures: 2, MinLen: 10, MaxLen: 10, Actions: 8, Support: 1}, 5, []int{10, 10}, 0, 1},
		{"tiny", Config{Traces: 2, Seed: 5, Procedures: 1, NoiseVocabulary: 1}, 2, []int{2}, 0, 0},
		{"big-vocabulary", Config{Traces: 50, Seed: 6, Procedures: 2, NoiseVocabulary: 2000}, 3, []int{2, 40}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Generate(tc.cfg)
			cfg := tc.cfg.withDefaults()
			if len(c.Traces) != cfg.Traces {
				t.Fatalf("len(Traces) = %d, want %d", len(c.Traces), cfg.Traces)
			}
			var lens []int
			fuzzy, flows := 0, 0
			for _, p := range c.Planted {
				lens = append(lens, len(p.Signatures))
				if len(p.FuzzySteps) > 0 {
					fuzzy++
				}
				if len(p.Bindings) > 0 {
					flows++
				}
				if len(p.TraceIDs) != tc.support {
					t.Errorf("%s: planted into %d traces, want %d", p.Name, len(p.TraceIDs), tc.support)
				}
				if !slices.IsSorted(p.TraceIDs) || len(slices.Compact(slices.Clone(p.TraceIDs))) != len(p.TraceIDs) {
					t.Errorf("%s: TraceIDs not sorted and unique: %v", p.Name, p.TraceIDs)
				}
				if len(p.Varying) == 0 {
					t.Errorf("%s: no varying parameter", p.Name)
				}
			}
			if diff := cmp.Diff(tc.lens, lens); diff != "" {
				t.Errorf("procedure lengths (-want +got):\n%s", diff)
			}
			if fuzzy != tc.fuzzy {
				t.Errorf("procedures with a fuzzy step = %d, want %d", fuzzy, tc.fuzzy)
			}
			if flows < tc.minBindings {
				t.Errorf("procedures with a binding = %d, want at least %d", flows, tc.minBindings)
			}
			checkPlantings(t, c)
			checkTraces(t, c, cfg)
		})
	}
}

// checkPlantings checks every planting against its Planted record: it
// occurs once in each listed trace and nowhere else, constants agree,
// varying values differ, and bound values equal the source output.
func checkPlantings(t *testing.T, c *Corpus) {
	t.Helper()
	byID := map[string]*trace.Trace{}
	for _, tr := range c.Traces {
		byID[tr.ID] = tr
	}
	for _, p := range c.Planted {
		var runs [][]trace.Action
		for _, tr := range c.Traces {
			at := occurrences(tr, p.Signatures)
			want := 0
			if _, ok := slices.BinarySearch(p.TraceIDs, tr.ID); ok {
				want = 1
			}
			if len(at) != want {
				t.Errorf("%s occurs %d times in %s, want %d", p.Name, len(at), tr.ID, want)
				continue
			}
			if want == 1 {
				runs = append(runs, tr.Actions[at[0]:at[0]+len(p.Signatures)])
			}
		}
		if len(runs) == 0 {
			continue
		}
		value := func(run []trace.Action, path string) any {
			i, key := parsePath(t, path)
			if strings.Contains(path, "].output.") {
				return run[i].Output.(map[string]any)[key]
			}
			return run[i].Parameters[key]
		}
		for _, path := range p.Constant {
			for _, run := range runs[1:] {
				if got, want := value(run, path), value(runs[0], path); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: constant %s = %v and %v", p.Name, path, want, got)
				}
			}
		}
		for _, path := range append(slices.Clone(p.Varying), p.Bindings...) {
			seen := map[string]bool{}
			for _, run := range runs {
				seen[string(encode(t, value(run, path)))] = true
			}
			if len(runs) > 1 && len(seen) < 2 {
				t.Errorf("%s: varying %s has one value in %d runs", p.Name, path, len(runs))
			}
		}
		if len(p.Bindings) != len(p.BoundFrom) {
			t.Fatalf("%s: %d bindings, %d sources", p.Name, len(p.Bindings), len(p.BoundFrom))
		}
		for k, path := range p.Bindings {
			to, _ := parsePath(t, path)
			from, _ := parsePath(t, p.BoundFrom[k])
			if from >= to {
				t.Errorf("%s: %s bound from later step %s", p.Name, path, p.BoundFrom[k])
			}
			for _, run := range runs {
				if got, want := value(run, path), value(run, p.BoundFrom[k]); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %s = %v, want %v from %s", p.Name, path, got, want, p.BoundFrom[k])
				}
			}
		}
		// Every parameter is classified exactly once.
		var all []string
		for i, sig := range p.Signatures {
			keys := sig[strings.LastIndex(sig, ":")+1:]
			if keys == "" {
				t.Errorf("%s: step %d has no parameters", p.Name, i+1)
				continue
			}
			for _, k := range strings.Split(keys, ",") {
				all = append(all, fmt.Sprintf("steps[%d].parameters.%s", i+1, k))
			}
		}
		classified := slices.Concat(p.Constant, p.Varying, p.Bindings)
		slices.Sort(all)
		slices.Sort(classified)
		if diff := cmp.Diff(all, classified); diff != "" {
			t.Errorf("%s: parameters vs Constant+Varying+Bindings (-want +got):\n%s", p.Name, diff)
		}
		// Side effects are identical in every planting.
		for _, run := range runs[1:] {
			for i := range run {
				if !reflect.DeepEqual(run[i].SideEffects, runs[0][i].SideEffects) {
					t.Errorf("%s: step %d side effects differ between plantings", p.Name, i+1)
				}
			}
		}
		for _, i := range p.FuzzySteps {
			a := runs[0][i-1]
			if a.Kind != trace.KindModelCall || a.Fuzzy == nil || !*a.Fuzzy || a.Cost == nil || a.Cost.ModelCalls != 1 {
				t.Errorf("%s: fuzzy step %d = %s %s fuzzy=%v cost=%+v", p.Name, i, a.Kind, a.Name, a.Fuzzy, a.Cost)
			}
		}
	}
}

// checkTraces checks ids, lengths, metadata, costs, and that no planted
// signature appears outside a planting.
func checkTraces(t *testing.T, c *Corpus, cfg Config) {
	t.Helper()
	sigs := map[string]bool{}
	first := map[string]*Planted{}
	in := map[string][]*Planted{}
	for i := range c.Planted {
		p := &c.Planted[i]
		for _, s := range p.Signatures {
			sigs[s] = true
		}
		first[p.Signatures[0]] = p
		for _, id := range p.TraceIDs {
			in[id] = append(in[id], p)
		}
	}
	for i, tr := range c.Traces {
		if want := fmt.Sprintf("trace-%06d", i+1); tr.ID != want {
			t.Errorf("Traces[%d].ID = %q, want %q", i, tr.ID, want)
		}
		planted := 0
		for _, p := range in[tr.ID] {
			planted += len(p.Signatures)
		}
		lo := int(math.Floor(0.8 * float64(cfg.Actions)))
		hi := max(int(math.Ceil(1.2*float64(cfg.Actions))), planted+len(in[tr.ID])-1)
		if n := len(tr.Actions); n < lo || n > hi {
			t.Errorf("%s has %d actions, want %d..%d", tr.ID, n, lo, hi)
		}
		var goal any
		ids := map[string]bool{}
		for j := 0; j < len(tr.Actions); j++ {
			a := &tr.Actions[j]
			if ids[a.ID] || !strings.HasPrefix(a.ID, fmt.Sprintf("t%06d-a", i+1)) {
				t.Errorf("%s: bad or duplicate action id %q", tr.ID, a.ID)
			}
			ids[a.ID] = true
			if a.Cost == nil || a.Cost.ModelCalls < 1 || a.Cost.TotalCostUSD <= 0 {
				t.Errorf("%s: action %s has no agent cost", tr.ID, a.ID)
			}
			s := signature(a)
			if !sigs[s] {
				continue
			}
			// A planted signature: it must start a planting listed for
			// this trace; skip over the planting.
			p := first[s]
			if p == nil || !slices.Contains(in[tr.ID], p) || len(occurrences(&trace.Trace{Actions: tr.Actions[j:min(j+len(p.Signatures), len(tr.Actions))]}, p.Signatures)) != 1 {
				t.Errorf("%s: planted signature %s at action %d outside a planting", tr.ID, s, j+1)
				continue
			}
			if goal == nil {
				goal = p.Goal
			}
			j += len(p.Signatures) - 1
		}
		if goal == nil {
			if tr.Metadata != nil {
				t.Errorf("%s: metadata %v on a trace without plantings", tr.ID, tr.Metadata)
			}
		} else if tr.Metadata["goal"] != goal || tr.Metadata["success_criteria"] == nil {
			t.Errorf("%s: metadata %v, want goal %q and success_criteria", tr.ID, tr.Metadata, goal)
		}
	}
}

// TestNoiseVocabulary checks that noise tools are unique and never in the
// procedure namespace, however large the vocabulary.
func TestNoiseVocabulary(t *testing.T) {
	for _, v := range []int{1, 200, 5000} {
		tools := designNoise(v, streamRand(1, 0)).tools
		seen := map[string]bool{}
		for _, tool := range tools {
			if seen[tool.name] || strings.HasPrefix(tool.name, "proc") {
				t.Errorf("designNoise(%d): bad or duplicate tool %q", v, tool.name)
			}
			seen[tool.name] = true
		}
		if len(seen) != v {
			t.Errorf("designNoise(%d) gave %d distinct tools", v, len(seen))
		}
	}
}

func TestAppendTime(t *testing.T) {
	for _, ms := range []int64{epoch, epoch + 86_399_999, 0, 951_782_400_123} {
		want := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
		if got := string(appendTime(nil, ms)); got != want {
			t.Errorf("appendTime(%d) = %q, want %q", ms, got, want)
		}
	}
}

// TestActionSize keeps generated actions near the size of real ones, so
// loading benchmarks measure something realistic.
func TestActionSize(t *testing.T) {
	c := Generate(Config{Traces: 200, Seed: 7})
	size, actions := 0, 0
	for _, tr := range c.Traces {
		size += len(encode(t, tr))
		actions += len(tr.Actions)
	}
	if per := size / actions; per < 300 || per > 500 {
		t.Errorf("average action size = %d bytes, want 300..500", per)
	}
}

func TestWrite(t *testing.T) {
	c := Generate(Config{Traces: 40, Seed: 8, FuzzyEvery: 2})
	dir := filepath.Join(t.TempDir(), "corpus")
	if err := c.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(c.Traces) {
		t.Fatalf("WriteDir wrote %d files, want %d", len(entries), len(c.Traces))
	}
	files := map[string][]byte{}
	for i, tr := range c.Traces {
		name := fmt.Sprintf("trace-%06d.json", i+1)
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[tr.ID] = data
		// The project's strict decoder accepts it...
		if _, err := trace.Decode(data, name, 0); err != nil {
			t.Errorf("trace.Decode: %v", err)
		}
		// ... and so does plain encoding/json.
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var got trace.Trace
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.ID != tr.ID || len(got.Actions) != len(tr.Actions) {
			t.Errorf("%s: read back id %q with %d actions, want %q with %d", name, got.ID, len(got.Actions), tr.ID, len(tr.Actions))
		}
		// Values are generated as UseNumber decodes them, so the trace
		// read back encodes to the same bytes.
		if again := append(encode(t, &got), '\n'); !bytes.Equal(again, data) {
			t.Errorf("%s: decode/encode round trip changed the file", name)
		}
	}

	path := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := c.WriteJSONL(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	line := 0
	for sc.Scan() {
		tr := c.Traces[line]
		if want := bytes.TrimSuffix(files[tr.ID], []byte("\n")); !bytes.Equal(sc.Bytes(), want) {
			t.Errorf("line %d of %s differs from %s.json", line+1, path, tr.ID)
		}
		line++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if line != len(c.Traces) {
		t.Errorf("WriteJSONL wrote %d lines, want %d", line, len(c.Traces))
	}
}

func TestWriteErrors(t *testing.T) {
	c := Generate(Config{Traces: 3, Seed: 9})
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteDir(file); err == nil || !strings.HasPrefix(err.Error(), "writing corpus: ") {
		t.Errorf("WriteDir(a file) = %v, want a writing corpus error", err)
	}
	if err := c.WriteJSONL(filepath.Join(file, "x.jsonl")); err == nil || !strings.HasPrefix(err.Error(), "writing corpus: ") {
		t.Errorf("WriteJSONL(under a file) = %v, want a writing corpus error", err)
	}
}

// benchConfig is the size the miner's benchmarks use: 10,000 traces
// of about 50 actions.
var benchConfig = Config{Traces: 10000, Seed: 1}

func BenchmarkGenerate(b *testing.B) {
	b.ReportAllocs()
	actions := 0
	for b.Loop() {
		c := Generate(benchConfig)
		actions = 0
		for _, t := range c.Traces {
			actions += len(t.Actions)
		}
	}
	b.ReportMetric(float64(actions), "actions/op")
}

// corpusBytes returns the encoded size of c, for MB/s.
func corpusBytes(b *testing.B, c *Corpus) int64 {
	var n int64
	for _, t := range c.Traces {
		data, err := t.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		n += int64(len(data)) + 1
	}
	return n
}

func BenchmarkWriteDir(b *testing.B) {
	c := Generate(benchConfig)
	b.SetBytes(corpusBytes(b, c))
	dir := b.TempDir()
	for b.Loop() {
		if err := c.WriteDir(dir); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteJSONL(b *testing.B) {
	c := Generate(benchConfig)
	b.SetBytes(corpusBytes(b, c))
	path := filepath.Join(b.TempDir(), "corpus.jsonl")
	for b.Loop() {
		if err := c.WriteJSONL(path); err != nil {
			b.Fatal(err)
		}
	}
}
