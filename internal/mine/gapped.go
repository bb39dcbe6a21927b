package mine

import (
	"context"
	"math"
	"slices"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// This file is the gapped miner: it finds procedures whose steps keep their
// order in every example but may have other actions between them, which is
// what agent sessions look like. It has three parts.
//
//  1. Preprocessing (prepare): observations are dropped from the sequence
//     and retried steps are folded into their successful attempt. Each item
//     remembers the index of the action it stands for, so examples report
//     positions in the original trace. O(n) for n actions.
//  2. Search (gapSearch): PrefixSpan pattern growth (Pei et al., 2001) with
//     a max-gap constraint, as in GSP (Srikant and Agrawal, 1996) and the
//     gap-constrained PrefixSpan variants. A pattern's pseudo-projection
//     keeps, per supporting trace, every position at which an embedding of
//     the pattern ends; its extensions are the items at most gap+1 items
//     after one of those ends, found in one scan of the union of those
//     windows, each cut short before the first action the gap rule
//     (candidate.MayInterleave, shared with shadow replay) keeps from
//     sitting between two steps, so that support counts only the
//     occurrences replay accepts. The search counts distinct traces, and keeps a pattern by
//     its distinct sessions, which are never more (support.go). A node costs
//     O(Σ_t min(len_t, ends_t·(gap+1))) over its supporting traces, and
//     the search visits at most Options.SearchBudget nodes, scans at most
//     gapWorkPerNode positions per node of budget and grows patterns to at
//     most gapMaxLength steps; the report says when a bound cut it. It
//     grows a pattern only by items associated with it (see associated),
//     which keeps common actions from combining into exponentially many
//     patterns. It keeps the patterns closed against extension at either
//     end (no one-item longer pattern with the same support made by
//     appending or prepending), the part of BIDE's closure check (Wang and
//     Han, 2004) that stays exact under a gap constraint; a pattern missing
//     a middle step is caught when candidates are selected (subsumed).
//  3. Selection (mineGapped): patterns are taken best first (Score), the
//     noise rule (denoise) drops the steps that sit where they do by
//     chance, a shortened pattern goes back into the queue at its new
//     rank, and the survivors are built into candidates.

// Miner modes, the values of Options.Mode.
const (
	ModeAuto   = "auto"
	ModeExact  = "exact"
	ModeGapped = "gapped"
)

// DefaultMaxGap is the most non-observation actions the gapped miner
// allows between two consecutive steps of a procedure when Options.MaxGap
// is zero. Agents rarely do more than a handful of unrelated things (an
// edit, a build, a check) between two steps of one procedure; a wider gap
// mostly joins steps of different procedures.
const DefaultMaxGap = 8

// DefaultSearchBudget is the number of patterns the gapped search may
// visit when Options.SearchBudget is zero.
const DefaultSearchBudget = 200_000

// Bounds of the gapped search, besides the node budget.
const (
	// gapMaxLength caps pattern length; a longer procedure is found as its
	// first gapMaxLength steps.
	gapMaxLength = 32
	// gapWorkPerNode bounds the projected-database positions scanned, as a
	// multiple of the node budget: a node whose projection is huge (a
	// common item after a common item) costs as much as many small ones.
	gapWorkPerNode = 2000
)

// Noise rule thresholds (see denoise).
const (
	// noiseCoverage is the share of the examples of a pattern without a
	// step in which the step must occur in its place, beyond chance, to
	// stay a step.
	noiseCoverage = 0.8
	// searchExcess is the least excess (beyond chance) with which an item
	// must follow a pattern for the search to grow the pattern by it. It
	// is low because a prefix may start several procedures.
	searchExcess = 0.1
	// noiseSample bounds the traces the noise rule embeds a pattern
	// without one of its steps in: rates and their significance are as
	// clear from a thousand traces, evenly spread, as from all of them,
	// and the rule runs once per step and round.
	noiseSample = 1000
	// noiseAlpha is the significance level at which an interior step's
	// occurrences between its neighbours must exceed its background rate.
	noiseAlpha = 0.001
	// variantExcess is the least share of the runs of a procedure in
	// which a step the noise rule dropped for coverage must follow it,
	// beyond chance, for the procedure with the step to be a variant of
	// its own (denoiseVariants): in half the runs, a person would name
	// it; in a few more than chance, it is an action that is common
	// after anything.
	variantExcess = 0.5
)

// gseq is one trace after preprocessing.
type gseq struct {
	items   []int32 // symbols of the kept actions, in order
	pos     []int32 // index in trace.Actions of each item's action
	retries []int32 // failed attempts folded into each item
	// byItem lists the item positions sorted by symbol, then position: the
	// occurrence index embed looks symbols up in.
	byItem []int32
	// stops marks, two bits per item, the actions the gap rule
	// (candidate.MayInterleave) keeps from sitting between two steps: bit
	// 2q+1 is item q itself, bit 2q an action prepare dropped (one the
	// retry rule folded, or an observation) between item q-1 and item q.
	// The gap between steps at items a < b is clean when bits 2a+2
	// through 2b are all clear. nil when the trace has no such action,
	// which is most traces' case for most of their length and costs
	// nothing to check.
	stops []uint64
}

func (s *gseq) stop(bit int32) bool {
	return s.stops[bit>>6]&(1<<(bit&63)) != 0
}

func (s *gseq) setStop(bit int) {
	if s.stops == nil {
		s.stops = make([]uint64, (2*len(s.items)+2+63)/64)
	}
	s.stops[bit>>6] |= 1 << (bit & 63)
}

// reach returns the last item q ≤ hi that a step at item e may be
// followed by under the gap rule: the items from e+1 to q, and the
// actions dropped before each, may all sit between two steps, q itself
// excepted. It is e when not even item e+1 may follow. Cost: O(hi − e).
func (s *gseq) reach(e, hi int32) int32 {
	if s.stops == nil {
		return hi
	}
	for q := e + 1; q <= hi; q++ {
		if s.stop(2 * q) {
			return q - 1
		}
		if s.stop(2*q + 1) {
			return q
		}
	}
	return hi
}

// index builds byItem.
func (s *gseq) index() {
	s.byItem = make([]int32, len(s.items))
	for q := range s.byItem {
		s.byItem[q] = int32(q)
	}
	slices.SortStableFunc(s.byItem, func(a, b int32) int { return int(s.items[a]) - int(s.items[b]) })
}

// prepared holds the preprocessed traces and the counts the noise rule
// and the report need.
type prepared struct {
	seqs         []gseq
	okBuf        [][]int32 // scratch for embed
	posBuf       []int32   // scratch for embed
	count        []int64   // occurrences of each symbol over all items
	traces       [][]int32 // traces containing each symbol, ascending
	totalItems   int64
	observations int
	retries      int
}

// prepare turns every trace into a gseq: observations are dropped (they
// neither count as steps nor as gap), and a retried action is folded into
// its successful attempt, by the retry rule mining shares with shadow
// replay (candidate.FoldRetries): a failed attempt followed by the success
// that retries it is one step, the success, which records how many
// attempts failed; the edits between them are the repair and are dropped
// too, since what they were depends on what broke. A failure that no
// success retries stays as it is: it may be a step.
func prepare(traces []*trace.Trace, symbols map[string]int32) *prepared {
	seqs := make([][]int32, len(traces))
	flags := make([][]uint8, len(traces))
	for i, t := range traces {
		seqs[i] = make([]int32, len(t.Actions))
		flags[i] = actionFlags(t)
		for j := range t.Actions {
			sig := t.Actions[j].Signature()
			id, ok := symbols[sig]
			if !ok {
				id = int32(len(symbols))
				symbols[sig] = id
			}
			seqs[i][j] = id
		}
	}
	return prepareSeqs(seqs, flags, len(symbols))
}

// What prepare needs to know of an action besides its symbol, one bit
// each: the first pass keeps these per action, so the gapped miner can
// search a corpus it does not hold.
const (
	flagObservation uint8 = 1 << iota
	flagFailed
	flagEdit
	// flagChanges: the action has side effects or is a person's
	// approval; flagNeedsPerson: it requires one. Both are for the gap
	// rule (candidate.MayInterleave).
	flagChanges
	flagNeedsPerson
)

// actionFlags returns the flags of each action of t.
func actionFlags(t *trace.Trace) []uint8 {
	out := make([]uint8, len(t.Actions))
	for j := range t.Actions {
		out[j] = flagsOf(decodedFacts(&t.Actions[j]))
	}
	return out
}

// prepareSeqs is prepare over symbol sequences and action flags, with
// nsym distinct symbols.
func prepareSeqs(seqs [][]int32, flags [][]uint8, nsym int) *prepared {
	p := &prepared{seqs: make([]gseq, len(seqs))}
	var (
		attempts []candidate.Attempt
		folds    []candidate.Fold
		retries  []int32
		scratch  []int32
	)
	for i, seq := range seqs {
		n := len(seq)
		attempts = slices.Grow(attempts[:0], n)[:n]
		folds = slices.Grow(folds[:0], n)[:n]
		retries = slices.Grow(retries[:0], n)[:n]
		for j, id := range seq {
			f := flags[i][j]
			attempts[j] = candidate.Attempt{Key: id, Observation: f&flagObservation != 0, Failed: f&flagFailed != 0, Edit: f&flagEdit != 0,
				Changes: f&flagChanges != 0, NeedsPerson: f&flagNeedsPerson != 0}
		}
		scratch = candidate.FoldRetries(attempts, folds, retries, scratch)
		kept := 0
		for _, f := range folds {
			switch f {
			case candidate.FoldStep:
				kept++
			case candidate.FoldObservation:
				p.observations++
			case candidate.FoldAttempt:
				p.retries++
			}
		}
		s := gseq{items: make([]int32, 0, kept), pos: make([]int32, 0, kept), retries: make([]int32, 0, kept)}
		for j, f := range folds {
			if f == candidate.FoldStep {
				s.items = append(s.items, seq[j])
				s.pos = append(s.pos, int32(j))
				s.retries = append(s.retries, retries[j])
			}
		}
		// The gap rule, once per action: matching then reads a bitmap.
		q := 0 // the next item
		for j, f := range folds {
			if !candidate.MayInterleave(attempts[j], f) {
				if f == candidate.FoldStep {
					s.setStop(2*q + 1)
				} else {
					s.setStop(2 * q)
				}
			}
			if f == candidate.FoldStep {
				q++
			}
		}
		s.index()
		p.seqs[i] = s
	}
	p.count = make([]int64, nsym)
	p.traces = make([][]int32, nsym)
	for i, s := range p.seqs {
		for _, y := range s.items {
			p.count[y]++
			if tr := p.traces[y]; len(tr) == 0 || tr[len(tr)-1] != int32(i) {
				p.traces[y] = append(tr, int32(i))
			}
		}
		p.totalItems += int64(len(s.items))
	}
	return p
}

// projection is the pseudo-projected database of a pattern: for each
// supporting trace seqs[i], the sorted positions ends[off[i]:off[i+1]] at
// which an embedding of the pattern ends. Keeping every end, not only the
// first, is what makes support exact under a gap constraint: the earliest
// end may be too far from the next step while a later one is not.
type projection struct {
	seqs []int32
	off  []int32
	ends []int32
}

func (p *projection) support() int { return len(p.seqs) }

// pattern is a closed pattern found by the search.
type pattern struct {
	syms []int32
	// support is the distinct sessions the pattern occurs in, which it
	// ranks by; traces is the distinct traces, which closure compares
	// (a pattern with a one-item extension in all its traces adds
	// nothing, whatever sessions they are).
	support int
	traces  int
	first   int32 // smallest supporting trace
	closed  bool
	// denoised is set once the noise rule has been applied; matches are
	// then the pattern's embeddings.
	denoised bool
	matches  []gmatch
	// variant is set for a longer form of a procedure the noise rule
	// shortened (denoiseVariants), which may have the symbols of a
	// pattern already taken from the queue.
	variant bool
	// notProcedure is set for a pattern that is not a procedure (see
	// shape.go), which ranks after every one that is.
	notProcedure bool
}

// gapSearch is the state of one gapped search.
type gapSearch struct {
	ctx       context.Context // checked every 1024 nodes
	cancelled bool

	seqs   []gseq
	minSup int
	// sessions counts a pattern's sessions; a pattern is kept when they
	// are at least minSessions (the search prunes by traces, which are
	// never fewer, so it loses nothing the sessions would keep).
	sessions    *sessionCounter
	minSessions int
	gap         int32
	frequent    []bool

	nodeBudget int
	workBudget int64
	nodes      int
	work       int64
	cutNodes   bool
	cutWork    bool
	cutLength  bool

	// count and total are the occurrences of each symbol and of all
	// items, for associated; a zero total turns the test off.
	count []int64
	total int64
	// spans counts the supporting traces of the node being extended by
	// the length of the window scanned after the pattern in them.
	spans    map[int32]int
	spanLens []int32 // the keys of spans, ascending

	// Scratch for extend, indexed by symbol; the counting pass of a node
	// finishes before any child is searched, so one set serves all depths.
	last    []int32
	cnt     []int32
	bucket  [][]int32 // pairs (trace, position)
	touched []int32

	out []pattern
}

// search runs the pattern growth from every frequent item, most frequent
// first, and returns the patterns closed against one-item extension at
// either end.
//
// When a bound cuts the search short, it searches again, in rounds of
// decreasing support: first only for patterns in at least half as many
// traces as the most frequent item, then a quarter, and so on down to
// minSup. Depth first, one search spends its budget in the first subtree
// it enters, whatever the support of what lies elsewhere: a long sequence
// told twice (a resumed session, a subagent replaying its parent) has
// 2^length subsequences, all in the same two traces, which a common first
// item leads into before the search ever reaches a three-step procedure
// found in every session. By rounds, what the budget cuts is the less
// frequent part. Each round repeats the search of the rounds before it,
// which costs, so rounds are only for a search that half the budget cut;
// they have the other half. A pattern is kept once, from the first round
// that finds it, and its closedness is exact in that round, since an
// extension with the same support is frequent there too.
func (g *gapSearch) search(roots []int32, proj []*projection) []pattern {
	minSup := g.minSup
	nodeBudget, workBudget := g.nodeBudget, g.workBudget
	g.nodeBudget, g.workBudget = max(1, nodeBudget/2), max(1, workBudget/2)
	g.rounds(roots, proj, []int{minSup})
	if (g.cutNodes || g.cutWork) && !g.cancelled {
		maxSup := minSup
		for _, p := range proj {
			maxSup = max(maxSup, p.support())
		}
		var rounds []int
		for k := maxSup / 2; k > minSup; k /= 2 {
			rounds = append(rounds, k)
		}
		rounds = append(rounds, minSup)
		g.out, g.cutNodes, g.cutWork = g.out[:0], false, false
		g.nodeBudget, g.workBudget = nodeBudget, workBudget
		g.rounds(roots, proj, rounds)
	}
	g.nodeBudget, g.workBudget = nodeBudget, workBudget
	g.minSup = minSup
	// A pattern found in several rounds is kept from the first.
	index := make(map[string]int, len(g.out))
	out := g.out[:0]
	for _, p := range g.out {
		key := symKey(p.syms)
		if _, dup := index[key]; !dup {
			index[key] = len(out)
			out = append(out, p)
		}
	}
	g.out = out
	// Backward closure: x·S with the same support as S closes S. (Forward
	// closure was decided during the search.)
	for _, p := range g.out {
		if len(p.syms) < 3 {
			continue
		}
		if j, ok := index[symKey(p.syms[1:])]; ok && g.out[j].traces == p.traces {
			g.out[j].closed = false
		}
	}
	var closed []pattern
	for _, p := range g.out {
		if p.closed {
			closed = append(closed, p)
		}
	}
	return closed
}

// rounds grows the patterns from every root, once per minimum support in
// supports, each round over the roots that occur in that many traces.
func (g *gapSearch) rounds(roots []int32, proj []*projection, supports []int) {
	for _, k := range supports {
		g.minSup = k
		for i, y := range roots {
			if g.stopped() || proj[i].support() < k {
				break
			}
			g.nodes++
			g.grow([]int32{y}, proj[i])
		}
	}
}

func (g *gapSearch) stopped() bool {
	if g.nodes&1023 == 0 && g.ctx != nil && g.ctx.Err() != nil {
		g.cancelled = true
	}
	return g.cutNodes || g.cutWork || g.cancelled
}

// grow extends syms, whose projection is proj, depth first. Children are
// visited by support, descending, so that when a budget cuts the search,
// what is lost is the less frequent part.
func (g *gapSearch) grow(syms []int32, proj *projection) {
	var kids []int32
	var kidProj []*projection
	if len(syms) >= gapMaxLength {
		g.cutLength = true
	} else {
		kids, kidProj = g.extend(proj)
	}
	sameSupport := false
	for _, kp := range kidProj {
		if kp.support() == proj.support() {
			sameSupport = true
		}
	}
	if len(syms) >= 2 {
		if sup := g.sessions.count(proj.seqs); sup >= g.minSessions {
			g.out = append(g.out, pattern{syms: slices.Clone(syms), support: sup, traces: proj.support(), first: proj.seqs[0], closed: !sameSupport})
		}
	}
	for i, y := range kids {
		if g.nodes >= g.nodeBudget {
			g.cutNodes = true
		}
		if g.stopped() {
			return
		}
		g.nodes++
		g.grow(append(syms, y), kidProj[i])
		kidProj[i] = nil
	}
}

// extend scans, in every supporting trace, the union of the windows of
// gap+1 items after each end of proj, once per position, and returns the
// frequent items found there with their projections, by support
// descending then symbol. Its cost is the number of positions scanned, at
// most min(len(trace), ends×(gap+1)) per trace.
func (g *gapSearch) extend(proj *projection) ([]int32, []*projection) {
	g.touched = g.touched[:0]
	clear(g.spans)
	window := int64(0)
	for i, s := range proj.seqs {
		items := g.seqs[s].items
		next := int32(0)
		span := int32(0)
		for _, e := range proj.ends[proj.off[i]:proj.off[i+1]] {
			lo := max(e+1, next)
			hi := g.seqs[s].reach(e, min(e+1+g.gap, int32(len(items))-1))
			for q := lo; q <= hi; q++ {
				y := items[q]
				if !g.frequent[y] {
					continue
				}
				if len(g.bucket[y]) == 0 {
					g.touched = append(g.touched, y)
					g.last[y] = -1
				}
				if g.last[y] != s {
					g.last[y] = s
					g.cnt[y]++
				}
				g.bucket[y] = append(g.bucket[y], s, q)
			}
			if hi+1 > next {
				g.work += int64(hi + 1 - lo)
				span += hi + 1 - lo
				next = hi + 1
			}
		}
		g.spans[span]++
		window += int64(span)
	}
	if g.work > g.workBudget {
		g.cutWork = true
	}
	// Summed in a fixed order, so that the same input gives the same
	// floating-point result and the same decisions.
	g.spanLens = g.spanLens[:0]
	for l := range g.spans {
		g.spanLens = append(g.spanLens, l)
	}
	slices.Sort(g.spanLens)
	var kids []int32
	for _, y := range g.touched {
		if int(g.cnt[y]) >= g.minSup && g.associated(y, int(g.cnt[y]), proj.support(), window) {
			kids = append(kids, y)
		}
	}
	slices.SortFunc(kids, func(a, b int32) int {
		if c := cmpDesc(int64(g.cnt[a]), int64(g.cnt[b])); c != 0 {
			return c
		}
		return int(a) - int(b)
	})
	projs := make([]*projection, len(kids))
	for i, y := range kids {
		projs[i] = pairsProjection(g.bucket[y])
	}
	for _, y := range g.touched {
		g.bucket[y] = g.bucket[y][:0]
		g.cnt[y] = 0
	}
	return kids, projs
}

// associated reports whether item y, found after the pattern in m of its
// n traces, follows it more often than y's background rate predicts. In
// trace t the pattern is followed by a window of L_t items (the union of
// the gap+1 items after each end). The background rate f of y is its rate
// outside those windows; y lands in a window by chance with probability
// 1 − (1 − f)^L_t, whose mean over the traces is p. y is associated when
// m/n ≥ 2p (the pattern at least doubles the odds of y) or when m/n is
// significantly above p (the Chernoff bound of the noise rule, at its
// level).
//
// The search grows a pattern only by associated items. An item that just
// happens to be common (an edit, a build, a test run, anywhere in a
// session) would otherwise combine with everything: in a corpus of
// sessions the patterns made only of such items are exponentially many and
// would take the whole budget. A procedure loses nothing it needs: an
// unassociated item between two steps is skipped by the gap, and the noise
// rule would drop it from the pattern anyway.
func (g *gapSearch) associated(y int32, m, n int, window int64) bool {
	rest := g.total - window
	if g.total == 0 || rest <= 0 {
		return true
	}
	inside := int64(len(g.bucket[y]) / 2)
	f := float64(max(g.count[y]-inside, 0)) / float64(rest)
	p := 0.0
	for _, l := range g.spanLens {
		p += float64(g.spans[l]) * (1 - math.Pow(1-f, float64(l)))
	}
	p /= float64(n)
	r := float64(m) / float64(n)
	return excess(r, p) >= searchExcess && chernoff(r, p, float64(n)) <= noiseAlpha
}

// pairsProjection builds a projection from (trace, position) pairs sorted
// by trace, then position.
func pairsProjection(pairs []int32) *projection {
	p := &projection{ends: make([]int32, 0, len(pairs)/2)}
	for k := 0; k < len(pairs); k += 2 {
		s, q := pairs[k], pairs[k+1]
		if len(p.seqs) == 0 || p.seqs[len(p.seqs)-1] != s {
			p.seqs = append(p.seqs, s)
			p.off = append(p.off, int32(len(p.ends)))
		}
		p.ends = append(p.ends, q)
	}
	p.off = append(p.off, int32(len(p.ends)))
	return p
}

// rootProjections returns the items that occur in at least minSup traces,
// by support descending then symbol, with projections holding every
// position of each.
func (g *gapSearch) rootProjections(traces [][]int32) ([]int32, []*projection) {
	nsym := len(traces)
	g.frequent = make([]bool, nsym)
	var roots []int32
	for y := range nsym {
		if len(traces[y]) >= g.minSup {
			g.frequent[y] = true
			roots = append(roots, int32(y))
		}
	}
	slices.SortFunc(roots, func(a, b int32) int {
		if c := cmpDesc(int64(len(traces[a])), int64(len(traces[b]))); c != 0 {
			return c
		}
		return int(a) - int(b)
	})
	pairs := make([][]int32, nsym)
	for s, sq := range g.seqs {
		for q, y := range sq.items {
			if g.frequent[y] {
				pairs[y] = append(pairs[y], int32(s), int32(q))
			}
		}
	}
	projs := make([]*projection, len(roots))
	for i, y := range roots {
		projs[i] = pairsProjection(pairs[y])
		pairs[y] = nil
	}
	return roots, projs
}

func symKey(syms []int32) string {
	b := make([]byte, 0, 4*len(syms))
	for _, s := range syms {
		b = append(b, byte(s), byte(s>>8), byte(s>>16), byte(s>>24))
	}
	return string(b)
}

// comparePatterns orders patterns like Repeats orders repeats, after the
// procedures first (see shape.go): Score, support and length descending,
// then the first supporting trace and the symbols ascending. It is a
// total order on distinct symbol sequences, so selection does not depend
// on the order patterns were found in.
func comparePatterns(a, b pattern) int {
	if a.notProcedure != b.notProcedure {
		if a.notProcedure {
			return 1
		}
		return -1
	}
	if c := cmpDesc(Score(a.support, len(a.syms)), Score(b.support, len(b.syms))); c != 0 {
		return c
	}
	if c := cmpDesc(int64(a.support), int64(b.support)); c != 0 {
		return c
	}
	// The same score and support is the same length (Score is
	// support² × length).
	if a.first != b.first {
		return int(a.first) - int(b.first)
	}
	return slices.Compare(a.syms, b.syms)
}

// gmatch is one trace's leftmost-earliest embedding of a pattern: at[k] is
// the item index (in the gseq) of step k.
type gmatch struct {
	seq int32
	at  []int32
}

// occurrences returns the positions of symbol y in trace s, ascending,
// from the trace's occurrence index (positions sorted by symbol, then
// position). The slice must not be modified.
func (p *prepared) occurrences(s, y int32) []int32 {
	items, idx := p.seqs[s].items, p.seqs[s].byItem
	lo, _ := slices.BinarySearchFunc(idx, y, func(q, y int32) int { return int(items[q]) - int(y) })
	hi := lo
	for hi < len(idx) && items[idx[hi]] == y {
		hi++
	}
	return idx[lo:hi]
}

// matchAll embeds syms in every trace that contains all its symbols and
// returns the embeddings, by trace. wide, when positive, is the step whose
// gap from the step before it may be 2·gap+1 rather than gap. sample, when
// positive, limits the traces tried to that many, evenly spread over
// those that contain every symbol.
func (p *prepared) matchAll(syms []int32, gap int32, wide, sample int) []gmatch {
	if len(syms) == 0 {
		return nil
	}
	// Candidate traces: the intersection of the symbols' trace lists,
	// starting from the shortest.
	lists := make([][]int32, 0, len(syms))
	for _, y := range syms {
		lists = append(lists, p.traces[y])
	}
	slices.SortFunc(lists, func(a, b []int32) int { return len(a) - len(b) })
	cand := slices.Clone(lists[0])
	for _, l := range lists[1:] {
		cand = intersect(cand, l)
	}
	return p.matchIn(syms, gap, wide, spread(cand, sample))
}

// spread returns at most sample of seqs, evenly spread, the first
// included; all of them when sample is not positive.
func spread(seqs []int32, sample int) []int32 {
	if sample <= 0 || len(seqs) <= sample {
		return seqs
	}
	picked := make([]int32, sample)
	for i := range picked {
		picked[i] = seqs[i*len(seqs)/sample]
	}
	return picked
}

// matchIn is matchAll over the traces cand only.
func (p *prepared) matchIn(syms []int32, gap int32, wide int, cand []int32) []gmatch {
	var out []gmatch
	for _, s := range cand {
		if at := p.embed(s, syms, gap, wide); at != nil {
			out = append(out, gmatch{seq: s, at: at})
		}
	}
	return out
}

func intersect(a, b []int32) []int32 {
	out := a[:0]
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			out = append(out, x)
		}
	}
	return out
}

