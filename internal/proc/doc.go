// Package proc answers whether a process recorded by its id still runs:
// the trace store asks it of imports and the registry of runs and
// sessions, which both record the process that owns a row so that a
// process killed without cleaning up does not leave its row live. It
// also says which environment a program started on a user's behalf
// inherits (Environ): the runtime's commands and the harness's gates
// share one list. And it ends what a command leaves behind: Run starts a
// command in a process group of its own and kills what is left of the
// group when the command returns, so that nothing a tool call or a gate
// started outlives it.
package proc

// Running reports whether the process recorded as pid, started at start
// (Start, "" when it was not known), still runs. A live process whose
// start differs is another one that reused the id. A start that cannot
// be read now (the process ended between the two looks, or the system
// does not say) proves nothing: the id decides, as without a recorded
// start.
func Running(pid int, start string) bool {
	if !Alive(pid) {
		return false
	}
	if start == "" {
		return true
	}
	now := Start(pid)
	return now == "" || now == start
}
