package tracetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// This file builds the traces. Generate spends most of its time here, and
// most of that in the allocator and the garbage collector, because the
// whole corpus stays live: 10,000 traces of 50 actions are half a million
// actions. So a trace is built with a handful of allocations per action:
// costs and durations live in one array per trace, ids and timestamps are
// substrings of one string per trace, and capabilities, side effects and
// noise values are shared, read-only, between the actions that have the
// same ones (see Corpus).

// epoch is the start time of trace 1; later traces start later. A fixed
// date keeps the corpus independent of the wall clock.
var epoch = time.Date(2025, time.March, 3, 9, 0, 0, 0, time.UTC).UnixMilli()

var (
	yes = true
	no  = false
)

// builder accumulates the actions of one trace.
type builder struct {
	r    *rand.Rand
	tnum int
	// now is the clock in Unix milliseconds.
	now       int64
	actions   []trace.Action
	costs     []trace.Cost
	durations []int64
	// text holds every action's id and timestamp back to back; ends[i]
	// is where action i's id ends and its timestamp starts.
	text  []byte
	ends  []int
	usage trace.Usage
}

// buildTrace builds trace i with its plantings. The plantings are placed
// in random order at random positions, separated by at least one noise
// action when the trace has noise to spare.
func buildTrace(cfg Config, i int, plants []planting, procs []procedure, noise *noiseSet) *trace.Trace {
	r := streamRand(cfg.Seed, i)
	plants = slices.Clone(plants)
	r.Shuffle(len(plants), func(a, b int) { plants[a], plants[b] = plants[b], plants[a] })

	planted := 0
	for _, pl := range plants {
		planted += len(procs[pl.proc].steps)
	}
	target := int(math.Round(float64(cfg.Actions) * (0.8 + 0.4*r.Float64())))
	m := len(plants)
	inner := max(m-1, 0)
	total := max(target, planted+inner, 1)
	free := total - planted - inner

	// Stars and bars: m sorted cut points in [0, free] split the free
	// noise into m+1 gaps; each inner gap gets one more action.
	cuts := make([]int, m)
	for k := range cuts {
		cuts[k] = r.IntN(free + 1)
	}
	slices.Sort(cuts)

	b := &builder{
		r:         r,
		tnum:      i + 1,
		now:       epoch + int64(i)*7*60_000 + int64(r.IntN(300))*1000,
		actions:   make([]trace.Action, 0, total),
		costs:     make([]trace.Cost, total),
		durations: make([]int64, total),
		text:      make([]byte, 0, total*37),
		ends:      make([]int, 0, 2*total),
	}
	t := &trace.Trace{
		Version:   trace.SchemaVersion,
		ID:        traceID(i),
		StartedAt: string(appendTime(nil, b.now)),
		Flow:      &trace.Flow{AgentRunID: fmt.Sprintf("run-%06d", i+1)},
	}
	prev := 0
	for k, pl := range plants {
		gap := cuts[k] - prev
		if k > 0 {
			gap++
		}
		prev = cuts[k]
		b.noise(gap, noise)
		b.procedure(&procs[pl.proc], pl.n)
	}
	b.noise(free-prev, noise)

	text := string(b.text)
	start := 0
	for k := range b.actions {
		idEnd, tsEnd := b.ends[2*k], b.ends[2*k+1]
		b.actions[k].ID = text[start:idEnd]
		b.actions[k].Timestamp = text[idEnd:tsEnd]
		start = tsEnd
	}
	t.Actions = b.actions
	t.FinishedAt = string(appendTime(nil, b.now))
	b.usage.TotalCostUSD = roundUSD(b.usage.TotalCostUSD)
	t.Usage = &b.usage
	if m > 0 {
		first := &procs[plants[0].proc]
		t.Metadata = map[string]any{"goal": first.goal, "success_criteria": first.criteria}
	}
	return t
}