// embed returns the leftmost-earliest embedding of syms in trace s with at
// most gap items between consecutive steps, each of which, and each action
// dropped between them, the gap rule (candidate.MayInterleave) lets sit
// there: the lexicographically smallest such vector of positions, or nil.
// So a trace whose first occurrence has, say, a commit between two steps
// is matched at a later occurrence without one, and a trace with no such
// occurrence does not support the pattern: shadow replay would refuse it. A backward pass keeps, for each step, the
// positions from which the rest of the pattern can still be matched; a
// forward pass then takes the earliest feasible position at each step.
// Cost: O(len(syms)·(log len(items) + occurrences)), with the trace's
// occurrence index, and O(gap) per feasible position in a trace with a
// stop (see gseq.stops). Step wide, when positive, may be up to 2·gap+1
// items after the step before it, and the gap rule does not apply to that
// gap: it is the noise rule's pattern without a step, matched where the
// pattern with the step occurs, and the missing step, an action that may
// change something, sits in it.
func (p *prepared) embed(s int32, syms []int32, gap int32, wide int) []int32 {
	n := len(syms)
	limit := func(k int) int32 { // the gap before step k
		if k == wide {
			return 2*gap + 1
		}
		return gap
	}
	// ok[k] starts as the occurrences of step k's symbol (views into the
	// index) and is narrowed, into the scratch buffer, to the feasible
	// ones. The last step needs no narrowing.
	ok := p.okBuf[:0]
	for _, y := range syms {
		occ := p.occurrences(s, y)
		if len(occ) == 0 {
			p.okBuf = ok
			return nil
		}
		ok = append(ok, occ)
	}
	p.okBuf = ok
	seq := &p.seqs[s]
	buf := p.posBuf[:0]
	for k := n - 2; k >= 0; k-- {
		next := ok[k+1]
		g := limit(k + 1)
		start := len(buf)
		j := 0
		for _, p := range ok[k] {
			for j < len(next) && next[j] <= p {
				j++
			}
			// The earliest feasible next step is the one to take: the
			// gap rule holds for it if it holds for any later one.
			if j < len(next) && next[j] <= p+g+1 && (k+1 == wide || seq.reach(p, next[j]) == next[j]) {
				buf = append(buf, p)
			}
		}
		ok[k] = buf[start:len(buf):len(buf)]
		if len(ok[k]) == 0 {
			p.posBuf = buf
			return nil
		}
	}
	p.posBuf = buf
	if len(ok[0]) == 0 {
		return nil
	}
	return forward(ok, ok[0][0])
}

