package cli

import (
	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// configFlagHelp documents --config on the commands that read agents'
// session logs.
const configFlagHelp = "project configuration whose [normalize] section extends how agents' tool calls are read (default ./" + runconfig.ConfigFile + " when it exists)"

// mineConfigFlagHelp documents --config on mine, which also prices.
const mineConfigFlagHelp = "project configuration whose [normalize] section extends how agents' tool calls are read and whose [prices] section prices models the built-in table does not (default ./" + runconfig.ConfigFile + " when it exists)"

// agentRules is the table that normalizes agents' tool calls for the
// --config of mine and import (pipeline.NormalizeRules).
func agentRules(config string) (*normalize.Rules, error) { return pipeline.NormalizeRules(config) }
