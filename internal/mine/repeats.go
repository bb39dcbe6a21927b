package mine

import (
	"math"
	"slices"
)

// This file finds repeated runs of symbols across many sequences with a
// generalized suffix array. A map keyed by every window would cost
// O(n·L) memory for windows up to length L; the suffix array costs a few
// int32 arrays of length n, and one bottom-up pass over its LCP array
// visits every maximal repeat once.
//
// The text is the concatenation of all sequences, each followed by a
// separator symbol used nowhere else. Because every separator is unique, no
// common prefix of two suffixes can run across a sequence boundary, so every
// repeat the index finds lies inside one sequence per occurrence.

// maxText bounds the length of the concatenated text: positions, ranks and
// LCP values are int32, and SA-IS needs n+1 to fit.
const maxText = math.MaxInt32 - 1

// Index is a generalized suffix array (with LCP) over a set of sequences.
//
// Building it costs O(n) time in the total length n of the sequences plus
// their number (SA-IS and Kasai's algorithm), and it keeps four int32 arrays
// of that length, about 16 bytes a symbol. An Index is immutable once built
// and safe for concurrent use.
type Index struct {
	// text is the concatenation: sequence k occupies
	// text[start[k]:start[k+1]-1] and text[start[k+1]-1] is its separator,
	// sepBase+k. Symbols are stored in the dense form sa is built over:
	// when alphabet is non-nil, text symbol c stands for alphabet[c].
	text     []int32
	start    []int32 // len(seqs)+1 offsets into text
	sepBase  int32   // text[p] >= sepBase iff p holds a separator
	alphabet []int32 // dense symbol -> caller's symbol, or nil for identity

	// sa lists text positions in lexicographic order of their suffixes;
	// lcp[i] is the length of the longest common prefix of the suffixes at
	// sa[i-1] and sa[i], and lcp[0] is 0.
	sa  []int32
	lcp []int32

	// seq[p] is the sequence that text position p belongs to (a separator
	// belongs to the sequence it ends). It turns a suffix into its "colour"
	// for counting distinct sequences.
	seq []int32

	// released says Release dropped lcp and seq: Repeats then returns
	// nothing, and occurrences are found by binary search on start.
	released bool
}

// Occurrence is a position: sequence number and start offset within it.
type Occurrence struct {
	Seq   int32 // index into the sequences given to NewIndex
	Start int32 // offset of the first symbol within that sequence
}

// Repeat is a repeated sequence found by Repeats.
//
// The zero Repeat is empty: Examples and Symbols return nil for it and First
// returns the zero Occurrence. A Repeat is only meaningful to the Index that
// produced it.
type Repeat struct {
	Length  int // number of symbols
	Support int // number of distinct sequences (or colours, RepeatsBy) that contain it
	Count   int // total occurrences (>= Support)

	// lo and hi delimit the suffix-array interval sa[lo:hi] of the suffixes
	// that start with the repeat; first is the smallest text position among
	// them, which is also the smallest (Seq, Start), since text positions
	// increase with (Seq, Start).
	lo, hi, first int32
}

