package tracetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Config says what corpus to generate. The zero value of every field but
// Traces and Seed is its documented default; a negative value is treated as
// zero.
type Config struct {
	// Traces is the number of traces.
	Traces int
	// Seed selects the corpus: the same Config gives the same corpus.
	Seed uint64
	// Procedures is the number K of planted procedures (default 8).
	Procedures int
	// MinLen and MaxLen bound the planted procedure lengths (default 2 and
	// 40). Lengths are spread evenly over the range: the first procedure
	// has MinLen steps and the last MaxLen. A MaxLen below MinLen is raised
	// to MinLen.
	MinLen, MaxLen int
	// Actions is the average number of actions per trace (default 50).
	// Each trace's length is drawn within ±20 % of it; noise fills what
	// the plantings leave, and a trace whose plantings need more grows.
	Actions int
	// Support is the fraction of traces each procedure is planted into
	// (default 0.05), rounded up and at least 3 traces (or all of them
	// when there are fewer). A value above 1 means every trace.
	Support float64
	// NoiseVocabulary is the number of distinct noise tools (default 200).
	NoiseVocabulary int
	// FuzzyEvery, when positive, makes the middle step of every Nth
	// procedure (the Nth, 2Nth, ...) a fuzzy model_call. Zero means no
	// procedure has a fuzzy step.
	FuzzyEvery int
}

// Defaults of Config.
const (
	DefaultProcedures      = 8
	DefaultMinLen          = 2
	DefaultMaxLen          = 40
	DefaultActions         = 50
	DefaultSupport         = 0.05
	DefaultNoiseVocabulary = 200
	// MinSupport is the fewest traces a procedure is planted into, when
	// the corpus has that many.
	MinSupport = 3
)

// withDefaults returns c with every unset field set to its default.
func (c Config) withDefaults() Config {
	c.Traces = max(c.Traces, 0)
	c.FuzzyEvery = max(c.FuzzyEvery, 0)
	if c.Procedures <= 0 {
		c.Procedures = DefaultProcedures
	}
	if c.MinLen <= 0 {
		c.MinLen = DefaultMinLen
	}
	if c.MaxLen <= 0 {
		c.MaxLen = DefaultMaxLen
	}
	c.MaxLen = max(c.MaxLen, c.MinLen)
	if c.Actions <= 0 {
		c.Actions = DefaultActions
	}
	if !(c.Support > 0) { // also catches NaN
		c.Support = DefaultSupport
	}
	c.Support = min(c.Support, 1)
	if c.NoiseVocabulary <= 0 {
		c.NoiseVocabulary = DefaultNoiseVocabulary
	}
	return c
}

// Planted describes one procedure planted into the corpus: what a miner
// should recover. Parameter paths have the form "steps[i].parameters.key"
// with a 1-based step index i, as in candidate.Parameter.SourcePaths.
type Planted struct {
	// Name is the procedure's tool namespace, such as "proc03".
	Name string `json:"name"`
	// Goal is the metadata goal of traces whose first planting is this
	// procedure.
	Goal string `json:"goal"`
	// Signatures are the action signatures of the steps in order:
	// kind + ":" + name + ":" + comma-joined sorted parameter keys.
	Signatures []string `json:"signatures"`
	// Varying are the parameter paths whose value differs between
	// plantings (every planting has its own value) and that no earlier
	// step outputs.
	Varying []string `json:"varying"`
	// Constant are the parameter paths with the same value in every
	// planting.
	Constant []string `json:"constant"`
	// Bindings are the parameter paths whose value is, in every planting,
	// the value of a field of an earlier step's output in the same run.
	// Their values also differ between plantings.
	Bindings []string `json:"bindings"`
	// BoundFrom gives, for each of Bindings at the same index, where the
	// value comes from: "steps[j].output.key".
	BoundFrom []string `json:"bound_from"`
	// FuzzySteps are the 1-based indexes of fuzzy model_call steps.
	FuzzySteps []int `json:"fuzzy_steps"`
	// TraceIDs are the traces the procedure was planted into, sorted.
	TraceIDs []string `json:"trace_ids"`
}