// forward is embed's forward pass from the feasible first position
// first: the earliest feasible position of each later step.
func forward(ok [][]int32, first int32) []int32 {
	at := make([]int32, len(ok))
	at[0] = first
	for k := 1; k < len(ok); k++ {
		i, _ := slices.BinarySearch(ok[k], at[k-1]+1)
		// Feasibility of at[k-1] guarantees a position within the gap.
		at[k] = ok[k][i]
	}
	return at
}

// embedAll returns the embeddings of syms in trace s that do not overlap,
// taken greedily from the left: embed's, then the leftmost-earliest one
// that starts after it ends, and so on. A session does a procedure more
// than once (it commits, and commits again, and pushes only the second
// time), and the noise rule must look at every time, not the first only.
func (p *prepared) embedAll(s int32, syms []int32, gap int32, wide int) [][]int32 {
	first := p.embed(s, syms, gap, wide)
	if first == nil {
		return nil
	}
	// embed leaves the feasible positions of each step in p.okBuf.
	ok := p.okBuf[:len(syms)]
	out := [][]int32{first}
	for {
		last := out[len(out)-1]
		i, _ := slices.BinarySearch(ok[0], last[len(last)-1]+1)
		if i == len(ok[0]) {
			return out
		}
		out = append(out, forward(ok, ok[0][i]))
	}
}

