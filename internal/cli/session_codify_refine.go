package cli

import (
	"errors"
	"fmt"

	"github.com/crystallize-dev/crystallize/internal/codify"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// newRefiner returns the refiner of --refine, turning what codify says
// about the configuration into the flag's errors: no model, or a model
// entry that names no usable provider, is a usage error.
func newRefiner(cfg *runconfig.Config, getenv func(string) string) (*codify.Refiner, error) {
	ref, err := codify.NewRefiner(cfg, getenv, nil)
	var me *codify.ModelError
	switch {
	case errors.Is(err, codify.ErrNoModel):
		return nil, usagef("--refine needs a model: configure [models.refine] or [models.default] in %s (or name a file with --config)", runconfig.ConfigFile)
	case errors.As(err, &me):
		return nil, usagef("--refine: %v", err)
	case err != nil:
		return nil, fmt.Errorf("--refine: %w", err)
	}
	return ref, nil
}
