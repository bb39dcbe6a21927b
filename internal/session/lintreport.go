package session

import "github.com/crystallize-dev/crystallize/internal/trace"

// LintReport is every problem of the session logs LintFiles read, file by
// file, as `crystallize session lint --json` prints it.
type LintReport struct {
	Files []LintFile `json:"files"`
}

// LintFile is one session log and its problems ([] for a clean one).
type LintFile struct {
	File     string        `json:"file"`
	Problems []LintProblem `json:"problems"`
}

// LintProblem is one problem: its line in the file and what is wrong.
type LintProblem struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// LintFiles lints each file in names (Lint), in order, and returns the
// report and every problem of every file; the error is only for a file
// that cannot be read.
func LintFiles(names []string) (*LintReport, trace.ErrorList, error) {
	var all trace.ErrorList
	report := &LintReport{Files: []LintFile{}}
	for _, name := range names {
		lf := LintFile{File: name, Problems: []LintProblem{}}
		list, err := Lint(name)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range list {
			lf.Problems = append(lf.Problems, LintProblem{Line: p.Line, Message: p.Msg})
		}
		all = append(all, list...)
		report.Files = append(report.Files, lf)
	}
	return report, all, nil
}