// denoise applies the noise rule to a pattern and returns what is left of
// it, its embeddings, and how many steps it dropped.
//
// The rule, for a step x of pattern P: let Q be P without x, matched with
// the two gaps around x merged into one of up to 2·gap+1 items (so Q
// occurs wherever P does), n the number of traces Q occurs in (at most
// noiseSample of them, evenly spread), and m the number of those in which
// x occurs in its place: between the embedded neighbours of x, or within
// gap+1 items before Q's first or after its last step when x is at an
// end. The background rate f of x is its rate among the items that are
// neither in those regions nor Q's own steps; in example e, whose region
// has L_e items, x lands there by chance with probability
// p_e = 1 − (1 − f)^L_e, and p̄ is the mean of the p_e. x stays a step only
// if both hold:
//
//   - it is there beyond chance in at least 80 % of the runs:
//     (m/n − p̄)/(1 − p̄) ≥ 0.8. A step missing from more than a fifth of
//     the runs of the rest of the procedure is not part of it, and an
//     action common enough to be in most gaps anyway needs to be in nearly
//     all of them;
//   - m/n is significantly above p̄: the Chernoff bound
//     exp(−n·KL(m/n ‖ p̄)) on P(X ≥ m) is at most 0.001, a strict level
//     because many patterns are tested.
//
// So a common action (a build, an edit) that sits between two steps in
// most runs only because it is common is not a step, while a rare action
// that does so is; closedness alone would keep the first whenever it
// happened to be present in every example. At the ends the region is the
// whole gap+1 window, so an end step that is also common elsewhere needs
// more examples to show that it belongs than an interior one, which is
// measured against the actual gap between its neighbours.
//
// The step that fails worst is dropped and the test is repeated on the
// shorter pattern until every step passes: dropping one noise step can
// change the gaps the others are measured in. Each round costs one
// embedding pass per step over at most noiseSample traces; a pattern of L
// steps costs at most L rounds.
func (p *prepared) denoise(syms []int32, gap int32) ([]int32, []gmatch, int) {
	kept, matches, dropped, _ := p.denoiseVariants(syms, gap, false)
	return kept, matches, dropped
}