// NewIndex builds the index of seqs. Symbols are expected to be >= 0 and
// sequences may be empty; the index keeps its own copy of the symbols, so
// seqs may be changed afterwards.
//
// Any symbol values are accepted: when a symbol is negative or not smaller
// than the number of symbols, the alphabet is first compressed to dense ids
// (O(n log n)), so that the bucket arrays of the construction never outgrow
// the text. Input whose total length, separators included, exceeds
// math.MaxInt32-1 cannot be addressed with int32 positions; NewIndex then
// returns an empty index, whose Repeats is empty.
func NewIndex(seqs [][]int32) *Index {
	var total int64
	for _, s := range seqs {
		total += int64(len(s)) + 1
	}
	if total == 0 || total > maxText {
		return &Index{}
	}
	n := int(total)
	m := len(seqs)
	nsym := n - m

	minSym, maxSym := int32(math.MaxInt32), int32(-1)
	for _, s := range seqs {
		for _, c := range s {
			minSym = min(minSym, c)
			maxSym = max(maxSym, c)
		}
	}

	x := &Index{
		text:  make([]int32, n),
		start: make([]int32, m+1),
	}
	// Dense symbols are 0..V-1 and separators V..V+m-1. SA-IS needs
	// bucket arrays of size V+m, which stays <= n because V <= nsym
	// whether or not the alphabet is compressed.
	var v int32
	if nsym > 0 && (minSym < 0 || int(maxSym) >= nsym) {
		x.alphabet = distinctSymbols(seqs, nsym)
		v = int32(len(x.alphabet))
	} else if nsym > 0 {
		v = maxSym + 1
	}
	x.sepBase = v

	p := int32(0)
	for k, s := range seqs {
		x.start[k] = p
		if x.alphabet == nil {
			copy(x.text[p:], s)
		} else {
			for i, c := range s {
				d, _ := slices.BinarySearch(x.alphabet, c)
				x.text[int(p)+i] = int32(d)
			}
		}
		p += int32(len(s))
		x.text[p] = v + int32(k)
		p++
	}
	x.start[m] = p

	x.sa = sais(x.text, v+int32(m)-1)
	// Kasai's algorithm needs the inverse suffix array; once the LCP is
	// known that array is reused for seq, so the build never holds more
	// than four n-length arrays besides the construction's temporaries.
	rank := make([]int32, n)
	x.lcp = kasai(x.text, x.sa, rank)
	for k := range m {
		for q := x.start[k]; q < x.start[k+1]; q++ {
			rank[q] = int32(k)
		}
	}
	x.seq = rank
	return x
}

// distinctSymbols returns the sorted distinct symbols of seqs, which hold
// nsym symbols in all.
func distinctSymbols(seqs [][]int32, nsym int) []int32 {
	all := make([]int32, 0, nsym)
	for _, s := range seqs {
		all = append(all, s...)
	}
	slices.Sort(all)
	return slices.Clip(slices.Compact(all))
}

// Left-context states of an lcp-interval, tracked bottom-up to decide left
// maximality. A state >= 0 is the one symbol (or separator) that precedes
// every suffix seen so far.
const (
	leftNone  = -1 // no suffix seen yet
	leftMixed = -2 // two suffixes with different preceding symbols: left-diverse
	leftStart = -3 // preceded by the start of the text; unique, like a separator
)

// mergeLeft combines the left-context states of two disjoint sets of
// suffixes.
func mergeLeft(a, b int32) int32 {
	switch {
	case a == leftNone:
		return b
	case b == leftNone:
		return a
	case a == b && a != leftMixed:
		return a
	}
	return leftMixed
}

// frame is an open lcp-interval on the stack of Repeats, with the
// aggregates of the suffixes and child intervals it has absorbed so far.
type frame struct {
	lcp      int32 // the interval's lcp value: the length of its repeat
	lb       int32 // left bound in sa
	dups     int32 // Hui's duplicate count, summed over the subtree
	first    int32 // smallest text position among its suffixes
	left     int32 // left-context state (leftNone, leftMixed, ...)
	maxChild int32 // largest Support among child intervals
}

