package mine

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// letters turns each string into a sequence, 'a' being symbol 0, 'b' 1 and
// so on, so that test tables read like the strings they describe.
func letters(ss ...string) [][]int32 {
	seqs := make([][]int32, len(ss))
	for i, s := range ss {
		seqs[i] = []int32{}
		for _, r := range s {
			seqs[i] = append(seqs[i], r-'a')
		}
	}
	return seqs
}

// view is what a test can observe of a Repeat through the Index API.
type view struct {
	Symbols  []int32
	Support  int
	Count    int
	First    Occurrence
	Examples []Occurrence
}

// views projects the repeats of x through its accessors, checking on the
// way the invariants every repeat must satisfy whatever the input.
func views(t *testing.T, x *Index, rs []Repeat) []view {
	t.Helper()
	out := make([]view, 0, len(rs))
	for _, r := range rs {
		v := view{
			Symbols:  x.Symbols(r),
			Support:  r.Support,
			Count:    r.Count,
			First:    x.First(r),
			Examples: x.Examples(r),
		}
		if len(v.Symbols) != r.Length {
			t.Errorf("len(Symbols(%+v)) = %d, want Length %d", r, len(v.Symbols), r.Length)
		}
		if r.Support < 1 || r.Support > r.Count || r.Count < 2 {
			t.Errorf("repeat %v: Support %d, Count %d; want 1 <= Support <= Count, Count >= 2", v.Symbols, r.Support, r.Count)
		}
		if len(v.Examples) != r.Support {
			t.Errorf("len(Examples(%v)) = %d, want Support %d", v.Symbols, len(v.Examples), r.Support)
		}
		if len(v.Examples) > 0 && v.Examples[0] != v.First {
			t.Errorf("repeat %v: Examples[0] = %v, want First %v", v.Symbols, v.Examples[0], v.First)
		}
		for i := 1; i < len(v.Examples); i++ {
			if v.Examples[i-1].Seq >= v.Examples[i].Seq {
				t.Errorf("Examples(%v) = %v, not sorted by distinct Seq", v.Symbols, v.Examples)
				break
			}
		}
		out = append(out, v)
	}
	// The documented order, checked pairwise.
	for i := 1; i < len(rs); i++ {
		a, b := rs[i-1], rs[i]
		ka := [3]int64{Score(a.Support, a.Length), int64(a.Support), int64(a.Length)}
		kb := [3]int64{Score(b.Support, b.Length), int64(b.Support), int64(b.Length)}
		if c := slices.Compare(kb[:], ka[:]); c > 0 || c == 0 && !occLess(out[i-1].First, out[i].First) {
			t.Errorf("repeats %d and %d out of order: %v %+v before %v %+v", i-1, i, out[i-1].Symbols, a, out[i].Symbols, b)
		}
	}
	return out
}

func occLess(a, b Occurrence) bool {
	return a.Seq < b.Seq || a.Seq == b.Seq && a.Start < b.Start
}