// variant is a longer form of a procedure the noise rule shortened: the
// procedure with a step the rule dropped for coverage, which holds within
// the traces the longer form occurs in (see denoiseVariants).
type variant struct {
	syms    []int32
	matches []gmatch
}

// denoiseVariants is denoise, and with variants set it also returns the
// longer variants of what it keeps. A step the rule drops for coverage
// (it is in its place, beyond chance, in under 80 % of the runs of the
// rest) may still be a step of a longer procedure that people do in
// fewer runs: git push follows git add and git commit in some runs only,
// so it is not part of add and commit, yet add, commit and push is a
// procedure of its own where it is done. Such a variant is what the rule
// kept with that one step put back in its place, when, over the runs of
// what the rule kept, the step is in its place beyond chance in at least
// half of them (variantExcess) and significantly (the rule's own
// Chernoff bound). Both matter: an action common everywhere, an edit or
// a test run, lands after a procedure in many runs by chance, and in
// thousands of sessions a small excess is significant. The other steps
// are the procedure's, which the rule kept. A step dropped for
// significance makes no variant, nor does a drop that leaves fewer than
// two steps (there is then no procedure to vary). Whether a variant
// occurs in enough sessions to be a candidate is the caller's to decide.
func (p *prepared) denoiseVariants(syms []int32, gap int32, variants bool) ([]int32, []gmatch, int, []variant) {
	orig := syms
	syms = slices.Clone(syms)
	// at[i] is the position in orig of step i of syms, and covered the
	// positions in orig of the steps dropped for coverage.
	at := make([]int, len(syms))
	for i := range at {
		at[i] = i
	}
	var covered []int
	dropped := 0
	for {
		base := p.matchAll(syms, gap, -1, 0)
		if len(syms) < 2 {
			return syms, base, dropped, nil
		}
		worst, worstScore := -1, 0.0
		passed := 0
		var worstQM []gmatch
		for k := range syms {
			q := slices.Delete(slices.Clone(syms), k, k+1)
			// Without x its two gaps become one, of up to 2·gap+1
			// items, so Q is matched with that gap there: then Q occurs
			// wherever P does.
			wide := -1
			if k > 0 && k < len(syms)-1 {
				wide = k
			}
			qm := p.matchAll(q, gap, wide, noiseSample)
			s := p.noiseScore(syms[k], k, q, qm, gap)
			if s == 0 {
				passed++
			}
			if s > worstScore {
				worst, worstScore, worstQM = k, s, qm
			}
		}
		if worst >= 0 && len(syms) == 2 && passed == 1 && worstScore > 1 && p.anchors(syms, worst, worstQM, gap) {
			// The pair is a procedure anchored at the step that failed
			// (see anchors): kept whole.
			worst = -1
		}
		if worst < 0 {
			if !variants || len(covered) == 0 {
				return syms, base, dropped, nil
			}
			return syms, base, dropped, p.variants(orig, at, covered, gap)
		}
		// A coverage failure scores above 1 (noiseScore).
		if worstScore > 1 {
			covered = append(covered, at[worst])
		}
		syms = slices.Delete(syms, worst, worst+1)
		at = slices.Delete(at, worst, worst+1)
		dropped++
	}
}

