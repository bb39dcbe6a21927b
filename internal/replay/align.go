package replay

import (
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Alignment of a candidate with a trace.
//
// The candidate is a sequence of step signatures s_1..s_m, the trace a
// sequence of action signatures a_1..a_n. An alignment pairs them as
// process-mining conformance checking does: a synchronous move consumes a
// step and an action with the same signature, a log move an action the
// candidate lacks, a model move a step the trace lacks. There is no
// substitution move: an action with another signature is a different step,
// not a variant of this one.
//
// The procedure occupies a contiguous region of a longer trace, so the
// alignment is local: the trace's prefix and suffix outside the region are
// free, and the region is the one whose alignment costs least, log and
// model moves costing 1 and synchronous moves 0. Among regions of equal
// cost, the one with more synchronous moves wins (A X B aligns A B better
// than A alone, though both cost 1), then the one that ends first. This is
// the edit distance of the candidate against the best-matching substring,
// computed by a dynamic program in O(m·n) time: row 0 of the table is zero
// in every column (the region may start anywhere) and the answer is the
// minimum over the last row (it may end anywhere). Cost and synchronous
// count are folded into one integer, cost·(m+1) − sync, so that one
// comparison per cell orders both.
//
// Fitness is 1 − (log + model moves) / (m + L), where L is the number of
// trace actions in the region (sync + log moves): the share of steps and
// region actions that were paired, 2·sync / (m + L). It is 1 exactly when
// the region is the candidate's sequence, and 0 when nothing is paired.
//
// A candidate mined with gaps (its steps matched with other actions
// between them) is aligned the way it was mined, by the retry rule
// (candidate.FoldRetries) and the gap rule (candidate.MayInterleave)
// mining applied. Inside the region, an action the miner lets sit
// between steps is interleaved: it costs nothing, is left out of the
// moves and of fitness, and is only counted. Interleaved are
// observations, failed attempts a later success retried (which also
// cannot pair with a step: a retried step pairs with its successful
// attempt), the file edits between such an attempt and its success (the
// repair of a retry), failures, and actions with neither side effects nor
// a required approval. A failure that no success retried may pair with a
// step, as mining may have matched it; it passes only if the step failed
// in an example too (Step.Failures). An action that changes something or
// needs a person is never interleaved: the workflow would not do it, so
// it stays a log move and fails the comparison, as it does for a
// contiguous candidate.

// sigIndex maps trace actions to the candidate's signature ids without
// building a signature string per action: it finds the entries for the
// action's name with one map lookup, then checks kind and parameter keys
// in place. Traces are mostly actions the candidate does not have, and
// Action.Signature (a sort, a join and an allocation) would cost more than
// the whole alignment.
type sigIndex struct {
	cand   []int32  // candidate step (0-based) → signature id
	sigs   []string // signature id → signature
	byName map[string][]sigEntry
	// slow holds signatures that do not read as their step's kind and name
	// followed by parameter keys (a candidate whose Steps and
	// SequenceSignature disagree). When it is not empty, every action's
	// full signature is computed and looked up here as well.
	slow map[string]int32
}

type sigEntry struct {
	kind trace.Kind
	keys string // comma-joined sorted parameter keys
	id   int32
}

func newSigIndex(c *candidate.Candidate) *sigIndex {
	ix := &sigIndex{byName: map[string][]sigEntry{}}
	ids := map[string]int32{}
	for i, sig := range c.SequenceSignature {
		id, ok := ids[sig]
		if !ok {
			id = int32(len(ix.sigs))
			ids[sig] = id
			ix.sigs = append(ix.sigs, sig)
			var prefix string
			if i < len(c.Steps) {
				prefix = string(c.Steps[i].Kind) + ":" + c.Steps[i].Name + ":"
			}
			if prefix != "" && strings.HasPrefix(sig, prefix) {
				name := c.Steps[i].Name
				ix.byName[name] = append(ix.byName[name], sigEntry{kind: c.Steps[i].Kind, keys: sig[len(prefix):], id: id})
			} else {
				if ix.slow == nil {
					ix.slow = map[string]int32{}
				}
				ix.slow[sig] = id
			}
		}
		ix.cand = append(ix.cand, id)
	}
	return ix
}

// lookup returns the signature id of a, or -1 when the candidate has no
// step with a's signature. keys is scratch space, returned for reuse.
func (ix *sigIndex) lookup(a *trace.Action, keys []string) (int32, []string) {
	if entries := ix.byName[a.Name]; len(entries) > 0 {
		sorted := false
		for _, e := range entries {
			if e.kind != a.Kind {
				continue
			}
			if !sorted {
				keys = keys[:0]
				for k := range a.Parameters {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				sorted = true
			}
			if joinedEqual(keys, e.keys) {
				return e.id, keys
			}
		}
	}
	if ix.slow != nil {
		if id, ok := ix.slow[a.Signature()]; ok {
			return id, keys
		}
	}
	return -1, keys
}

// joinedEqual reports whether strings.Join(keys, ",") == s, without
// building the joined string.
func joinedEqual(keys []string, s string) bool {
	n := len(keys) - 1
	if n < 0 {
		return s == ""
	}
	for _, k := range keys {
		n += len(k)
	}
	if n != len(s) {
		return false
	}
	pos := 0
	for i, k := range keys {
		if i > 0 {
			if s[pos] != ',' {
				return false
			}
			pos++
		}
		if s[pos:pos+len(k)] != k {
			return false
		}
		pos += len(k)
	}
	return true
}

// move directions recorded by the dynamic program for the traceback.
const (
	dirSync uint8 = iota + 1
	dirModel
	dirLog
)

// alignment is the best local alignment of a candidate with a trace.
type alignment struct {
	moves            []candidate.Move
	sync, log, model int
	// interleaved counts the tolerated actions inside the region (gapped
	// candidates only); they are not moves.
	interleaved int
}

// fitness is 1 − (log + model) / (m + L); see the comment at the top of
// this file. A candidate without steps fits only an empty region.
func (al *alignment) fitness(m int) float64 {
	den := m + al.sync + al.log
	if den == 0 {
		return 1
	}
	return 1 - float64(al.log+al.model)/float64(den)
}

// aligner holds one worker's scratch space, reused across traces so that
// aligning a trace allocates only its result.
type aligner struct {
	ix     *sigIndex
	gapped bool
	ids    []int32 // signature id of each trace action
	// tol[j] is true when action j may sit between steps of a gapped
	// candidate; nil for a contiguous one.
	tol   []bool
	keys  []string
	prev  []int
	cur   []int
	dir   []uint8 // (n+1)·(m+1) traceback directions, column-major by action
	moves []candidate.Move
	// want and got hold a step's side effects while they are compared.
	want, got []effect
	// values are the trace's parameter values, by parameter name, while
	// a candidate whose side-effect targets are expressions over them is
	// compared with it (see plan.paramValues); nil otherwise.
	values map[string]string
	// Scratch for the retry rule (candidate.FoldRetries): each action's
	// attempt, its part, the attempts folded into it, and the signatures
	// interned for it.
	attempts []candidate.Attempt
	folds    []candidate.Fold
	retries  []int32
	scratch  []int32
	sigKeys  map[string]int32
}

// intern fills al.ids with the signature id of every action of t and,
// for a gapped candidate, al.tol with the actions it tolerates.
func (al *aligner) intern(t *trace.Trace) {
	al.ids = al.ids[:0]
	for i := range t.Actions {
		var id int32
		id, al.keys = al.ix.lookup(&t.Actions[i], al.keys)
		al.ids = append(al.ids, id)
	}
	if !al.gapped {
		al.tol = al.tol[:0]
		return
	}
	n := len(t.Actions)
	// The retry rule mining applied (candidate.FoldRetries): a failed
	// attempt that a later success retried never stands for a step (the
	// success does), nor does the repair between them; a failure that no
	// success retried is an action like any other.
	al.attempts = slices.Grow(al.attempts[:0], n)[:n]
	al.folds = slices.Grow(al.folds[:0], n)[:n]
	al.retries = slices.Grow(al.retries[:0], n)[:n]
	clear(al.sigKeys)
	for j := range t.Actions {
		a := &t.Actions[j]
		at := candidate.Attempt{
			Observation: a.Kind == trace.KindObservation, Failed: a.Failed(), Edit: a.Kind == trace.KindFileMutation,
			Changes:     len(a.SideEffects) > 0 || a.Kind == trace.KindHumanApproval,
			NeedsPerson: a.Approval != nil && a.Approval.Required,
		}
		if !at.Observation {
			sig := a.Signature()
			key, ok := al.sigKeys[sig]
			if !ok {
				key = int32(len(al.sigKeys))
				al.sigKeys[sig] = key
			}
			at.Key = key
		}
		al.attempts[j] = at
	}
	al.scratch = candidate.FoldRetries(al.attempts, al.folds, al.retries, al.scratch)
	al.tol = slices.Grow(al.tol[:0], n)[:n]
	for j := range t.Actions {
		fold := al.folds[j]
		if fold == candidate.FoldAttempt || fold == candidate.FoldRepair {
			al.ids[j] = -1
		}
		// Between steps, the gap rule mining applied
		// (candidate.MayInterleave).
		al.tol[j] = candidate.MayInterleave(al.attempts[j], fold)
	}
}

// tolerated reports whether action j may sit between the steps of a
// gapped candidate.
func (al *aligner) tolerated(j int) bool {
	return j < len(al.tol) && al.tol[j]
}

// pinnedAt returns the alignment of a gapped example at the positions
// mining matched, when the actions there are the candidate's steps and
// everything between them is tolerated.
func (al *aligner) pinnedAt(t *trace.Trace, positions []int) (alignment, bool) {
	cand := al.ix.cand
	if len(positions) != len(cand) || len(cand) == 0 {
		return alignment{}, false
	}
	moves := make([]candidate.Move, len(cand))
	res := alignment{sync: len(cand)}
	for k, p := range positions {
		if p < 0 || p >= len(al.ids) || al.ids[p] != cand[k] || (k > 0 && p <= positions[k-1]) {
			return alignment{}, false
		}
		if k > 0 {
			for j := positions[k-1] + 1; j < p; j++ {
				if !al.tolerated(j) {
					return alignment{}, false
				}
				res.interleaved++
			}
		}
		a := &t.Actions[p]
		moves[k] = candidate.Move{Kind: candidate.MoveSync, Step: k + 1, ActionIndex: p, ActionID: a.ID, Signature: al.ix.sigs[cand[k]]}
	}
	res.moves = moves
	return res, true
}

// pinned returns the all-synchronous alignment of the candidate with the
// actions from start, when they are exactly its sequence. A source
// example is checked where mining found it first, so that a trace holding
// the procedure twice is compared at the occurrence the candidate names.
func (al *aligner) pinned(t *trace.Trace, start int) (alignment, bool) {
	cand := al.ix.cand
	if start < 0 || start+len(cand) > len(al.ids) || len(cand) == 0 {
		return alignment{}, false
	}
	for k, id := range cand {
		if al.ids[start+k] != id {
			return alignment{}, false
		}
	}
	moves := make([]candidate.Move, len(cand))
	for k := range cand {
		a := &t.Actions[start+k]
		moves[k] = candidate.Move{Kind: candidate.MoveSync, Step: k + 1, ActionIndex: start + k, ActionID: a.ID, Signature: al.ix.sigs[cand[k]]}
	}
	return alignment{moves: moves, sync: len(cand)}, true
}

// align computes the best local alignment of the candidate with t (whose
// ids must be interned). Actions outside the span from the first to the
// last action the candidate knows can only be log moves, which a best
// region never starts or ends with, so the table covers that span alone.
func (al *aligner) align(t *trace.Trace) alignment {
	cand := al.ix.cand
	m := len(cand)
	lo, hi := -1, -1
	for j, id := range al.ids {
		if id >= 0 {
			if lo < 0 {
				lo = j
			}
			hi = j
		}
	}
	if lo < 0 {
		// Nothing in common: every step is a model move.
		moves := make([]candidate.Move, m)
		for k := range cand {
			moves[k] = candidate.Move{Kind: candidate.MoveModel, Step: k + 1, ActionIndex: -1, Signature: al.ix.sigs[cand[k]]}
		}
		return alignment{moves: moves, model: m}
	}
	ids := al.ids[lo : hi+1]
	n := len(ids)
	w := m + 1 // a unit of cost outweighs any number of synchronous moves
	rows := m + 1
	al.prev = grow(al.prev, rows)
	al.cur = grow(al.cur, rows)
	al.dir = growBytes(al.dir, (n+1)*rows)
	prev, cur, dir := al.prev, al.cur, al.dir

	// Column 0: no action consumed, every step so far a model move.
	for i := range rows {
		prev[i] = i * w
		dir[i] = dirModel
	}
	best, bestJ := prev[m], 0
	for j := 1; j <= n; j++ {
		col := dir[j*rows : (j+1)*rows]
		id := ids[j-1]
		cur[0] = 0 // the region may start at any action
		for i := 1; i < rows; i++ {
			// Ties prefer sync, then model, then log: an arbitrary but
			// fixed order, so the alignment is deterministic.
			logCost := w
			if al.tolerated(lo + j - 1) {
				logCost = 0
			}
			s, d := cur[i-1]+w, dirModel
			if l := prev[i] + logCost; l < s {
				s, d = l, dirLog
			}
			if cand[i-1] == id {
				if y := prev[i-1] - 1; y <= s {
					s, d = y, dirSync
				}
			}
			cur[i] = s
			col[i] = d
		}
		if cur[m] < best {
			best, bestJ = cur[m], j
		}
		prev, cur = cur, prev
	}

	// Trace back from the best end; leading log moves never occur, since
	// starting the region later is free.
	al.moves = al.moves[:0]
	var res alignment
	for i, j := m, bestJ; i > 0; {
		switch dir[j*rows+i] {
		case dirSync:
			a := &t.Actions[lo+j-1]
			al.moves = append(al.moves, candidate.Move{Kind: candidate.MoveSync, Step: i, ActionIndex: lo + j - 1, ActionID: a.ID, Signature: al.ix.sigs[cand[i-1]]})
			res.sync++
			i--
			j--
		case dirModel:
			al.moves = append(al.moves, candidate.Move{Kind: candidate.MoveModel, Step: i, ActionIndex: -1, Signature: al.ix.sigs[cand[i-1]]})
			res.model++
			i--
		default:
			if al.tolerated(lo + j - 1) {
				res.interleaved++
				j--
				continue
			}
			a := &t.Actions[lo+j-1]
			al.moves = append(al.moves, candidate.Move{Kind: candidate.MoveLog, ActionIndex: lo + j - 1, ActionID: a.ID, Signature: a.Signature()})
			res.log++
			j--
		}
	}
	res.moves = make([]candidate.Move, len(al.moves))
	for k, mv := range al.moves {
		res.moves[len(al.moves)-1-k] = mv
	}
	return res
}

func grow(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

func growBytes(s []uint8, n int) []uint8 {
	if cap(s) < n {
		return make([]uint8, n)
	}
	return s[:n]
}