// Corpus is a generated set of traces and what was planted in them.
//
// To keep a large corpus cheap, actions share read-only backing data:
// the Capabilities and SideEffects slices of every planting of one step
// (and of every call of one noise tool), and the values of noise
// parameters. They are already in trace.Normalize's canonical order, so
// normalizing does not write to them; a test that changes them in place
// must copy them first.
type Corpus struct {
	// Traces are in id order: trace-000001, trace-000002, ...
	Traces []*trace.Trace
	// Planted are the procedures in order, proc01 first; proc01 is the
	// shortest.
	Planted []Planted
}

// Generate returns the corpus that cfg describes. It is deterministic:
// the traces are built in parallel, but each from its own random stream
// derived from the seed and the trace's index, so the result does not
// depend on scheduling or on the number of CPUs.
//
// The cost is linear in the number of actions, and mostly allocation:
// 10,000 traces of 50 actions take about a second of CPU time and 530 MB.
func Generate(cfg Config) *Corpus {
	cfg = cfg.withDefaults()
	master := rand.New(rand.NewPCG(cfg.Seed, 0x6a09e667f3bcc909))

	procs := designProcedures(cfg, master)
	noise := designNoise(cfg.NoiseVocabulary, master)
	plan := assign(cfg, procs, master)

	traces := make([]*trace.Trace, cfg.Traces)
	workers := min(runtime.GOMAXPROCS(0), max(cfg.Traces, 1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < cfg.Traces; i += workers {
				traces[i] = buildTrace(cfg, i, plan[i], procs, noise)
			}
		})
	}
	wg.Wait()

	planted := make([]Planted, len(procs))
	for i := range procs {
		planted[i] = procs[i].planted
	}
	return &Corpus{Traces: traces, Planted: planted}
}

// traceID returns the id of the trace with 0-based index i.
func traceID(i int) string { return fmt.Sprintf("trace-%06d", i+1) }

// streamRand returns the random stream of trace i. The two PCG seeds are
// splitmix64 hashes so that neighbouring indexes get unrelated streams.
func streamRand(seed uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(splitmix(seed^splitmix(uint64(i)+1)), splitmix(uint64(i)+0x9e3779b97f4a7c15)))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// paramClass says where a step parameter's value comes from.
type paramClass int

const (
	classConstant paramClass = iota
	classVarying
	classBound
)

// param is one parameter of a procedure step.
type param struct {
	key   string
	class paramClass
	// value is the constant value (classConstant).
	value any
	// vary computes the value of planting n (classVarying, classBound).
	vary func(p, n int) any
}

// step is one action template of a procedure.
type step struct {
	kind    trace.Kind
	name    string
	params  []param // sorted by key
	caps    []string
	effects []trace.SideEffect
	status  string
	// outputs are the bound keys this step produces.
	outputs []bindKey
	// requestID adds a per-run id to the output, as many real tools do;
	// it keeps the step's output from agreeing across runs.
	requestID bool
	fuzzy     bool
}

// procedure is a planted procedure: its steps and its Planted record.
type procedure struct {
	index    int
	goal     string
	criteria string
	steps    []step
	planted  Planted
}

// procLen returns the length of procedure p of k, spread evenly over
// [lo, hi] with the first at lo and the last at hi.
func procLen(p, k, lo, hi int) int {
	if k == 1 {
		return lo
	}
	return lo + int(math.Round(float64(p)*float64(hi-lo)/float64(k-1)))
}