// anchors reports whether a pair of steps, whose step k failed the noise
// rule for coverage and whose other step passed it, is a procedure
// anchored at step k: done in some runs of the other step only (a commit
// with a message follows git add in some sessions; in others the commit
// takes a message file, or waits), yet, where step k is done, the other
// step is in its place beyond chance in four runs in five, significantly:
// which is what the other step passing measured. That association is the
// evidence that the pair is no accident; step k need then only follow the
// other step beyond chance at all, by the least excess the search grows a
// pattern with. Without this rule a pair never survives a step people do
// in fewer than four runs in five of the other, as dropping it leaves a
// single step, which is no procedure and makes no variant. qm are the
// embeddings of the other step alone.
func (p *prepared) anchors(syms []int32, k int, qm []gmatch, gap int32) bool {
	if len(qm) == 0 {
		return false
	}
	q := slices.Delete(slices.Clone(syms), k, k+1)
	cover, pbar := p.noiseRates(syms[k], k, q, qm, gap)
	return excess(cover, pbar) >= searchExcess
}

// variants returns the variants of the procedure made of the steps at
// positions kept of pattern orig: for each position in covered, a step
// the noise rule dropped for coverage, the procedure with that step,
// when the step holds (denoiseVariants), with its embeddings.
func (p *prepared) variants(orig []int32, kept, covered []int, gap int32) []variant {
	var out []variant
	for _, c := range covered {
		pos := slices.Clone(kept)
		k, _ := slices.BinarySearch(pos, c)
		pos = slices.Insert(pos, k, c)
		syms := make([]int32, len(pos))
		for i, j := range pos {
			syms[i] = orig[j]
		}
		q := slices.Delete(slices.Clone(syms), k, k+1)
		wide := -1
		if k > 0 && k < len(syms)-1 {
			wide = k
		}
		qm := p.matchAll(q, gap, wide, noiseSample)
		if len(qm) == 0 {
			continue
		}
		cover, pbar := p.noiseRates(syms[k], k, q, qm, gap)
		if excess(cover, pbar) < variantExcess || chernoff(cover, pbar, float64(len(qm))) > noiseAlpha {
			continue
		}
		if own := p.matchAll(syms, gap, -1, 0); len(own) > 0 {
			out = append(out, variant{syms: syms, matches: own})
		}
	}
	return out
}

