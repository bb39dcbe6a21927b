package cli

import (
	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/session"
)

// Resuming a workflow run from its session log.
//
// crystallize run records every run in <state-dir>/runs/<run-id>/ as
// session.md, and a run suspended at an approval also as journal.json,
// from which the runtime continues it. For such a log "session resume"
// means what it says: the run itself continues, through the same code as
// "crystallize resume RUN-ID", with the state directory taken from the
// log's path. A context pack is for an agent picking up work by hand, so
// it stays the answer for a run that failed or was cancelled; a run that
// completed or was rejected has nothing left to resume.

// resumeRun continues the run whose session log s, read from name, is,
// when it is one that can be continued or has ended for good. handled is
// false when the log is to be answered with a context pack instead: it is
// not a run's log, or the run failed without being suspended. f holds the
// --approve, --reject, --config and --json of session resume; phase is
// its --phase, which only a context pack can honour.
func resumeRun(cmd *cobra.Command, e *env, f *resumeFlags, name string, s *session.Session, phase string) (handled bool, err error) {
	decided := len(f.approve)+len(f.reject) > 0
	r, err := runner.OpenRunLog(name, s)
	switch {
	case err != nil:
		return true, err
	case r == nil:
		if decided {
			return true, usagef("--approve and --reject decide the approval a crystallize run waits for; %s is not the session.md of a run (<state-dir>/runs/<run-id>/session.md)", name)
		}
		return false, nil
	case r.Journal == nil:
		if decided {
			return true, usagef("run %s is %s and was never suspended at an approval; there is nothing to --approve or --reject", r.RunID, r.Status)
		}
		return false, nil
	}
	id := r.RunID
	if phase != "" {
		return true, usagef("--phase chooses where a context pack resumes; run %s continues at its pending approval", id)
	}
	f.stateDir = r.StateDir
	return true, runResume(cmd, e, f, id)
}