// designProcedures draws the K procedures. Every second procedure (the
// 2nd, 4th, ...) has a data-flow binding, and a second one when it has at
// least 12 steps.
func designProcedures(cfg Config, r *rand.Rand) []procedure {
	procs := make([]procedure, cfg.Procedures)
	for p := range procs {
		n := procLen(p, cfg.Procedures, cfg.MinLen, cfg.MaxLen)
		name := fmt.Sprintf("proc%02d", p+1)
		pr := procedure{
			index:    p,
			goal:     fmt.Sprintf("%s (%s)", goals[p%len(goals)], name),
			criteria: fmt.Sprintf("all %d steps of %s succeed", n, name),
			steps:    make([]step, n),
		}
		fuzzyAt := -1
		if cfg.FuzzyEvery > 0 && (p+1)%cfg.FuzzyEvery == 0 {
			fuzzyAt = n / 2
		}
		for j := range pr.steps {
			pr.steps[j] = designStep(r, name, j, j == fuzzyAt)
		}

		// Data flow: step from outputs key, step to takes it.
		type flow struct {
			key      bindKey
			from, to int
		}
		var flows []flow
		if p%2 == 1 && n >= 2 {
			nb := 1
			if n >= 12 {
				nb = 2
			}
			keys := slices.Clone(bindKeys)
			r.Shuffle(len(keys), func(a, b int) { keys[a], keys[b] = keys[b], keys[a] })
			for _, k := range keys[:nb] {
				from := r.IntN(n - 1)
				to := from + 1 + r.IntN(n-1-from)
				flows = append(flows, flow{k, from, to})
				pr.steps[from].outputs = append(pr.steps[from].outputs, k)
				pr.steps[to].params = append(pr.steps[to].params, param{key: k.name, class: classBound, vary: k.value})
			}
		}

		// Ordinary parameters: each key is constant or varying for the
		// whole procedure, so a key used by several steps carries one
		// value through the run, as a version does in a release.
		classOf := map[string]param{}
		for j := range pr.steps {
			s := &pr.steps[j]
			want := 1 + r.IntN(4)
			for _, ki := range r.Perm(len(paramKeys)) {
				if len(s.params) >= want {
					break
				}
				k := paramKeys[ki]
				pm, ok := classOf[k.name]
				if !ok {
					pm = param{key: k.name, class: classConstant, value: k.consts[r.IntN(len(k.consts))]}
					if r.IntN(2) == 0 {
						pm = param{key: k.name, class: classVarying, vary: k.vary}
					}
					classOf[k.name] = pm
				}
				s.params = append(s.params, pm)
			}
		}
		// A procedure with nothing varying would be one fixed command; make
		// its first constant vary so its workflow has an input.
		varies := false
		for _, pm := range classOf {
			varies = varies || pm.class == classVarying
		}
		if !varies {
			key := pr.steps[0].params[0].key
			k := paramKeys[slices.IndexFunc(paramKeys, func(k paramKey) bool { return k.name == key })]
			pm := param{key: key, class: classVarying, vary: k.vary}
			for j := range pr.steps {
				for q := range pr.steps[j].params {
					if pr.steps[j].params[q].key == key {
						pr.steps[j].params[q] = pm
					}
				}
			}
		}

		pl := Planted{Name: name, Goal: pr.goal, Varying: []string{}, Constant: []string{}, Bindings: []string{}, BoundFrom: []string{}, FuzzySteps: []int{}, TraceIDs: []string{}}
		for j := range pr.steps {
			s := &pr.steps[j]
			sort.Slice(s.params, func(a, b int) bool { return s.params[a].key < s.params[b].key })
			keys := make([]string, len(s.params))
			for q, pm := range s.params {
				keys[q] = pm.key
				path := fmt.Sprintf("steps[%d].parameters.%s", j+1, pm.key)
				switch pm.class {
				case classConstant:
					pl.Constant = append(pl.Constant, path)
				case classVarying:
					pl.Varying = append(pl.Varying, path)
				}
			}
			pl.Signatures = append(pl.Signatures, string(s.kind)+":"+s.name+":"+strings.Join(keys, ","))
			if s.fuzzy {
				pl.FuzzySteps = append(pl.FuzzySteps, j+1)
			}
		}
		sort.Slice(flows, func(a, b int) bool {
			if flows[a].to != flows[b].to {
				return flows[a].to < flows[b].to
			}
			return flows[a].key.name < flows[b].key.name
		})
		for _, f := range flows {
			pl.Bindings = append(pl.Bindings, fmt.Sprintf("steps[%d].parameters.%s", f.to+1, f.key.name))
			pl.BoundFrom = append(pl.BoundFrom, fmt.Sprintf("steps[%d].output.%s", f.from+1, f.key.name))
		}
		pr.planted = pl
		procs[p] = pr
	}
	return procs
}

