package harness

// Memory keeps what runs taught: anti-patterns from blocking failures,
// lessons from gates that hold. A lesson is retained only from a run
// whose gates passed, matures from candidate to established to proven as
// evidence repeats, and decays a level each time decayRuns runs go by
// without new evidence, so stale knowledge fades unless revalidated.
//
// These lessons are tallies of the ledger's runs and live in the ledger:
// deleting it resets them, and running the harness again rebuilds them.
// What must outlast the ledger, a lesson a person decided to keep, is a
// memory of package memory, in its own file, and a failed gate proposes
// one (ProposeMemories) rather than writing it.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// Kinds of memory entries.
const (
	KindLesson      = "lesson"
	KindAntiPattern = "anti_pattern"
)

// Maturity levels, lowest first.
const (
	MaturityDecayed     = "decayed"
	MaturityCandidate   = "candidate"
	MaturityEstablished = "established"
	MaturityProven      = "proven"
)

// Evidence thresholds: the count of runs that showed a lesson for it to
// be established or proven, and the runs without evidence after which
// it decays a level.
const (
	establishedAt = 3
	provenAt      = 5
	decayRuns     = 5
)

// Lesson is a retained lesson or anti-pattern with links to the runs
// that showed it.
type Lesson struct {
	ID       string         `json:"id"`
	Kind     string         `json:"kind"`
	Subject  string         `json:"subject"`
	Text     string         `json:"text"`
	Maturity string         `json:"maturity"`
	Count    int            `json:"count"`
	LastSeq  int64          `json:"lastSeq"`
	Evidence []EvidenceLink `json:"evidence"`
}

// EvidenceLink points at a run and its report.
type EvidenceLink struct {
	RunID      string `json:"runId"`
	ReportPath string `json:"reportPath"`
}

// maxEvidence bounds the links kept per lesson: the newest ones.
const maxEvidence = 10

// Memory is where lessons live; the store is one backend, and an
// external memory service can be another.
type Memory interface {
	Lessons(ctx context.Context, project string) ([]Lesson, error)
	Put(ctx context.Context, project string, l Lesson) error
}

// StoreMemory keeps lessons in the local database.
type StoreMemory struct{ DB *store.DB }

// Lessons implements Memory.
func (s StoreMemory) Lessons(ctx context.Context, project string) ([]Lesson, error) {
	rows, err := s.DB.Lessons(ctx, project)
	if err != nil {
		return nil, err
	}
	list := []Lesson{}
	for _, r := range rows {
		var l Lesson
		if err := json.Unmarshal([]byte(r.Body), &l); err != nil {
			return nil, err
		}
		list = append(list, l)
	}
	return list, nil
}

// Put implements Memory.
func (s StoreMemory) Put(ctx context.Context, project string, l Lesson) error {
	body, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return s.DB.PutLesson(ctx, store.LessonRow{ID: l.ID, ProjectHash: project, Body: string(body)})
}

func maturity(count int) string {
	switch {
	case count >= provenAt:
		return MaturityProven
	case count >= establishedAt:
		return MaturityEstablished
	}
	return MaturityCandidate
}

var levels = []string{MaturityDecayed, MaturityCandidate, MaturityEstablished, MaturityProven}

// Retain updates memory with run seq's evidence: every failing blocking
// gate or case reinforces an anti-pattern; when the run passed, every
// passing blocking gate and case reinforces a lesson. Entries without
// evidence for decayRuns runs drop a level.
func Retain(ctx context.Context, mem Memory, project string, seq int64, rep *RunReport) error {
	existing, err := mem.Lessons(ctx, project)
	if err != nil {
		return err
	}
	byID := map[string]*Lesson{}
	for i := range existing {
		byID[existing[i].ID] = &existing[i]
	}
	touched := map[string]bool{}
	link := EvidenceLink{RunID: rep.RunID, ReportPath: rep.ReportPath}
	reinforce := func(kind, subject, text string) {
		id := kind + ":" + subject
		l := byID[id]
		if l == nil {
			l = &Lesson{ID: id, Kind: kind, Subject: subject}
			byID[id] = l
		}
		l.Text = text
		l.Count++
		l.LastSeq = seq
		l.Maturity = maturity(l.Count)
		l.Evidence = append(l.Evidence, link)
		if len(l.Evidence) > maxEvidence {
			l.Evidence = l.Evidence[len(l.Evidence)-maxEvidence:]
		}
		touched[id] = true
	}
	for _, g := range rep.Gates {
		switch {
		case g.NotEvidence:
			// A gate that checked nothing teaches nothing.
		case g.Blocks && !g.Passed:
			why := fmt.Sprintf("exit %d", g.ExitCode)
			if g.TimedOut {
				why = "timed out"
			}
			if line := lastLine(g.Tail); line != "" {
				why += ": " + line
			}
			reinforce(KindAntiPattern, "gate/"+g.ID, "gate "+g.ID+" fails ("+why+")")
		case g.Blocks && rep.Passed:
			reinforce(KindLesson, "gate/"+g.ID, "gate "+g.ID+" ("+g.Command+") holds")
		}
	}
	for _, s := range rep.Suites {
		for _, c := range s.Cases {
			subject := "case/" + s.ID + "/" + c.ID
			switch {
			case c.Blocking && !c.Passed:
				msg := ""
				for _, r := range c.Results {
					if r.Blocking && !r.Passed {
						msg = r.Type + ": " + r.Message
						break
					}
				}
				reinforce(KindAntiPattern, subject, "case "+s.ID+"/"+c.ID+" fails: "+msg)
			case c.Blocking && rep.Passed:
				reinforce(KindLesson, subject, "case "+s.ID+"/"+c.ID+" holds")
			}
		}
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		l := byID[id]
		if !touched[id] {
			if seq-l.LastSeq < decayRuns || l.Maturity == MaturityDecayed {
				continue
			}
			// Decay one level and restart the window, so an unproven entry
			// fades one step per decayRuns quiet runs.
			if i := slices.Index(levels, l.Maturity); i > 0 {
				l.Maturity = levels[i-1]
			}
			l.LastSeq = seq
		}
		if err := mem.Put(ctx, project, *l); err != nil {
			return err
		}
	}
	return nil
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