func TestRepeats(t *testing.T) {
	tests := []struct {
		name                  string
		seqs                  [][]int32
		minSupport, minLength int
		want                  []view
	}{{
		name:       "one repeat in three sequences",
		seqs:       letters("abcx", "yabc", "abczab"),
		minSupport: 2,
		// "ab" occurs 4 times in the same 3 sequences: closed out by "abc".
		want: []view{{
			Symbols: []int32{0, 1, 2}, Support: 3, Count: 3,
			First:    Occurrence{0, 0},
			Examples: []Occurrence{{0, 0}, {1, 1}, {2, 0}},
		}},
	}, {
		name:       "shorter repeat in more sequences than its extension",
		seqs:       letters("xabcy", "zabcw", "ab"),
		minSupport: 2,
		// Support² × Length is 18 against 12: the higher Support comes
		// first.
		want: []view{{
			Symbols: []int32{0, 1}, Support: 3, Count: 3,
			First:    Occurrence{0, 1},
			Examples: []Occurrence{{0, 1}, {1, 1}, {2, 0}},
		}, {
			Symbols: []int32{0, 1, 2}, Support: 2, Count: 2,
			First:    Occurrence{0, 1},
			Examples: []Occurrence{{0, 1}, {1, 1}},
		}},
	}, {
		name:       "minLength drops the shorter repeat",
		seqs:       letters("xabcy", "zabcw", "ab"),
		minSupport: 2,
		minLength:  3,
		want: []view{{
			Symbols: []int32{0, 1, 2}, Support: 2, Count: 2,
			First:    Occurrence{0, 1},
			Examples: []Occurrence{{0, 1}, {1, 1}},
		}},
	}, {
		name:       "twice in one sequence counts once",
		seqs:       letters("abxab", "ab"),
		minSupport: 2,
		want: []view{{
			Symbols: []int32{0, 1}, Support: 2, Count: 3,
			First:    Occurrence{0, 0},
			Examples: []Occurrence{{0, 0}, {1, 0}},
		}},
	}, {
		name:       "support counts sequences not occurrences",
		seqs:       letters("abxab", "ab"),
		minSupport: 3,
		want:       []view{},
	}, {
		name:       "left-non-maximal runs are not reported",
		seqs:       letters("xabc", "xabd"),
		minSupport: 2,
		// "ab" and "b" are always preceded by "x" and "a": only "xab".
		want: []view{{
			Symbols: []int32{23, 0, 1}, Support: 2, Count: 2,
			First:    Occurrence{0, 0},
			Examples: []Occurrence{{0, 0}, {1, 0}},
		}},
	}, {
		name:       "right-closed by support",
		seqs:       letters("abc", "abcdab"),
		minSupport: 1,
		// "ab" is left- and right-maximal (count 3) but "abc" is in the
		// same two sequences.
		want: []view{{
			Symbols: []int32{0, 1, 2}, Support: 2, Count: 2,
			First:    Occurrence{0, 0},
			Examples: []Occurrence{{0, 0}, {1, 0}},
		}},
	}, {
		name:       "nil input",
		seqs:       nil,
		minSupport: 1,
		want:       []view{},
	}, {
		name:       "empty sequences",
		seqs:       letters("", "", ""),
		minSupport: 1,
		want:       []view{},
	}, {
		name:       "sequences of length one",
		seqs:       letters("a", "", "a", "b"),
		minSupport: 2,
		want: []view{{
			Symbols: []int32{0}, Support: 2, Count: 2,
			First:    Occurrence{0, 0},
			Examples: []Occurrence{{0, 0}, {2, 0}},
		}},
	}, {
		name:       "no repeat",
		seqs:       letters("abc", "def"),
		minSupport: 1,
		want:       []view{},
	}, {
		name:       "single sequence",
		seqs:       letters("abcab"),
		minSupport: 1,
		want: []view{{
			Symbols: []int32{0, 1}, Support: 1, Count: 2,
			First:    Occurrence{0, 0},
			Examples: []Occurrence{{0, 0}},
		}},
	}, {
		name:       "single run of one symbol",
		seqs:       letters("aaaa"),
		minSupport: 0, // taken as 1
		// "aa" (3 times) and "a" (4 times) are closed out by "aaa".
		want: []view{{
			Symbols: []int32{0, 0, 0}, Support: 1, Count: 2,
			First:    Occurrence{0, 0},
			Examples: []Occurrence{{0, 0}},
		}},
	}, {
		name:       "minLength beyond every repeat",
		seqs:       letters("abcx", "yabc"),
		minSupport: 2,
		minLength:  4,
		want:       []view{},
	}, {
		name:       "sparse and negative symbols",
		seqs:       [][]int32{{-5, 1 << 30, 7}, {9, -5, 1 << 30, 8}, {1 << 30}},
		minSupport: 2,
		// Support² × Length: 9 for the single symbol in three
		// sequences, 8 for the pair in two.
		want: []view{{
			Symbols: []int32{1 << 30}, Support: 3, Count: 3,
			First:    Occurrence{0, 1},
			Examples: []Occurrence{{0, 1}, {1, 2}, {2, 0}},
		}, {
			Symbols: []int32{-5, 1 << 30}, Support: 2, Count: 2,
			First:    Occurrence{0, 0},
			Examples: []Occurrence{{0, 0}, {1, 1}},
		}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := NewIndex(tt.seqs)
			got := views(t, x, x.Repeats(tt.minSupport, tt.minLength))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Repeats(%d, %d) mismatch (-want +got):\n%s", tt.minSupport, tt.minLength, diff)
			}
		})
	}
}

// TestIndexInputUnchanged checks that the index copies its input.
func TestIndexInputUnchanged(t *testing.T) {
	seqs := letters("abc", "abc")
	x := NewIndex(seqs)
	seqs[0][0], seqs[1][0] = 9, 8
	rs := x.Repeats(2, 1)
	if len(rs) != 1 {
		t.Fatalf("Repeats(2, 1) = %+v, want one repeat", rs)
	}
	if got, want := x.Symbols(rs[0]), []int32{0, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("Symbols = %v, want %v", got, want)
	}
}

