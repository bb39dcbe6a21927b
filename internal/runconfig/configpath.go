package runconfig

import (
	"errors"
	"os"

	"github.com/crystallize-dev/crystallize/internal/price"
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