// designStep draws the kind, name, capabilities and side effects of step
// j of a procedure. Side effects are fixed here, so they are identical in
// every planting and a miner has no reason to reject the procedure.
func designStep(r *rand.Rand, proc string, j int, fuzzy bool) step {
	s := step{status: stepStatuses[r.IntN(len(stepStatuses))], requestID: r.IntN(4) == 0}
	target := fmt.Sprintf("%s/step%02d", proc, j+1)
	var verb string
	switch x := r.IntN(20); {
	case fuzzy:
		s.kind, s.fuzzy = trace.KindModelCall, true
		verb = modelVerbs[r.IntN(len(modelVerbs))]
		s.caps = []string{"model.invoke"}
		s.requestID = false
	case x < 11:
		s.kind = trace.KindToolCall
		verb = toolVerbs[r.IntN(len(toolVerbs))]
		s.caps = []string{"proc.exec"}
		if r.IntN(4) == 0 {
			s.caps = []string{"git.write", "proc.exec"}
			s.effects = []trace.SideEffect{{Kind: "git_ref", Target: proc + "-branch", Capability: "git.write"}}
		}
	case x < 17:
		s.kind = trace.KindFileMutation
		verb = mutationVerbs[r.IntN(len(mutationVerbs))]
		s.caps = []string{"fs.write"}
		s.effects = []trace.SideEffect{{Kind: "file_write", Target: "config/" + target + ".yaml", Capability: "fs.write"}}
	default:
		s.kind = trace.KindExternalAPICall
		verb = apiVerbs[r.IntN(len(apiVerbs))]
		s.caps = []string{"net.http"}
		if r.IntN(2) == 0 {
			s.effects = []trace.SideEffect{{Kind: "external_api", Target: "https://api.example.invalid/" + target, Capability: "net.http", Mutation: "create"}}
		}
	}
	s.name = fmt.Sprintf("%s.step%02d_%s", proc, j+1, verb)
	return s
}

// noiseTool is one tool of the noise vocabulary. Its parameter keys are
// fixed, as a real tool's schema is, so its signature is fixed too.
type noiseTool struct {
	kind trace.Kind
	name string
	caps []string
	keys []string
	// values[i] is the pool keys[i] draws its values from.
	values [][]any
}

// noiseSet is the noise vocabulary of a corpus and the pools of values
// noise actions draw from.
type noiseSet struct {
	tools []noiseTool
	// nums[i] is json.Number(i).
	nums []any
	// notes are the outputs of agent model calls.
	notes []any
	// scratch are the side effects of noise file writes.
	scratch [][]trace.SideEffect
}

// noisePool is the number of distinct values of each noise parameter key.
// Drawing from a pool instead of formatting a fresh string per call keeps
// noise allocation-free, which is most of what Generate spends; agents do
// read the same few files and run the same few queries again and again.
const noisePool = 64