// TestRepeatInvalid checks that the accessors never panic on a Repeat that
// did not come from the index, or on a nil index.
func TestRepeatInvalid(t *testing.T) {
	x := NewIndex(letters("abc", "abc"))
	bad := []Repeat{
		{},
		{Length: 3, lo: 0, hi: 100, first: 0},
		{Length: 3, lo: -1, hi: 1, first: 0},
		{Length: 3, lo: 1, hi: 0, first: 0},
		{Length: 30, lo: 0, hi: 2, first: 0},
		{Length: 1, lo: 0, hi: 2, first: -4},
		{Length: -1, lo: 0, hi: 2, first: 0},
	}
	for _, r := range bad {
		if got := x.Examples(r); got != nil {
			t.Errorf("Examples(%+v) = %v, want nil", r, got)
		}
		if got := x.Symbols(r); got != nil {
			t.Errorf("Symbols(%+v) = %v, want nil", r, got)
		}
		if got := x.First(r); got != (Occurrence{}) {
			t.Errorf("First(%+v) = %v, want zero", r, got)
		}
	}
	var nilIndex *Index
	r := x.Repeats(1, 1)[0]
	if got := nilIndex.Repeats(1, 1); got != nil {
		t.Errorf("nil.Repeats = %v, want nil", got)
	}
	if got := nilIndex.Examples(r); got != nil {
		t.Errorf("nil.Examples = %v, want nil", got)
	}
	if got := nilIndex.Symbols(r); got != nil {
		t.Errorf("nil.Symbols = %v, want nil", got)
	}
	if got := nilIndex.First(r); got != (Occurrence{}) {
		t.Errorf("nil.First = %v, want zero", got)
	}
}

// oracle computes the documented result of Repeats by brute force: it
// lists every substring with its occurrences and applies the definitions
// directly. The result is sorted by symbols, for comparison as a set.
//
// Substrings are numbered as nodes of a trie, so that walking a substring
// one symbol to the right costs one map lookup; that keeps the oracle
// cubic, not quartic, in the sequence length and fast enough to fuzz.
func oracle(seqs [][]int32, minSupport, minLength int) []view {
	minSupport = max(minSupport, 1)
	minLength = max(minLength, 1)
	type edge struct {
		parent int
		sym    int32
	}
	type node struct {
		syms []int32
		occs []Occurrence // in (Seq, Start) order, as sequences and starts ascend
	}
	child := map[edge]int{}
	nodes := []node{{}} // node 0 is the empty string
	for k, s := range seqs {
		for p := range s {
			id := 0
			for e := p; e < len(s); e++ {
				next, ok := child[edge{id, s[e]}]
				if !ok {
					next = len(nodes)
					child[edge{id, s[e]}] = next
					nodes = append(nodes, node{syms: s[p : e+1]})
				}
				nodes[next].occs = append(nodes[next].occs, Occurrence{int32(k), int32(p)})
				id = next
			}
		}
	}
	support := make([]int, len(nodes))
	for id, nd := range nodes {
		for i, o := range nd.occs {
			if i == 0 || nd.occs[i-1].Seq != o.Seq {
				support[id]++
			}
		}
	}
	// distinct counts distinct context symbols; a sequence boundary is a
	// context of its own, different from every other.
	type context struct {
		boundary bool
		sym      int32 // when !boundary
		at       Occurrence
	}
	distinct := func(os []Occurrence, ctx func(o Occurrence) (int32, bool)) int {
		seen := map[context]bool{}
		for _, o := range os {
			if c, ok := ctx(o); ok {
				seen[context{sym: c}] = true
			} else {
				seen[context{boundary: true, at: o}] = true
			}
		}
		return len(seen)
	}

	var out []view
	for id, nd := range nodes[1:] {
		id++ // nodes[1:] starts at node 1
		n, os, sup := len(nd.syms), nd.occs, support[id]
		if len(os) < 2 || n < minLength || sup < minSupport {
			continue
		}
		left := distinct(os, func(o Occurrence) (int32, bool) {
			if o.Start == 0 {
				return 0, false
			}
			return seqs[o.Seq][o.Start-1], true
		})
		right := distinct(os, func(o Occurrence) (int32, bool) {
			if int(o.Start)+n == len(seqs[o.Seq]) {
				return 0, false
			}
			return seqs[o.Seq][int(o.Start)+n], true
		})
		if left < 2 || right < 2 {
			continue
		}
		// Closed: no longer repeat (two or more occurrences) that starts
		// with this one has the same support.
		closed := true
		for _, o := range os {
			s := seqs[o.Seq]
			ext := id
			for e := int(o.Start) + n; e < len(s) && closed; e++ {
				ext = child[edge{ext, s[e]}]
				if len(nodes[ext].occs) >= 2 && support[ext] == sup {
					closed = false
				}
			}
		}
		if !closed {
			continue
		}
		v := view{Symbols: nd.syms, Support: sup, Count: len(os), First: os[0]}
		for i, o := range os {
			if i == 0 || os[i-1].Seq != o.Seq {
				v.Examples = append(v.Examples, o)
			}
		}
		out = append(out, v)
	}
	sortViews(out)
	return out
}

