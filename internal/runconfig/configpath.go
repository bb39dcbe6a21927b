package runconfig

import (
	"errors"
	"fmt"
	"os"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/price"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// ConfigPath is the configuration file a caller reads: file when it is
// given, else ConfigFile in the working directory when it is there, else
// "" (no configuration). A ConfigFile that is there but cannot be looked
// at is still returned, so that reading it reports why.
func ConfigPath(file string) string {
	if file != "" {
		return file
	}
	if _, err := os.Stat(ConfigFile); errors.Is(err, os.ErrNotExist) {
		return ""
	}
	return ConfigFile
}

// NormalizeRules are the rules that read agents' tool calls for a project
// whose configuration is file (ConfigPath): the default table extended by
// its [normalize] section, or the default table alone without a
// configuration. A problem of the section is a trace.ErrorList naming
// file.
func NormalizeRules(file string) (*normalize.Rules, error) {
	file = ConfigPath(file)
	if file == "" {
		return normalize.Default(), nil
	}
	cfg, err := LoadConfig(file)
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

// PriceTable is the price table that prices the savings of workflows
// mined for a project whose configuration is file (ConfigPath): the
// built-in table (price.Default) with the [prices] section's entries over
// it, or the built-in table alone without a configuration.
func PriceTable(file string) (*price.Table, error) {
	file = ConfigPath(file)
	if file == "" {
		return price.Default(), nil
	}
	cfg, err := LoadConfig(file)
	if err != nil {
		return nil, err
	}
	return price.Default().With(cfg.Prices), nil
}