// designNoise draws v noise tools. Names are namespace.verb_noun; past the
// number of distinct combinations a numeric suffix keeps them unique. No
// namespace starts with "proc", so no noise tool shares a name, and hence
// a signature, with a procedure step.
func designNoise(v int, r *rand.Rand) *noiseSet {
	ns := &noiseSet{
		nums:    make([]any, 512),
		notes:   make([]any, noisePool),
		scratch: make([][]trace.SideEffect, noisePool),
	}
	for i := range ns.nums {
		ns.nums[i] = num(i)
	}
	for i := range ns.notes {
		ns.notes[i] = fmt.Sprintf("next: inspect item %d", r.IntN(1000))
	}
	for i := range ns.scratch {
		target := fmt.Sprintf("scratch/notes-%04d.md", r.IntN(10000))
		ns.scratch[i] = []trace.SideEffect{{Kind: "file_write", Target: target, Capability: "fs.write"}}
	}
	pools := make(map[string][]any, len(noiseKeys))
	for _, k := range noiseKeys {
		pool := make([]any, noisePool)
		for i := range pool {
			pool[i] = noiseValue(k, r)
		}
		pools[k] = pool
	}
	combos := len(noiseNamespaces) * 4 * len(noiseNouns)
	order := r.Perm(combos)
	tools := make([]noiseTool, v)
	for i := range tools {
		c := order[i%combos]
		space := noiseNamespaces[c/(4*len(noiseNouns))]
		verb := space.verbs[c/len(noiseNouns)%4]
		name := space.name + "." + verb + "_" + noiseNouns[c%len(noiseNouns)]
		if i >= combos {
			name += fmt.Sprintf("_%d", i/combos)
		}
		keys := make([]string, 0, 3)
		for _, k := range r.Perm(len(noiseKeys))[:r.IntN(4)] {
			keys = append(keys, noiseKeys[k])
		}
		sort.Strings(keys)
		values := make([][]any, len(keys))
		for i, k := range keys {
			values[i] = pools[k]
		}
		tools[i] = noiseTool{kind: trace.Kind(space.kind), name: name, caps: []string{space.capability}, keys: keys, values: values}
	}
	ns.tools = tools
	return ns
}

// noiseValue returns a random value for a noise parameter key.
func noiseValue(key string, r *rand.Rand) any {
	switch key {
	case "path":
		return fmt.Sprintf("internal/pkg%02d/file_%03d.go", r.IntN(40), r.IntN(500))
	case "dir":
		return fmt.Sprintf("internal/pkg%02d", r.IntN(40))
	case "pattern", "query", "selector":
		return fmt.Sprintf("%s_%d", []string{"TODO", "retry", "timeout", "ctx.Err", "panic"}[r.IntN(5)], r.IntN(100))
	case "url":
		return fmt.Sprintf("https://docs.example.invalid/page/%d", r.IntN(5000))
	case "ref":
		return fmt.Sprintf("HEAD~%d", r.IntN(30))
	case "since":
		return fmt.Sprintf("%dh", 1+r.IntN(72))
	case "format":
		return []string{"json", "text", "table"}[r.IntN(3)]
	default: // limit, depth, lines
		return num(1 + r.IntN(500))
	}
}

// planting is one occurrence of a procedure: the n-th (0-based, in trace
// order) of procedure proc.
type planting struct{ proc, n int }

// assign chooses the traces of every procedure: a uniform sample of the
// support size, drawn by a partial Fisher-Yates shuffle of one shared
// permutation (any starting order gives a uniform sample).
func assign(cfg Config, procs []procedure, r *rand.Rand) [][]planting {
	plan := make([][]planting, cfg.Traces)
	support := int(math.Ceil(cfg.Support*float64(cfg.Traces) - 1e-9))
	support = min(max(support, MinSupport), cfg.Traces)
	perm := make([]int, cfg.Traces)
	for i := range perm {
		perm[i] = i
	}
	for p := range procs {
		for i := range support {
			j := i + r.IntN(cfg.Traces-i)
			perm[i], perm[j] = perm[j], perm[i]
		}
		chosen := slices.Clone(perm[:support])
		slices.Sort(chosen)
		ids := make([]string, len(chosen))
		for n, t := range chosen {
			plan[t] = append(plan[t], planting{proc: p, n: n})
			ids[n] = traceID(t)
		}
		sort.Strings(ids)
		procs[p].planted.TraceIDs = ids
	}
	return plan
}
