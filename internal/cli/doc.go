// Package cli is the crystallize command tree: flags, exit codes and output
// formatting. It is the only package that reads the environment, talks to
// the terminal or exits; everything it does is done by the stage packages
// it imports.
//
// A command is a few lines of wiring: its help text in a const above the
// function that builds it, its flags, and a RunE that parses arguments,
// calls the library function of the stage that owns the work, and prints.
// Exit codes are 0 for success, 1 for a failure or a run that found
// nothing, 2 for a usage error; Main prints every error once, as
// "crystallize: <error>" on stderr. Human output may change; the --json
// output of every command is a contract, pinned by tests.
package cli
