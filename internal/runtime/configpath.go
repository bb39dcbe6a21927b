package runtime

import (
	"errors"
	"os"
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