// Repeats returns the maximal repeats of at least minLength symbols that
// occur in at least minSupport distinct sequences. A minSupport below 1 is
// taken as 1 and a minLength below 1 as 1.
//
// A repeat is a run of symbols that occurs at least twice (Count >= 2),
// possibly twice in the same sequence. Repeats reports a run w when all of
// these hold:
//
//   - w is right-maximal: its occurrences are not all followed by the same
//     symbol (the end of a sequence counts as a symbol of its own). These
//     are exactly the lcp-intervals of the suffix array.
//   - w is left-maximal: its occurrences are not all preceded by the same
//     symbol (the start of a sequence counts as a symbol of its own). A
//     run that fails this is reported only as part of its longer left
//     extension.
//   - w is closed on the right by support: no longer repeat w·u (occurring
//     at least twice) has the same Support. Such a w·u occurs in all the
//     traces w occurs in, so w adds nothing. Support cannot grow with
//     extension, so it suffices to compare with the child intervals.
//   - Support >= minSupport and Length >= minLength.
//
// The result is sorted by Score (Support² × Length), Support and Length,
// each descending, then by First ascending; no two repeats tie on all
// four, so the order is deterministic.
//
// The lcp-intervals are enumerated bottom-up with a stack (Abouelhoda,
// Kurtz and Ohlebusch, 2004), in one pass over the LCP array. Support is
// computed without visiting each interval's members, which would be
// quadratic on repetitive input, by Hui's method (1992): an interval's
// Support is its number of suffixes minus its "duplicates", where each
// suffix whose previous suffix from the same sequence is at sa[j] adds one
// duplicate to the smallest interval containing both, found by binary
// search on the stack. Left contexts, duplicates, first positions and child
// supports are all folded into the parent as intervals close. The total
// cost is O(n log d) for stack depth d <= n plus O(r log r) to sort the r
// results; the extra memory is one int32 per sequence and the stack.
func (x *Index) Repeats(minSupport, minLength int) []Repeat {
	return x.RepeatsBy(minSupport, minLength, nil)
}

// RepeatsBy is Repeats with support counted in colours instead of
// sequences: colour[k] >= 0 is the colour of sequence k, and a repeat's
// Support is the number of distinct colours of the sequences it occurs
// in (closure by support and minSupport count them too). Sequences that
// share a colour are parts of one session. Hui's method counts distinct
// colours of any colouring of the suffixes, so the cost is that of
// Repeats plus one int32 per colour. A nil colour is Repeats; a colour
// shorter than the sequences is treated as nil.
func (x *Index) RepeatsBy(minSupport, minLength int, colour []int32) []Repeat {
	if x == nil || len(x.sa) == 0 || x.released {
		return nil
	}
	minSupport = max(minSupport, 1)
	minLength = max(minLength, 1)
	n := len(x.sa)

	colours := len(x.start) - 1
	if len(colour) < colours {
		colour = nil
	}
	if colour != nil {
		colours = 0
		for _, c := range colour {
			colours = max(colours, int(c)+1)
		}
	}
	// prev[k] is the sa index of the last suffix of colour k seen.
	prev := make([]int32, colours)
	for k := range prev {
		prev[k] = -1
	}
	// The root interval [0, n) with lcp 0 is never popped or reported.
	stack := []frame{{lcp: 0, lb: 0, first: math.MaxInt32, left: leftNone}}
	var out []Repeat

	for i := range n {
		// h is the lcp between suffix i and the next one; 0 at the end
		// closes every interval but the root.
		var h int32
		if i+1 < n {
			h = x.lcp[i+1]
		}
		// Invariant: the top of the stack has lcp == x.lcp[i], and the
		// stack holds exactly the open intervals containing suffix i. Suffix
		// i is a leaf of the deepest interval containing it, whose lcp is
		// max(lcp[i], lcp[i+1]); if that is h, open the interval now.
		if h > stack[len(stack)-1].lcp {
			stack = append(stack, frame{lcp: h, lb: int32(i), first: math.MaxInt32, left: leftNone})
		}
		x.addLeaf(stack, int32(i), prev, colour)

		// Close the intervals that end at i: those with lcp > h.
		for h < stack[len(stack)-1].lcp {
			e := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			count := int32(i) + 1 - e.lb
			support := count - e.dups
			if int(e.lcp) >= minLength && int(support) >= minSupport &&
				e.left == leftMixed && e.maxChild < support {
				out = append(out, Repeat{
					Length:  int(e.lcp),
					Support: int(support),
					Count:   int(count),
					lo:      e.lb,
					hi:      int32(i) + 1,
					first:   e.first,
				})
			}
			// e is a child of the interval with lcp max(h, top.lcp): the
			// top if h <= top.lcp, otherwise a new interval with lcp h that
			// starts where e starts (and then the loop ends).
			if h > stack[len(stack)-1].lcp {
				stack = append(stack, frame{lcp: h, lb: e.lb, first: math.MaxInt32, left: leftNone})
			}
			p := &stack[len(stack)-1]
			p.dups += e.dups
			p.first = min(p.first, e.first)
			p.left = mergeLeft(p.left, e.left)
			p.maxChild = max(p.maxChild, support)
		}
	}

	slices.SortFunc(out, func(a, b Repeat) int {
		if c := cmpDesc(Score(a.Support, a.Length), Score(b.Support, b.Length)); c != 0 {
			return c
		}
		if c := cmpDesc(int64(a.Support), int64(b.Support)); c != 0 {
			return c
		}
		// The same score and support is the same length (Score is
		// support² × length).
		return int(a.first) - int(b.first)
	})
	return out
}