// noiseScore tests step k of a pattern, whose symbol is x, against the
// embeddings qm of the pattern without it, q. It returns 0 when x
// passes the noise rule, and otherwise a score that is larger the worse it
// fails: 1 + the missing share for a coverage failure, the p-value bound
// for a significance failure.
//
// The regions are read off Q's embeddings, never P's: P's embedding is
// chosen to contain x, so its gaps would be stretched around x and every
// one of them would count, which biases the test towards keeping x.
func (p *prepared) noiseScore(x int32, k int, q []int32, qm []gmatch, gap int32) float64 {
	cover, pbar := p.noiseRates(x, k, q, qm, gap)
	if ex := excess(cover, pbar); ex < noiseCoverage {
		return 1 + (1 - ex)
	}
	if pv := chernoff(cover, pbar, float64(len(qm))); pv > noiseAlpha {
		return pv
	}
	return 0
}

// noiseRates returns what the noise rule compares for step k of a
// pattern, whose symbol is x, over the embeddings qm of the pattern
// without it, q: the share of them with x in its place, and the mean
// chance of that (see denoise).
func (p *prepared) noiseRates(x int32, k int, q []int32, qm []gmatch, gap int32) (cover, pbar float64) {
	n := len(q) + 1
	m := 0
	var inGap, gapLen int64
	lens := make([]int64, len(qm))
	wide := -1
	if k > 0 && k < n-1 {
		wide = k
	}
	for e, g := range qm {
		items := p.seqs[g.seq].items
		// Each time the trace does Q there is a region where x would
		// be: x is in its place when it is in one of them, and its
		// chance of that grows with their total length. Regions are
		// taken in order and never counted twice.
		found := false
		next := int32(0)
		for _, at := range p.embedAll(g.seq, q, gap, wide) {
			var lo, hi int32 // the region [lo, hi)
			switch {
			case k == 0:
				hi = at[0]
				lo = max(0, hi-gap-1)
			case k == n-1:
				lo = at[len(at)-1] + 1
				hi = min(int32(len(items)), lo+gap+1)
			default:
				lo, hi = at[k-1]+1, at[k]
			}
			lo = max(lo, next)
			for q := lo; q < hi; q++ {
				if items[q] == x {
					found = true
					inGap++
				}
			}
			if hi > lo {
				lens[e] += int64(hi - lo)
				next = hi
			}
		}
		if found {
			m++
		}
		gapLen += lens[e]
	}
	nq := float64(len(qm))
	cover = float64(m) / nq
	// The background is every item that is neither in a region nor one
	// of Q's matched steps: the procedure's own steps are not places where
	// noise could have been.
	var xInQ int64
	for _, y := range q {
		if y == x {
			xInQ += int64(len(qm))
		}
	}
	f := 0.0
	if rest := p.totalItems - gapLen - int64(len(q)*len(qm)); rest > 0 {
		f = min(1, float64(max(p.count[x]-inGap-xInQ, 0))/float64(rest))
	}
	for _, l := range lens {
		pbar += 1 - math.Pow(1-f, float64(l))
	}
	pbar /= nq
	return cover, pbar
}

