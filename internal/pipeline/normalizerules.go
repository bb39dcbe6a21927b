package pipeline

import (
	"errors"
	"fmt"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// NormalizeRules are the rules that read agents' tool calls for a project
// whose configuration is file (runconfig.ConfigPath): the default table
// extended by its [normalize] section, or the default table alone without
// a configuration. A problem of the section is a trace.ErrorList naming
// file and the entry's key path (normalize.observations[0]).
//
// It lives here, above both the configuration and normalize, because
// runconfig is read by the runtime too and so imports no stage that
// reads agents' logs; every command that reads them takes its rules from
// here.
func NormalizeRules(file string) (*normalize.Rules, error) {
	file = runconfig.ConfigPath(file)
	if file == "" {
		return normalize.Default(), nil
	}
	cfg, err := runconfig.LoadConfig(file)
	if err != nil {
		return nil, err
	}
	// The section is normalize.Config field for field; the conversion
	// stops compiling when they diverge (see runconfig.NormalizeSection).
	rules, err := normalize.Default().Extend(normalize.Config(cfg.Normalize))
	if err != nil {
		var list trace.ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				e.File = file
			}
			return nil, list
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return rules, nil
}