func sortViews(vs []view) {
	slices.SortFunc(vs, func(a, b view) int { return slices.Compare(a.Symbols, b.Symbols) })
}

// checkOracle compares Repeats with the oracle, as sets.
func checkOracle(t *testing.T, seqs [][]int32, minSupport, minLength int) {
	t.Helper()
	x := NewIndex(seqs)
	got := views(t, x, x.Repeats(minSupport, minLength))
	sortViews(got)
	want := oracle(seqs, minSupport, minLength)
	if want == nil {
		want = []view{}
	}
	// cmp.Equal first: it is much cheaper than Diff, and this runs often.
	if !cmp.Equal(want, got) {
		t.Fatalf("Repeats(%d, %d) of %v mismatch (-want +got):\n%s", minSupport, minLength, seqs, cmp.Diff(want, got))
	}
}

// symbolSets are the alphabets random tests draw from: dense ids, and
// sparse or negative ones that make NewIndex compress the alphabet.
var symbolSets = [][]int32{
	{0, 1, 2, 3},
	{-7, 1 << 30, 42, 3},
	{5, 900, 11, 6},
}

func randomSeqs(r *rand.Rand, nseq, maxLen, alpha int, symbols []int32) [][]int32 {
	seqs := make([][]int32, nseq)
	for i := range seqs {
		seqs[i] = make([]int32, r.IntN(maxLen+1))
		for j := range seqs[i] {
			seqs[i][j] = symbols[r.IntN(alpha)]
		}
	}
	return seqs
}

func TestRepeatsOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		seqs := randomSeqs(r, 2+r.IntN(7), 15, 2+r.IntN(3), symbolSets[r.IntN(len(symbolSets))])
		checkOracle(t, seqs, r.IntN(4), r.IntN(4))
	}
}

// TestRepeatsOracleLarge runs the oracle on inputs big enough for deep
// recursion in SA-IS and long stacks of nested intervals.
func TestRepeatsOracleLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 6 {
		alpha := 2 + i%3
		seqs := randomSeqs(r, 40, 30, alpha, symbolSets[0])
		// Plant a common run so that long repeats exist.
		run := randomSeqs(r, 1, 12, alpha, symbolSets[0])[0]
		for _, s := range seqs[:20] {
			if len(s) >= len(run) {
				copy(s[r.IntN(len(s)-len(run)+1):], run)
			}
		}
		checkOracle(t, seqs, 1+i%3, 1+i%2)
	}
}

// TestRepeatsPeriodic checks periodic input, the worst case for nested
// intervals: every prefix of the run repeats.
func TestRepeatsPeriodic(t *testing.T) {
	checkOracle(t, [][]int32{slices.Repeat([]int32{0, 1}, 40), slices.Repeat([]int32{0, 1}, 25), {1, 0, 1}}, 1, 1)

	const n = 20000
	x := NewIndex([][]int32{make([]int32, n)})
	rs := x.Repeats(1, 1)
	want := []view{{
		Symbols:  make([]int32, n-1),
		Support:  1,
		Count:    2,
		First:    Occurrence{0, 0},
		Examples: []Occurrence{{0, 0}},
	}}
	if diff := cmp.Diff(want, views(t, x, rs)); diff != "" {
		t.Errorf("Repeats(1, 1) of 0^%d mismatch (-want +got):\n%s", n, diff)
	}
}