// excess is the share of the runs in which x is present beyond chance,
// (r − p)/(1 − p), for r the share present and p the chance of being
// present; r itself when p is 0. It is an effect size, which a
// significance test alone lacks: in thousands of sessions a tiny excess
// is significant.
func excess(r, p float64) float64 {
	if p >= 1 {
		return 0
	}
	return (r - p) / (1 - p)
}

// chernoff bounds P(X ≥ r·n) for X the number of successes of n
// independent trials with mean success probability p: exp(−n·KL(r ‖ p)),
// or 1 when r ≤ p. (For a sum of Bernoulli trials with unequal
// probabilities the same bound holds with p their mean.)
func chernoff(r, p, n float64) float64 {
	if r <= p {
		return 1
	}
	if p <= 0 {
		return 0
	}
	kl := 0.0
	if r > 0 {
		kl += r * math.Log(r/p)
	}
	if r < 1 {
		kl += (1 - r) * math.Log((1-r)/(1-p))
	}
	return math.Exp(-n * kl)
}

// isSubsequence reports whether needle occurs in hay in order, not
// necessarily contiguously.
func isSubsequence(hay, needle []int32) bool {
	j := 0
	for _, y := range hay {
		if j < len(needle) && y == needle[j] {
			j++
		}
	}
	return j == len(needle)
}
