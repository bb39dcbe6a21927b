package mine

import (
	"context"
	"fmt"
	"slices"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Mining in two passes.
//
// The exact miner needs the full actions of a trace only to build the
// candidates it is an example of; finding the repeats needs one symbol
// per action. So a corpus too large to hold decoded is mined in two
// passes: the first streams it, keeping per trace its symbol sequence
// (an int32 per action), its exclusion if it has one, and where it lives
// (the caller keeps that); the second builds the ranked repeats into
// candidates, reading back, batch by batch, only the traces of their
// examples. Peak memory is then the symbol arrays, the suffix structure
// (about 17 bytes per action) and the example traces of one batch of
// candidates, plus a cache of decoded examples bounded by
// Options.ExampleCache, so that candidates that share examples (the
// usual case: a procedure and its variants) do not read them again.
//
// Mine itself is the same road with the traces in memory: it summarizes
// every trace, adds it to a Scan and mines it, so the two give the same
// report byte for byte (TestTwoPassMatchesMine).

// DefaultExampleCache is the most actions of decoded example traces a
// two-pass run keeps between batches of candidates when
// Options.ExampleCache is zero: about half a gigabyte of decoded traces,
// the whole of a corpus of 10,000 traces of 50 actions.
const DefaultExampleCache = 1 << 19

func (o Options) exampleCache() int {
	if o.ExampleCache <= 0 {
		return DefaultExampleCache
	}
	return o.ExampleCache
}

// Summary is what the first pass keeps of one trace. Summarize computes
// it on any goroutine; Scan.Add takes it in corpus order.
type Summary struct {
	exclusion  *candidate.Exclusion
	signatures []string
	// flags are what the gapped miner needs of each action besides its
	// signature (actionFlags).
	flags []uint8
	// agent and observation are the first evidence, if any, that auto
	// would choose the gapped miner for a corpus with this trace.
	agent, observation string
	// session is the session the trace belongs to (sessionOf); "" for a
	// summary rebuilt without one, which counts as a session of its own.
	session string
}

// sessionOf is the session a trace belongs to: its
// metadata.parent_session_id when that is set (a subagent's part of a
// session, or a continuation after compaction), else the trace itself.
// Support counts sessions, so one session split over several traces
// supports a procedure once.
func sessionOf(id, parent string) string {
	if parent != "" {
		return parent
	}
	return id
}

// Session is the session t belongs to (see sessionOf): what support
// counts, and what a hold-out keeps together.
func Session(t *trace.Trace) string {
	parent, _ := t.Metadata["parent_session_id"].(string)
	return sessionOf(t.ID, parent)
}

// Summarize returns what the first pass keeps of t: whether it is
// excluded and why, and its action signatures. t must be normalized.
func Summarize(t *trace.Trace) Summary {
	var exclusion *candidate.Exclusion
	if ex, ok := Excluded(t); ok {
		exclusion = &ex
	}
	agent, hasAgent := t.Metadata["agent"]
	parent, _ := t.Metadata["parent_session_id"].(string)
	s := summaryOf(exclusion, t.ID, agent, hasAgent, len(t.Actions),
		func(i int) actionFacts { return decodedFacts(&t.Actions[i]) },
		func(i int) string { return t.Actions[i].Signature() })
	s.session = sessionOf(t.ID, parent)
	return s
}

// SummarizeSkim is Summarize for a trace read by trace.Parser.Skim, whose
// Source and SourceHash the loader set: given the skim of a document,
// it returns what Summarize returns for the document decoded and
// normalized, without the trace ever being built.
func SummarizeSkim(t *trace.Skim) Summary {
	var exclusion *candidate.Exclusion
	if ex, ok := excludedSkim(t); ok {
		exclusion = &ex
	}
	s := summaryOf(exclusion, t.ID, t.Agent, t.HasAgent, len(t.Actions),
		func(i int) actionFacts { return skimFacts(&t.Actions[i]) },
		func(i int) string { return t.Actions[i].Signature })
	s.session = sessionOf(t.ID, t.ParentSession)
	return s
}

// actionFacts is what the first pass's rules read of an action, whether
// its trace was decoded or skimmed, so that one set of rules serves both.
type actionFacts struct {
	id, name string
	kind     trace.Kind
	failed   bool
	// nondeterministicEffect: the action has side effects but is fuzzy
	// or nondeterministic.
	nondeterministicEffect bool
	// sideEffects and needsPerson: the action has side effects, and
	// requires a person's approval (for the gap rule).
	sideEffects, needsPerson bool
}

func decodedFacts(a *trace.Action) actionFacts {
	return actionFacts{id: a.ID, name: a.Name, kind: a.Kind, failed: a.Failed(), nondeterministicEffect: a.NondeterministicSideEffect(),
		sideEffects: len(a.SideEffects) > 0, needsPerson: a.Approval != nil && a.Approval.Required}
}

func skimFacts(a *trace.SkimAction) actionFacts {
	return actionFacts{id: a.ID, name: a.Name, kind: a.Kind, failed: a.Failed, nondeterministicEffect: a.NondeterministicSideEffect,
		sideEffects: a.HasSideEffects, needsPerson: a.ApprovalRequired}
}

// summaryOf is Summarize over a trace's id, its metadata.agent, and its n
// actions read through at and signature; exclusion is what Excluded found.
func summaryOf(exclusion *candidate.Exclusion, id string, agent any, hasAgent bool, n int, at func(int) actionFacts, signature func(int) string) Summary {
	s := Summary{exclusion: exclusion}
	if hasAgent {
		s.agent = fmt.Sprintf("auto: trace %s has metadata.agent %v", id, agent)
	}
	for i := range n {
		if f := at(i); f.kind == trace.KindObservation {
			s.observation = fmt.Sprintf("auto: trace %s action %s is an observation", id, f.id)
			break
		}
	}
	if exclusion == nil {
		s.signatures = make([]string, n)
		s.flags = make([]uint8, n)
		for j := range n {
			s.signatures[j] = signature(j)
			s.flags[j] = flagsOf(at(j))
		}
	}
	return s
}

// excludedSkim is Excluded for a skimmed trace, with the same messages.
func excludedSkim(t *trace.Skim) (candidate.Exclusion, bool) {
	ex := candidate.Exclusion{TraceID: t.ID, Source: t.Source, SourceHash: t.SourceHash}
	return exclusionOf(ex, t.PolicyViolation, len(t.Actions), func(i int) actionFacts { return skimFacts(&t.Actions[i]) })
}

// exclusionOf is Excluded over a trace's policy violation and its n
// actions read through at; ex names the trace.
func exclusionOf(ex candidate.Exclusion, policyViolation func() (string, bool), n int, at func(int) actionFacts) (candidate.Exclusion, bool) {
	if actionID, ok := policyViolation(); ok {
		ex.Code = candidate.CodeUnresolvedPolicyViolation
		ex.ActionID = actionID
		if actionID != "" {
			ex.Message = fmt.Sprintf("action %s carries an unresolved policy violation", actionID)
		} else {
			ex.Message = "trace metadata carries an unresolved policy violation"
		}
		return ex, true
	}
	for i := range n {
		if f := at(i); f.nondeterministicEffect {
			ex.Code = candidate.CodeNondeterministicEffect
			ex.ActionID = f.id
			ex.Message = fmt.Sprintf("action %s (%s) has side effects but is fuzzy or nondeterministic, so its effects cannot be replayed", f.id, f.name)
			return ex, true
		}
	}
	return ex, false
}

// flagsOf is what the gapped miner needs of an action besides its
// signature.
func flagsOf(f actionFacts) uint8 {
	var flags uint8
	if f.kind == trace.KindObservation {
		flags |= flagObservation
	}
	if f.failed {
		flags |= flagFailed
	}
	if f.kind == trace.KindFileMutation {
		flags |= flagEdit
	}
	if f.sideEffects || f.kind == trace.KindHumanApproval {
		flags |= flagChanges
	}
	if f.needsPerson {
		flags |= flagNeedsPerson
	}
	return flags
}

// NewSummary rebuilds a Summary from its parts (see Exclusion, Evidence,
// Session, Signatures and Flags), so that a trace store that kept them
// can mine its traces again without decoding them. Given the parts of
// Summarize(t), it returns a Summary equal to Summarize(t). An empty
// session makes the trace a session of its own.
func NewSummary(exclusion *candidate.Exclusion, agent, observation, session string, signatures []string, flags []uint8) Summary {
	s := Summary{exclusion: exclusion, agent: agent, observation: observation, session: session}
	if exclusion == nil {
		s.signatures = signatures
		if s.signatures == nil {
			s.signatures = []string{}
		}
		s.flags = flags
		if s.flags == nil {
			s.flags = []uint8{}
		}
	}
	return s
}

// Exclusion is why the trace is not mined, or nil when it is eligible.
func (s Summary) Exclusion() *candidate.Exclusion { return s.exclusion }

// Evidence is what would make auto choose the gapped miner for a corpus
// with the trace: its metadata.agent, its first observation; "" for none.
func (s Summary) Evidence() (agent, observation string) { return s.agent, s.observation }

// Session is the session the trace belongs to: its
// metadata.parent_session_id, else its own id. Support counts sessions.
func (s Summary) Session() string { return s.session }

// Signatures are the action signatures of an eligible trace, one per
// action; nil for an excluded one.
func (s Summary) Signatures() []string { return s.signatures }

// Flags are what the gapped miner needs of each action of an eligible
// trace besides its signature (whether it is an observation, failed, an
// edit), one byte per action; nil for an excluded one. Their bits are
// this package's: a caller keeps them and gives them back to NewSummary.
func (s Summary) Flags() []uint8 { return s.flags }

// Scan is the first pass of a mining run: the symbol sequences of the
// eligible traces, in corpus order, and the exclusions.
type Scan struct {
	opts    Options
	report  *candidate.Report
	symbols map[string]int32
	seqs    [][]int32
	// session[i] is the session of eligible trace i, numbered in order of
	// first appearance; sessionIDs numbers them. Support counts distinct
	// sessions, through these int32s, never the strings.
	session    []int32
	sessionIDs map[string]int32
	sessions   int
	actions    int
	// flags holds each eligible trace's action flags, for the gapped
	// miner; an exact run does not keep them.
	flags [][]uint8
	// agent and observation are the first summaries' evidence for the
	// gapped miner.
	agent, observation string
	// examples maps the id of each candidate built to the eligible
	// indexes of its examples, for Sources.
	examples map[string][]int32
	// verified maps the id of a sampled candidate to the examples its
	// sample check also verified for shadow replay (Options.Verify).
	verified map[string]verifiedExamples
	// src is the second pass's cache of example traces, which Sources
	// reads through.
	src *fetchedTraces
}

// NewScan starts a mining run with opts, which it checks.
func NewScan(opts Options) (*Scan, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Scan{
		opts: opts,
		report: &candidate.Report{
			Version:            candidate.ReportVersion,
			GeneratedAt:        opts.GeneratedAt,
			ExcludedTraces:     []candidate.Exclusion{},
			SkippedFiles:       []candidate.SkippedFile{},
			Candidates:         []candidate.Candidate{},
			RejectedCandidates: []candidate.Candidate{},
			Warnings:           []candidate.Problem{},
			InputFormat:        InputFormat(),
		},
		symbols:    make(map[string]int32),
		sessionIDs: map[string]int32{},
		examples:   map[string][]int32{},
		verified:   map[string]verifiedExamples{},
	}, nil
}

// Add takes the summary of the next trace of the corpus and returns its
// index among the eligible traces, or -1 when it is excluded. Symbols are
// assigned in first-seen order, so the sequences do not depend on how
// the corpus was read, as long as Add sees the traces in path order.
func (s *Scan) Add(sum Summary) int {
	if s.agent == "" {
		s.agent = sum.agent
	}
	if s.observation == "" {
		s.observation = sum.observation
	}
	if sum.exclusion != nil {
		s.report.ExcludedTraces = append(s.report.ExcludedTraces, *sum.exclusion)
		return -1
	}
	seq := make([]int32, len(sum.signatures))
	for j, sig := range sum.signatures {
		id, ok := s.symbols[sig]
		if !ok {
			id = int32(len(s.symbols))
			s.symbols[sig] = id
		}
		seq[j] = id
	}
	s.seqs = append(s.seqs, seq)
	id, ok := s.sessionIDs[sum.session]
	if !ok || sum.session == "" {
		id = int32(s.sessions)
		s.sessions++
		if sum.session != "" {
			s.sessionIDs[sum.session] = id
		}
	}
	s.session = append(s.session, id)
	if s.opts.Mode != ModeExact {
		s.flags = append(s.flags, sum.flags)
	}
	s.actions += len(seq)
	return len(s.seqs) - 1
}

// Gapped reports whether the corpus scanned so far is for the gapped
// miner (see Options.Mode). Both miners read their examples back: the
// gapped one searches the symbol sequences and the action flags the scan
// keeps, and reads a candidate's examples only to build it.
func (s *Scan) Gapped() bool {
	gapped, _ := s.gapped()
	return gapped
}

// gapped is Gapped with the reason the report gives for the choice: the
// first trace naming an agent, or else the first observation, as
// chooseMiner finds them.
func (s *Scan) gapped() (bool, string) {
	switch s.opts.Mode {
	case ModeExact:
		return false, ""
	case ModeGapped:
		return true, "requested"
	}
	if s.agent != "" {
		return true, s.agent
	}
	if s.observation != "" {
		return true, s.observation
	}
	return false, ""
}

// Fetch reads back eligible traces by their index among the eligible
// traces (Scan.Add's result). The indexes are distinct and increasing;
// it returns the traces in that order.
type Fetch func(ctx context.Context, eligible []int32) ([]*trace.Trace, error)

// FetchWindows reads back the actions windows[i] of the eligible trace
// eligible[i], as trace.Trace.Window cuts them, and returns them in that
// order; an index may repeat, with another window.
type FetchWindows func(ctx context.Context, eligible []int32, windows []trace.Window) ([]*trace.Trace, error)

// Mine runs the second pass: it finds the repeats and builds the ranked
// ones into candidates, reading their examples through fetch. It returns
// the report Mine returns for the same traces, with either miner.
func (s *Scan) Mine(ctx context.Context, fetch Fetch) (*candidate.Report, error) {
	return s.MineWindows(ctx, fetch, nil)
}

// MineWindows is Mine with the examples that complete a sampled candidate
// (the ones outside its sample, checked against it) read through windows,
// which decodes only the candidate's actions of each: most of a large
// corpus's second pass is reading those examples. With windows nil they
// are read whole through fetch and cut.
func (s *Scan) MineWindows(ctx context.Context, fetch Fetch, windows FetchWindows) (*candidate.Report, error) {
	s.src = &fetchedTraces{fetch: fetch, fetchWindows: windows, seqs: s.seqs, cache: make([]*trace.Trace, len(s.seqs)), budget: s.opts.exampleCache()}
	if gapped, reason := s.gapped(); gapped {
		return s.mineGapped(ctx, s.src, reason)
	}
	// The exact miner has no use for the action flags auto kept in case
	// the corpus turned out to be an agent's.
	s.flags = nil
	return s.mine(ctx, s.src)
}

// Sources reads back the example traces of every candidate listed in r
// (selected, safe and rejected), in corpus order, each once: what shadow
// replay and the bundle need of the sources. It reads through the cache
// of the second pass, so the examples of the last candidates built are
// not read again. It must be called after Mine.
func (s *Scan) Sources(ctx context.Context, r *candidate.Report) ([]*trace.Trace, error) {
	if s.src == nil {
		return nil, fmt.Errorf("sources of a scan that was not mined")
	}
	var need []int32
	for _, list := range [][]candidate.Candidate{r.Candidates, r.RejectedCandidates} {
		for i := range list {
			need = append(need, s.examples[list[i].ID]...)
		}
	}
	slices.Sort(need)
	need = slices.Compact(need)
	all, err := s.src.traces(ctx, need)
	if err != nil {
		return nil, err
	}
	out := make([]*trace.Trace, len(need))
	for i, q := range need {
		out[i] = all[q]
	}
	return out, nil
}

// Examples reads back the example traces of the candidate with id, as
// Mine built it, in corpus order, through the second pass's cache. It
// must be called after Mine.
func (s *Scan) Examples(ctx context.Context, id string) ([]*trace.Trace, error) {
	if s.src == nil {
		return nil, fmt.Errorf("examples of a scan that was not mined")
	}
	need, ok := s.examples[id]
	if !ok {
		return nil, fmt.Errorf("candidate %s was not built by this scan", id)
	}
	all, err := s.src.traces(ctx, need)
	if err != nil {
		return nil, err
	}
	out := make([]*trace.Trace, len(need))
	for i, q := range need {
		out[i] = all[q]
	}
	return out, nil
}

// ExampleBatches hands the example traces of the candidate with id to
// yield, in the order Examples returns them, in batches of at most the
// example cache's size in actions (a larger trace comes alone), each read
// through the cache once yield returned from the one before: a candidate
// with tens of thousands of examples is never decoded at once. It stops
// at yield's first error and returns it. It must be called after Mine.
func (s *Scan) ExampleBatches(ctx context.Context, id string, yield func(batch []*trace.Trace) error) error {
	if s.src == nil {
		return fmt.Errorf("examples of a scan that was not mined")
	}
	need, ok := s.examples[id]
	if !ok {
		return fmt.Errorf("candidate %s was not built by this scan", id)
	}
	return s.exampleBatches(ctx, need, yield)
}

// UnverifiedExampleBatches is ExampleBatches without the traces whose
// every example the sample check verified for shadow replay (Verified):
// what shadow replay needs to read when it is given Verified.
func (s *Scan) UnverifiedExampleBatches(ctx context.Context, id string, yield func(batch []*trace.Trace) error) error {
	if s.src == nil {
		return fmt.Errorf("examples of a scan that was not mined")
	}
	need, ok := s.examples[id]
	if !ok {
		return fmt.Errorf("candidate %s was not built by this scan", id)
	}
	if v, ok := s.verified[id]; ok {
		need = v.unverified()
	}
	return s.exampleBatches(ctx, need, yield)
}

// exampleBatches hands the traces at need to yield in batches of at most
// the example cache's size.
func (s *Scan) exampleBatches(ctx context.Context, need []int32, yield func(batch []*trace.Trace) error) error {
	budget := s.opts.exampleCache()
	for start := 0; start < len(need); {
		end, actions := start, 0
		for end < len(need) && (end == start || actions+len(s.seqs[need[end]]) <= budget) {
			actions += len(s.seqs[need[end]])
			end++
		}
		all, err := s.src.traces(ctx, need[start:end])
		if err != nil {
			return err
		}
		batch := make([]*trace.Trace, end-start)
		for i, q := range need[start:end] {
			batch[i] = all[q]
		}
		if err := yield(batch); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// traceSource gives the builder the traces of a batch's examples.
type traceSource interface {
	// traces returns a slice indexed by eligible index in which at least
	// the traces at need are set.
	traces(ctx context.Context, need []int32) ([]*trace.Trace, error)
	// windows returns the actions windows[i] of the trace at need[i], in
	// that order (trace.Trace.Window).
	windows(ctx context.Context, need []int32, windows []trace.Window) ([]*trace.Trace, error)
	// release lets go of the traces it keeps for reuse.
	release()
}

// memoryTraces is a traceSource over decoded traces.
type memoryTraces []*trace.Trace

func (m memoryTraces) traces(context.Context, []int32) ([]*trace.Trace, error) { return m, nil }

func (memoryTraces) release() {}

func (m memoryTraces) windows(_ context.Context, need []int32, windows []trace.Window) ([]*trace.Trace, error) {
	out := make([]*trace.Trace, len(need))
	for i, q := range need {
		out[i] = m[q].Window(windows[i])
	}
	return out, nil
}

// fetchedTraces is a traceSource that reads traces back through a Fetch
// and keeps them while the cache holds fewer than budget actions. When a
// batch needs more, every cached trace it does not need is let go first.
type fetchedTraces struct {
	fetch        Fetch
	fetchWindows FetchWindows // nil: windows are read whole and cut
	seqs         [][]int32
	cache        []*trace.Trace
	cached       []int32
	actions      int
	budget       int
}

func (f *fetchedTraces) traces(ctx context.Context, need []int32) ([]*trace.Trace, error) {
	need = slices.Clone(need)
	slices.Sort(need)
	need = slices.Compact(need)
	var missing []int32
	adding := 0
	for _, q := range need {
		if f.cache[q] == nil {
			missing = append(missing, q)
			adding += len(f.seqs[q])
		}
	}
	if len(missing) == 0 {
		return f.cache, nil
	}
	if f.actions+adding > f.budget {
		kept := f.cached[:0]
		f.actions = 0
		for _, q := range f.cached {
			if _, ok := slices.BinarySearch(need, q); ok {
				kept = append(kept, q)
				f.actions += len(f.seqs[q])
				continue
			}
			f.cache[q] = nil
		}
		f.cached = kept
	}
	got, err := f.fetch(ctx, missing)
	if err != nil {
		return nil, err
	}
	// The builder indexes a trace's actions by the positions the first
	// pass found, so a trace read back that is not the one scanned
	// (missing, or with another number of actions) must stop the run
	// here rather than index past its end.
	if len(got) != len(missing) {
		return nil, fmt.Errorf("read back %d traces, asked for %d", len(got), len(missing))
	}
	for i, q := range missing {
		if got[i] == nil || len(got[i].Actions) != len(f.seqs[q]) {
			n := -1
			if got[i] != nil {
				n = len(got[i].Actions)
			}
			return nil, fmt.Errorf("eligible trace %d read back with %d actions, scanned with %d: it changed between the passes", q, n, len(f.seqs[q]))
		}
	}
	for i, q := range missing {
		f.cache[q] = got[i]
	}
	f.cached = append(f.cached, missing...)
	slices.Sort(f.cached)
	f.actions += adding
	return f.cache, nil
}

func (f *fetchedTraces) release() {
	for _, q := range f.cached {
		f.cache[q] = nil
	}
	f.cached, f.actions = f.cached[:0], 0
}

// windows reads windows of traces back without keeping them: the examples
// that complete a candidate are each checked once. A trace the cache
// holds is cut from it instead.
func (f *fetchedTraces) windows(ctx context.Context, need []int32, windows []trace.Window) ([]*trace.Trace, error) {
	out := make([]*trace.Trace, len(need))
	var (
		read []int32
		at   []int
		wins []trace.Window
	)
	for i, q := range need {
		if w := windows[i]; w.Lo < 0 || w.Hi < w.Lo || w.Hi > len(f.seqs[q]) {
			return nil, fmt.Errorf("eligible trace %d has %d actions, asked for actions %d to %d", q, len(f.seqs[q]), w.Lo, w.Hi)
		}
		if t := f.cache[q]; t != nil {
			out[i] = t.Window(windows[i])
			continue
		}
		read, at, wins = append(read, q), append(at, i), append(wins, windows[i])
	}
	if len(read) == 0 {
		return out, nil
	}
	if f.fetchWindows == nil {
		all, err := f.traces(ctx, read)
		if err != nil {
			return nil, err
		}
		for k, i := range at {
			out[i] = all[read[k]].Window(wins[k])
		}
		return out, nil
	}
	got, err := f.fetchWindows(ctx, read, wins)
	if err != nil {
		return nil, err
	}
	if len(got) != len(read) {
		return nil, fmt.Errorf("read back %d windows, asked for %d", len(got), len(read))
	}
	for k, i := range at {
		if got[k] == nil || len(got[k].Actions) != wins[k].Hi-wins[k].Lo {
			return nil, fmt.Errorf("eligible trace %d read back without actions %d to %d: it changed between the passes", read[k], wins[k].Lo, wins[k].Hi)
		}
		out[i] = got[k]
	}
	return out, nil
}