// naiveSuffixArray sorts the suffixes of s by comparison.
func naiveSuffixArray(s []int32) []int32 {
	sa := make([]int32, len(s))
	for i := range sa {
		sa[i] = int32(i)
	}
	slices.SortFunc(sa, func(a, b int32) int { return slices.Compare(s[a:], s[b:]) })
	return sa
}

func TestSuffixArray(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var inputs [][]int32
	for range 2000 {
		alpha := 1 + r.IntN(5)
		s := make([]int32, r.IntN(200))
		for i := range s {
			s[i] = int32(r.IntN(alpha))
		}
		inputs = append(inputs, s)
	}
	inputs = append(inputs,
		slices.Repeat([]int32{0}, 1000),
		slices.Repeat([]int32{1, 0}, 500),
		slices.Repeat([]int32{2, 1, 0, 1}, 300),
	)
	for _, s := range inputs {
		upper := int32(0)
		for _, c := range s {
			upper = max(upper, c)
		}
		want := naiveSuffixArray(s)
		if got := sais(s, upper); !slices.Equal(got, want) {
			t.Fatalf("sais(%v) = %v, want %v", s, got, want)
		}
		lcp := kasai(s, want, make([]int32, len(s)))
		for i := 1; i < len(s); i++ {
			a, b := s[want[i-1]:], s[want[i]:]
			h := 0
			for h < len(a) && h < len(b) && a[h] == b[h] {
				h++
			}
			if int(lcp[i]) != h {
				t.Fatalf("kasai(%v)[%d] = %d, want %d", s, i, lcp[i], h)
			}
		}
	}
}

// fuzzSeqs decodes fuzz input: two parameter bytes, an alphabet byte, then
// one byte a symbol, bytes >= 0xf0 ending a sequence. The length is capped
// so that the cubic oracle stays fast.
func fuzzSeqs(data []byte) (seqs [][]int32, minSupport, minLength int) {
	if len(data) < 3 {
		return nil, 1, 1
	}
	minSupport, minLength = int(data[0]%5)-1, int(data[1]%5)-1
	symbols := symbolSets[int(data[2])%len(symbolSets)]
	alpha := 1 + int(data[2]/4)%len(symbols)
	data = data[3:]
	if len(data) > 96 {
		data = data[:96]
	}
	seqs = [][]int32{{}}
	for _, b := range data {
		if b >= 0xf0 {
			seqs = append(seqs, []int32{})
			continue
		}
		last := len(seqs) - 1
		seqs[last] = append(seqs[last], symbols[int(b)%alpha])
	}
	return seqs, minSupport, minLength
}

func FuzzRepeats(f *testing.F) {
	f.Add([]byte("\x02\x01\x00abcx\xffyabc\xffabczab"))
	f.Add([]byte("\x01\x01\x01aaaaaaaaaaaa"))
	f.Add([]byte("\x02\x02\x0aabab\xffbaba\xff\xff\xffab"))
	f.Add([]byte("\x00\x00\x06"))
	f.Add([]byte(strings.Repeat("ab\xf0", 20)))
	f.Fuzz(func(t *testing.T, data []byte) {
		seqs, minSupport, minLength := fuzzSeqs(data)
		checkOracle(t, seqs, minSupport, minLength)
	})
}

// TestIndexRelease checks that an index that let go of its LCP array and
// position colours answers Examples, Symbols and First as before, for
// every repeat, including sequences that are empty.
func TestIndexRelease(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		seqs := randomSeqs(r, 1+r.IntN(9), 15, 2+r.IntN(3), symbolSets[r.IntN(len(symbolSets))])
		x := NewIndex(seqs)
		repeats := x.Repeats(1, 1)
		type answer struct {
			examples []Occurrence
			symbols  []int32
			first    Occurrence
		}
		before := make([]answer, len(repeats))
		for i, rep := range repeats {
			before[i] = answer{x.Examples(rep), x.Symbols(rep), x.First(rep)}
		}
		x.Release()
		if got := x.Repeats(1, 1); got != nil {
			t.Fatalf("Repeats after Release = %v, want nil", got)
		}
		for i, rep := range repeats {
			after := answer{x.Examples(rep), x.Symbols(rep), x.First(rep)}
			if !reflect.DeepEqual(after, before[i]) {
				t.Fatalf("seqs %v repeat %d: after Release %+v, before %+v", seqs, i, after, before[i])
			}
		}
	}
	var nilIndex *Index
	nilIndex.Release()
}