// roundUSD rounds to a millionth of a dollar so costs print briefly.
func roundUSD(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// add appends action a with the next id and timestamp and its cost, and
// advances the clock by the model's and the tool's time. Every action
// carries the cost of the agent's turn that chose it: one model call whose
// input grows with the trace, as an agent's context does. That cost is
// what running a crystallized workflow saves; heavy marks a fuzzy step,
// whose call is the step itself and stays.
func (b *builder) add(a trace.Action, toolMS int, heavy bool) {
	k := len(b.actions)
	in := 1200 + 40*k + b.r.IntN(2500)
	out := 40 + b.r.IntN(360)
	wall := 600 + b.r.IntN(2400)
	if heavy {
		in += 4000
		out += 600
		wall += 4000
	}
	c := &b.costs[k]
	*c = trace.Cost{
		Model:        "example-agent-llm",
		ModelCalls:   1,
		InputTokens:  int64(in),
		OutputTokens: int64(out),
		TotalCostUSD: roundUSD(float64(in)*3e-6 + float64(out)*15e-6),
		WallMS:       int64(wall),
	}
	a.Cost = c
	b.durations[k] = int64(toolMS)
	a.DurationMS = &b.durations[k]

	// Usage follows trace.Normalize: wall time is the model's plus the
	// tool's.
	b.usage.ModelCalls += c.ModelCalls
	b.usage.InputTokens += c.InputTokens
	b.usage.OutputTokens += c.OutputTokens
	b.usage.TotalCostUSD += c.TotalCostUSD
	b.usage.WallMS += c.WallMS + int64(toolMS)

	// Id "t000123-a017", then the timestamp.
	b.text = append(b.text, 't')
	b.text = appendPad(b.text, b.tnum, 6)
	b.text = append(b.text, "-a"...)
	b.text = appendPad(b.text, k+1, 3)
	b.ends = append(b.ends, len(b.text))
	b.text = appendTime(b.text, b.now)
	b.ends = append(b.ends, len(b.text))

	b.now += c.WallMS + int64(toolMS)
	b.actions = append(b.actions, a)
}

// procedure appends planting n of pr.
func (b *builder) procedure(pr *procedure, n int) {
	for j := range pr.steps {
		s := &pr.steps[j]
		params := make(map[string]any, len(s.params))
		for _, pm := range s.params {
			if pm.class == classConstant {
				params[pm.key] = pm.value
			} else {
				params[pm.key] = pm.vary(pr.index, n)
			}
		}
		// A bound value is a function of (procedure, planting), like the
		// consumer's parameter, so both sides compute it independently.
		out := map[string]any{"status": s.status}
		for _, k := range s.outputs {
			out[k.name] = k.value(pr.index, n)
		}
		if s.requestID {
			out["request_id"] = fmt.Sprintf("req-%012x", b.r.Uint64()>>16)
		}
		a := trace.Action{
			Kind:          s.kind,
			Name:          s.name,
			Parameters:    params,
			Output:        out,
			Capabilities:  s.caps,
			SideEffects:   s.effects,
			Deterministic: &yes,
		}
		toolMS := 20 + b.r.IntN(1500)
		if s.fuzzy {
			out["decision"] = []string{"proceed", "proceed_with_note", "escalate"}[b.r.IntN(3)]
			a.Deterministic, a.Fuzzy = &no, &yes
			toolMS = 0
		}
		b.add(a, toolMS, s.fuzzy)
	}
}

// noise appends k noise actions.
func (b *builder) noise(k int, ns *noiseSet) {
	r := b.r
	for range k {
		t := &ns.tools[r.IntN(len(ns.tools))]
		var params map[string]any
		if len(t.keys) > 0 {
			params = make(map[string]any, len(t.keys))
			for i, key := range t.keys {
				params[key] = t.values[i][r.IntN(noisePool)]
			}
		}
		a := trace.Action{
			Kind:         t.kind,
			Name:         t.name,
			Parameters:   params,
			Capabilities: t.caps,
		}
		toolMS := 5 + r.IntN(800)
		switch t.kind {
		case trace.KindModelCall:
			a.Output = map[string]any{"text": ns.notes[r.IntN(len(ns.notes))]}
			a.Deterministic = &no
			toolMS = 0
		case trace.KindFileMutation:
			a.Output = map[string]any{"bytes": ns.nums[r.IntN(len(ns.nums))]}
			a.SideEffects = ns.scratch[r.IntN(len(ns.scratch))]
			a.Deterministic = &yes
		default:
			a.Output = map[string]any{"items": ns.nums[r.IntN(200)], "truncated": r.IntN(8) == 0}
			a.Deterministic = &yes
		}
		b.add(a, toolMS, false)
	}
}

// appendPad appends n in decimal, zero-padded to width digits.
func appendPad(b []byte, n, width int) []byte {
	var d [20]byte
	s := strconv.AppendInt(d[:0], int64(n), 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// appendTime appends ms (Unix milliseconds) as an RFC 3339 UTC timestamp
// with milliseconds, "2025-03-03T09:16:28.000Z". It is what
// time.Time.Format would write, at a fraction of the cost.
func appendTime(b []byte, ms int64) []byte {
	t := time.UnixMilli(ms).UTC()
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	b = appendPad(b, year, 4)
	b = append(b, '-')
	b = appendPad(b, int(month), 2)
	b = append(b, '-')
	b = appendPad(b, day, 2)
	b = append(b, 'T')
	b = appendPad(b, hour, 2)
	b = append(b, ':')
	b = appendPad(b, minute, 2)
	b = append(b, ':')
	b = appendPad(b, sec, 2)
	b = append(b, '.')
	b = appendPad(b, int(ms%1000), 3)
	return append(b, 'Z')
}
