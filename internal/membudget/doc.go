// Package membudget bounds the heap a Starlark workflow may make grow:
// a run's memory budget (the runner's Options.MaxMemory, default
// DefaultMaxMemory), watched while the workflow runs, and the allocation
// guards that size what an operator or built-in will allocate and
// reserve it before it is allocated. A run over its budget fails with
// ErrMemoryBudget. The runner makes one Budget per run, rewrites the
// workflow's syntax with GuardOperators and gives it the Predeclared
// names of the Budget.
package membudget
