package cli

import (
	"errors"
	"fmt"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/runtime"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// configFlagHelp documents --config on the commands that read agents'
// session logs.
const configFlagHelp = "project configuration whose [normalize] section extends how agents' tool calls are read (default ./" + runtime.ConfigFile + " when it exists)"

// agentRules returns the table that normalizes agents' tool calls: the
// built-in one, extended by the [normalize] section of config, or of
// ./crystallize.toml when config is empty and that file exists. Errors
// name the file and the TOML key path of each bad entry.
func agentRules(config string) (*normalize.Rules, error) {
	file := runtime.ConfigPath(config)
	if file == "" {
		return normalize.Default(), nil
	}
	cfg, err := runtime.LoadConfig(file)
	if err != nil {
		return nil, err
	}
	rules, err := normalize.Default().Extend(cfg.Normalize)
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
