package cli

import (
	"errors"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runner"
)

// The flags several commands share, registered in one place so that a
// flag means, defaults to and is described the same wherever it appears.

// runStateDirFlag registers --state-dir for the commands that record
// runs (run, plan run, resume, serve mcp).
func runStateDirFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "state-dir", runner.DefaultStateDir, "directory runs are recorded under (<dir>/runs/<run-id>)")
}

// registryStateDirFlag registers --state-dir for the commands that read
// the registry of live sessions (sessions, status).
func registryStateDirFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "state-dir", runner.DefaultStateDir, "the state directory whose registry to read (<dir>/"+registry.DBFile+")")
}

// configFlag registers --config, the project configuration, defaulting
// to ./crystallize.toml (projectConfig reads it).
func configFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "config", "", "project configuration (default ./"+runconfig.ConfigFile+" when it exists)")
}

// summaryJSONFlag registers --json for a command that prints a summary
// of what it did.
func summaryJSONFlag(fs *pflag.FlagSet, p *bool) {
	fs.BoolVar(p, "json", false, "print the summary as JSON on stdout")
}

// resultJSONFlag registers --json for a command that prints a result.
func resultJSONFlag(fs *pflag.FlagSet, p *bool) {
	fs.BoolVar(p, "json", false, "print the result as JSON")
}

// runOptions are the runtime options every command that runs a workflow
// on behalf of a person shares (run, plan run, resume): the project's
// configuration and tools, the terminal for approvals, the process's
// environment, the state directory, the run log on stderr and the live
// registration. The caller adds what is its own.
func runOptions(cmd *cobra.Command, e *env, cfg *runconfig.Config, stateDir string, live *registry.Live) runner.Options {
	environ := os.Environ()
	return runner.Options{
		Config:   cfg,
		Tools:    runner.InprocTools(cfg, environ),
		Prompter: stdinPrompter(cmd, e),
		Getenv:   e.getenv,
		Environ:  environ,
		StateDir: stateDir,
		Log:      e.stderr,
		OnStart:  live.Start,
		Inbox:    live.Inbox,
	}
}

// flagError is a usage error for a flag whose value a library refused:
// the flag's name, then the library's words for what is wrong with the
// value (the Problem of mine.OptionError and the like), or its error.
func flagError(flag string, err error) error {
	var p interface{ Problem() string }
	if errors.As(err, &p) {
		return usagef("%s %s", flag, p.Problem())
	}
	return usagef("%s: %v", flag, err)
}
