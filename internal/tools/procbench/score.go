package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// The parts of mine's report.json the benchmark reads. They are declared
// here rather than imported so that the benchmark judges the report as a
// user's tool would: by its documented JSON, not by the miner's types.
type report struct {
	Candidates         []reportCandidate `json:"candidates"`
	RejectedCandidates []reportCandidate `json:"rejected_candidates"`
	SourceTraceCount   int               `json:"source_trace_count"`
	SkippedFiles       []json.RawMessage `json:"skipped_files"`
}

type reportCandidate struct {
	ID      string       `json:"id"`
	Name    string       `json:"name"`
	Support int          `json:"support"`
	Steps   []reportStep `json:"steps"`
}

type reportStep struct {
	Kind string   `json:"kind"`
	Name string   `json:"name"`
	Argv []string `json:"argv"`
}

func readReport(path string) (*report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// stepEvents reads a candidate's steps as the detector's events, with the
// same naming the detector applies to the logs, so that "the candidate's
// steps contain the procedure's heads in order" is the detector's own
// ordered-subsequence test run on the candidate.
func stepEvents(steps []reportStep) []Event {
	var evs []Event
	for _, s := range steps {
		evs = append(evs, traceEvents(s.Kind, s.Name, s.Argv)...)
	}
	return evs
}

// Candidate is one candidate of the report as the benchmark judges it.
type Candidate struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Safe  bool     `json:"safe"`
	Steps []string `json:"steps"`
	// Procedures are the named procedures whose steps occur in the
	// candidate's steps in order.
	Procedures []string `json:"procedures,omitempty"`
	// Partly are the named procedures the candidate holds all steps but
	// one of (see Procedure.OccursPartly); such a candidate is a near
	// miss, neither a match nor junk.
	Partly []string `json:"partly,omitempty"`
	// Junk says why an unnamed candidate is one nobody would want:
	// observations_only, edits_only, no_command, one_step_repeated; empty
	// for a candidate that matches a procedure or is merely unnamed.
	Junk string `json:"junk,omitempty"`
}

// judge matches every candidate of r against procs.
func judge(procs []Procedure, r *report) []Candidate {
	var out []Candidate
	add := func(rc reportCandidate, safe bool) {
		c := Candidate{ID: rc.ID, Name: rc.Name, Safe: safe}
		for _, s := range rc.Steps {
			c.Steps = append(c.Steps, s.Name)
		}
		evs := stepEvents(rc.Steps)
		for _, p := range procs {
			switch {
			case p.Occurs(evs):
				c.Procedures = append(c.Procedures, p.Name)
			case p.OccursPartly(evs):
				c.Partly = append(c.Partly, p.Name)
			}
		}
		if len(c.Procedures) == 0 && len(c.Partly) == 0 {
			c.Junk = junkClass(rc.Steps)
		}
		out = append(out, c)
	}
	for _, rc := range r.Candidates {
		add(rc, true)
	}
	for _, rc := range r.RejectedCandidates {
		add(rc, false)
	}
	return out
}

// junkClass names what makes a candidate's steps junk, or "".
func junkClass(steps []reportStep) string {
	if len(steps) == 0 {
		return ""
	}
	obs, edits, same := 0, 0, true
	for _, s := range steps {
		switch s.Kind {
		case "observation":
			obs++
		case "file_mutation":
			edits++
		}
		if s.Name != steps[0].Name {
			same = false
		}
	}
	switch {
	case obs == len(steps):
		return "observations_only"
	case edits == len(steps):
		return "edits_only"
	case obs+edits == len(steps):
		return "no_command"
	case same:
		return "one_step_repeated"
	}
	return ""
}

// ProcedureScore says whether mine found one named procedure.
type ProcedureScore struct {
	Procedure string `json:"procedure"`
	Steps     string `json:"steps"`
	Sessions  int    `json:"sessions"`
	// In lists the sessions (key and file) the procedure occurs in.
	In []string `json:"in"`
	// Eligible: the procedure occurs in at least min-examples sessions,
	// so a miner with that threshold could find it.
	Eligible bool `json:"eligible"`
	// Found names the candidates (safe or rejected) that contain it;
	// FoundSafe the safe ones.
	Found     []string `json:"found,omitempty"`
	FoundSafe []string `json:"found_safe,omitempty"`
	// Partly names the candidates that hold all its steps but one.
	Partly []string `json:"partly,omitempty"`
}

// Score is the benchmark's verdict on one directory.
type Score struct {
	Procedures   []ProcedureScore `json:"procedures"`
	Eligible     int              `json:"eligible"`
	Recalled     int              `json:"recalled"`
	RecalledSafe int              `json:"recalled_safe"`
	// Recall and RecallSafe are Recalled/Eligible and RecalledSafe/Eligible;
	// -1 when nothing is eligible.
	Recall        float64     `json:"recall"`
	RecallSafe    float64     `json:"recall_safe"`
	Candidates    int         `json:"candidates"`
	Safe          int         `json:"safe_candidates"`
	Matched       int         `json:"matched_candidates"`
	MatchedSafe   int         `json:"matched_safe_candidates"`
	Precision     float64     `json:"precision"`
	PrecisionSafe float64     `json:"precision_safe"`
	Junk          []Candidate `json:"junk"`
	// Unnamed are the candidates that are neither a named procedure nor
	// junk; near misses (Candidate.Partly) are among them.
	Unnamed []Candidate `json:"unnamed"`
	All     []Candidate `json:"candidate_list"`
}

func ratio(n, d int) float64 {
	if d == 0 {
		return -1
	}
	return float64(n) / float64(d)
}

// score combines the detector's counts with the judged candidates.
func score(det []Detection, cands []Candidate, minExamples int) Score {
	s := Score{Junk: []Candidate{}, Unnamed: []Candidate{}, All: cands}
	for _, d := range det {
		ps := ProcedureScore{Procedure: d.Procedure, Steps: d.Steps, Sessions: d.Sessions, In: d.In, Eligible: d.Sessions >= minExamples}
		if ps.In == nil {
			ps.In = []string{}
		}
		for _, c := range cands {
			for _, p := range c.Procedures {
				if p == d.Procedure {
					ps.Found = append(ps.Found, c.Name)
					if c.Safe {
						ps.FoundSafe = append(ps.FoundSafe, c.Name)
					}
				}
			}
			for _, p := range c.Partly {
				if p == d.Procedure {
					ps.Partly = append(ps.Partly, c.Name)
				}
			}
		}
		if ps.Eligible {
			s.Eligible++
			if len(ps.Found) > 0 {
				s.Recalled++
			}
			if len(ps.FoundSafe) > 0 {
				s.RecalledSafe++
			}
		}
		s.Procedures = append(s.Procedures, ps)
	}
	for _, c := range cands {
		s.Candidates++
		if c.Safe {
			s.Safe++
		}
		switch {
		case len(c.Procedures) > 0:
			s.Matched++
			if c.Safe {
				s.MatchedSafe++
			}
		case c.Junk != "":
			s.Junk = append(s.Junk, c)
		default:
			s.Unnamed = append(s.Unnamed, c)
		}
	}
	s.Recall = ratio(s.Recalled, s.Eligible)
	s.RecallSafe = ratio(s.RecalledSafe, s.Eligible)
	s.Precision = ratio(s.Matched, s.Candidates)
	s.PrecisionSafe = ratio(s.MatchedSafe, s.Safe)
	return s
}

// shortName keeps a candidate's name readable in a table: names derived
// from a long first prompt run to hundreds of characters.
func shortName(n string) string {
	if len(n) > 60 {
		return n[:57] + "..."
	}
	return strings.TrimSpace(n)
}