// cmpDesc orders a before b when a is larger.
func cmpDesc(a, b int64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// addLeaf adds suffix sa[i] to the deepest open interval, the top of stack.
// Suffixes that start at a separator only ever belong to the root, which is
// never reported, so they are skipped.
func (x *Index) addLeaf(stack []frame, i int32, prev, colour []int32) {
	p := x.sa[i]
	if x.text[p] >= x.sepBase {
		return
	}
	top := &stack[len(stack)-1]
	top.first = min(top.first, p)
	// The symbol before position p. At a sequence start it is the previous
	// sequence's separator, which is unique, so "sequence start counts as a
	// unique preceding symbol" needs no special case except at p == 0.
	c := int32(leftStart)
	if p > 0 {
		c = x.text[p-1]
	}
	top.left = mergeLeft(top.left, c)

	// Hui: the previous suffix of the same sequence (or colour), at sa[j], and this one
	// are both in every interval that contains their lowest common
	// ancestor; that is the deepest open interval with lb <= j (all open
	// intervals contain i). Count one duplicate there. Stack lbs are
	// non-decreasing, so binary search finds it in O(log depth).
	k := x.seq[p]
	if colour != nil {
		k = colour[k]
	}
	if j := prev[k]; j >= 0 {
		lo, hi := 0, len(stack) // find the first frame with lb > j
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if stack[mid].lb <= j {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		// stack[0].lb == 0 <= j, so lo >= 1.
		stack[lo-1].dups++
	}
	prev[k] = i
}

// valid reports whether r can be a repeat of x: its interval and first
// occurrence lie within the index. Repeats from another index may pass and
// then give meaningless but safe answers.
func (x *Index) valid(r Repeat) bool {
	return x != nil && r.lo >= 0 && r.lo < r.hi && int(r.hi) <= len(x.sa) &&
		r.first >= 0 && r.Length >= 0 && int(r.first)+r.Length <= len(x.text)
}

// any reports whether f holds for any symbol of r, in order, without
// copying them as Symbols does.
func (x *Index) any(r Repeat, f func(int32) bool) bool {
	if !x.valid(r) {
		return false
	}
	for _, c := range x.text[r.first : int(r.first)+r.Length] {
		if x.alphabet != nil && int(c) < len(x.alphabet) {
			c = x.alphabet[c]
		}
		if f(c) {
			return true
		}
	}
	return false
}

// Release lets go of what only Repeats needs, the LCP array and each
// position's sequence: half of the index, two int32 per symbol. Examples,
// Symbols and First keep working, finding a position's sequence by binary
// search over the sequence starts (O(log m) instead of O(1)); Repeats
// returns nothing afterwards. A miner that has ranked its repeats calls it
// before building candidates, where the memory goes to the example traces.
func (x *Index) Release() {
	if x == nil {
		return
	}
	x.lcp, x.seq, x.released = nil, nil, true
}

// occurrence converts text position p into a sequence and offset.
func (x *Index) occurrence(p int32) Occurrence {
	var k int32
	if x.seq != nil {
		k = x.seq[p]
	} else {
		// The last start <= p; start[0] is 0 <= p, and a separator
		// belongs to the sequence it ends, which this also gives.
		i, found := slices.BinarySearch(x.start, p)
		if !found {
			i--
		}
		k = int32(i)
	}
	return Occurrence{Seq: k, Start: p - x.start[k]}
}

// Examples returns one occurrence of r per distinct sequence that contains
// it, the one with the smallest Start in that sequence, sorted by Seq; so
// len(Examples(r)) == r.Support for a repeat of Repeats (RepeatsBy may
// find several sequences of one colour). It costs O(c log c) for c = r.Count.
func (x *Index) Examples(r Repeat) []Occurrence {
	if !x.valid(r) {
		return nil
	}
	// Text positions order occurrences by (Seq, Start), so after sorting
	// the first position of each sequence is its smallest Start.
	pos := slices.Clone(x.sa[r.lo:r.hi])
	slices.Sort(pos)
	var out []Occurrence
	for _, p := range pos {
		o := x.occurrence(p)
		if len(out) > 0 && out[len(out)-1].Seq == o.Seq {
			continue
		}
		out = append(out, o)
	}
	return out
}

// Symbols returns the r.Length symbols of r, as given to NewIndex.
func (x *Index) Symbols(r Repeat) []int32 {
	if !x.valid(r) {
		return nil
	}
	out := slices.Clone(x.text[r.first : int(r.first)+r.Length])
	if x.alphabet != nil {
		for i, c := range out {
			if int(c) < len(x.alphabet) {
				out[i] = x.alphabet[c]
			}
		}
	}
	return out
}

// First returns the occurrence of r with the smallest (Seq, Start).
func (x *Index) First(r Repeat) Occurrence {
	if !x.valid(r) {
		return Occurrence{}
	}
	return x.occurrence(r.first)
}

// kasai returns the LCP array of text for its suffix array sa in O(n)
// (Kasai et al., 2001), using rank as scratch space for the inverse of sa.
// The loop visits suffixes in text order; the lcp of the suffix at p+1 with
// its predecessor is at least that of p minus one, so h falls by at most one
// a step and the total work is O(n).
//
// Comparisons cannot run past the end: the text ends with a separator, and
// separators are unique, so two different suffixes differ at or before it.
func kasai(text, sa, rank []int32) []int32 {
	n := len(text)
	for i, p := range sa {
		rank[p] = int32(i)
	}
	lcp := make([]int32, n)
	h := 0
	for p := range n {
		r := rank[p]
		if r == 0 {
			h = 0
			continue
		}
		q := int(sa[r-1])
		for p+h < n && q+h < n && text[p+h] == text[q+h] {
			h++
		}
		lcp[r] = int32(h)
		if h > 0 {
			h--
		}
	}
	return lcp
}

// saisNaive is the input length below which sais sorts suffixes by direct
// comparison, which is faster than induced sorting for tiny inputs.
const saisNaive = 10

// sais returns the suffix array of s, whose symbols are in [0, upper], by
// induced sorting (SA-IS: Nong, Zhang and Chan, 2009) in O(n + upper) time.
// The structure follows the compact formulation of the AtCoder Library.
//
// Suffixes are typed S (smaller than the next suffix) or L (larger); an LMS
// position is an S position after an L one. Sorting the LMS substrings by
// one round of induction, naming them, and sorting the named string
// recursively (at most half as long) gives the order of the LMS suffixes,
// from which a second induction sorts every suffix. Memory: besides sa, a
// type bit per position, an LMS map of n+1 int32 and O(n/2) for the
// recursion.
func sais(s []int32, upper int32) []int32 {
	n := len(s)
	switch {
	case n == 0:
		return nil
	case n == 1:
		return []int32{0}
	case n < saisNaive:
		sa := make([]int32, n)
		for i := range sa {
			sa[i] = int32(i)
		}
		slices.SortFunc(sa, func(a, b int32) int { return slices.Compare(s[a:], s[b:]) })
		return sa
	}

	sa := make([]int32, n)
	// ls[i] reports whether suffix i is S-type. The last suffix is L-type:
	// it is larger than the empty suffix after it.
	ls := make([]bool, n)
	for i := n - 2; i >= 0; i-- {
		if s[i] == s[i+1] {
			ls[i] = ls[i+1]
		} else {
			ls[i] = s[i] < s[i+1]
		}
	}
	// Bucket c holds the suffixes starting with c: first its L-type ones,
	// from sumL[c], then its S-type ones, from sumS[c]. An S-type symbol is
	// smaller than a later one, so s[i]+1 <= upper when ls[i].
	sumL := make([]int32, upper+1)
	sumS := make([]int32, upper+1)
	for i := range n {
		if !ls[i] {
			sumS[s[i]]++
		} else {
			sumL[s[i]+1]++
		}
	}
	for c := int32(0); c <= upper; c++ {
		sumS[c] += sumL[c]
		if c < upper {
			sumL[c+1] += sumS[c]
		}
	}

	buf := make([]int32, upper+1)
	// induce places the LMS positions in the given order into their
	// buckets, then induces the L-type suffixes left to right and the
	// S-type suffixes right to left. With LMS suffixes in sorted order the
	// result is the suffix array.
	induce := func(lms []int32) {
		for i := range sa {
			sa[i] = -1
		}
		copy(buf, sumS)
		for _, d := range lms {
			if int(d) == n {
				continue
			}
			sa[buf[s[d]]] = d
			buf[s[d]]++
		}
		copy(buf, sumL)
		sa[buf[s[n-1]]] = int32(n - 1)
		buf[s[n-1]]++
		for i := range n {
			v := sa[i]
			if v >= 1 && !ls[v-1] {
				sa[buf[s[v-1]]] = v - 1
				buf[s[v-1]]++
			}
		}
		copy(buf, sumL)
		for i := n - 1; i >= 0; i-- {
			v := sa[i]
			if v >= 1 && ls[v-1] {
				buf[s[v-1]+1]--
				sa[buf[s[v-1]+1]] = v - 1
			}
		}
	}

	var lms []int32
	for i := 1; i < n; i++ {
		if !ls[i-1] && ls[i] {
			lms = append(lms, int32(i))
		}
	}
	induce(lms)
	if len(lms) == 0 {
		return sa
	}
	sorted, recS, recUpper := nameLMS(s, sa, lms)
	recSA := sais(recS, recUpper)
	for i, r := range recSA {
		sorted[i] = lms[r]
	}
	induce(sorted)
	return sa
}

// nameLMS reads the LMS positions lms (in text order) off sa after one
// induction, which leaves the LMS substrings (from one LMS position to the
// next, inclusive) in sorted order. It returns them in that order, and the
// reduced string that names each LMS substring by its rank, equal
// substrings getting equal names, with the largest name.
func nameLMS(s, sa, lms []int32) (sorted, recS []int32, recUpper int32) {
	n, m := len(s), len(lms)
	// lmsMap[i] is the index in lms of LMS position i, or -1. It is
	// garbage once this returns, before the recursion allocates.
	lmsMap := make([]int32, n+1)
	for i := range lmsMap {
		lmsMap[i] = -1
	}
	for i, p := range lms {
		lmsMap[p] = int32(i)
	}
	sorted = make([]int32, 0, m)
	for _, v := range sa {
		if lmsMap[v] != -1 {
			sorted = append(sorted, v)
		}
	}
	recS = make([]int32, m)
	recS[lmsMap[sorted[0]]] = 0
	for i := 1; i < m; i++ {
		l, r := int(sorted[i-1]), int(sorted[i])
		endL, endR := n, n
		if j := lmsMap[l] + 1; int(j) < m {
			endL = int(lms[j])
		}
		if j := lmsMap[r] + 1; int(j) < m {
			endR = int(lms[j])
		}
		same := endL-l == endR-r
		if same {
			for l < endL && s[l] == s[r] {
				l++
				r++
			}
			// A substring that runs to the end of s ends in the virtual
			// sentinel and equals no other.
			if l == n || r == n || s[l] != s[r] {
				same = false
			}
		}
		if !same {
			recUpper++
		}
		recS[lmsMap[sorted[i]]] = recUpper
	}
	return sorted, recS, recUpper
}
