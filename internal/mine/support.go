package mine

import "github.com/crystallize-dev/crystallize/internal/candidate"

// Support counts distinct sessions, not traces. An agent's session may be
// recorded as several traces: its subagents' parts, and the continuations
// after compaction, each name the session they belong to
// (metadata.parent_session_id, see sessionOf). A procedure done once in a
// session and repeated in its continuation was still done in one session,
// and a person reviewing it would count it once; counted by traces, one
// long session split over four files would support a procedure four
// times. So --min-examples, the rank (supporting sessions² × length) and
// the support factor of the confidence count sessions, while a candidate
// still lists every trace it occurs in as an example.
//
// Sessions are numbered as the scan meets them, and counted through those
// int32s with a stamp per session: a count costs one pass over the traces
// and allocates nothing.
type sessionCounter struct {
	session []int32 // the session of each eligible trace
	// shared is false when every session is a single trace: a count is
	// then the number of traces.
	shared bool
	stamp  []uint32
	epoch  uint32
}

func newSessionCounter(session []int32, sessions int) *sessionCounter {
	c := &sessionCounter{session: session, shared: sessions < len(session)}
	if c.shared {
		c.stamp = make([]uint32, sessions)
	}
	return c
}

// colours returns the session of each trace for Repeats, or nil when
// every session is one trace.
func (c *sessionCounter) colours() []int32 {
	if c == nil || !c.shared {
		return nil
	}
	return c.session
}

// next starts a new count.
func (c *sessionCounter) next() {
	c.epoch++
	if c.epoch == 0 {
		clear(c.stamp)
		c.epoch = 1
	}
}

// add counts trace seq's session and reports whether it is new to the
// count.
func (c *sessionCounter) add(seq int32) bool {
	k := c.session[seq]
	if c.stamp[k] == c.epoch {
		return false
	}
	c.stamp[k] = c.epoch
	return true
}

// count returns the distinct sessions of the traces seqs.
func (c *sessionCounter) count(seqs []int32) int {
	if c == nil || !c.shared {
		return len(seqs)
	}
	c.next()
	n := 0
	for _, s := range seqs {
		if c.add(s) {
			n++
		}
	}
	return n
}

// countMatches returns the distinct sessions of the examples ms.
func (c *sessionCounter) countMatches(ms []gmatch) int {
	if c == nil || !c.shared {
		return len(ms)
	}
	c.next()
	n := 0
	for _, m := range ms {
		if c.add(m.seq) {
			n++
		}
	}
	return n
}

// setSupport gives a built candidate, whose examples are in the traces
// seqs, its support in sessions: the support, the score and the support
// factor of the confidence, among the eligible sessions. The builder
// counted examples, which is the same when no session has more than one
// trace.
func (c *sessionCounter) setSupport(cand *candidate.Candidate, seqs []int32, length int) {
	if c == nil || !c.shared {
		return
	}
	n := c.count(seqs)
	cand.Support = n
	cand.Score = int(Score(n, length))
	cand.ConfidenceFactors.Support = round4(float64(n) / float64(max(len(c.stamp), 1)))
	if cand.Safe() {
		cand.Confidence = Confidence(cand.ConfidenceFactors)
	}
}
