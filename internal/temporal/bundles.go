package temporal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/runner"
)

// LoadBundles loads the bundles a worker serves: each of dirs is a bundle
// directory (it holds candidate.json) or a directory of them. Every
// problem is reported, grouped in one error, and a bundle that is not
// ready is one: a worker serves approved workflows only.
func LoadBundles(dirs []string) ([]*runner.Workflow, error) {
	var out []*runner.Workflow
	var errs []error
	add := func(dir string) {
		w, err := runner.Load(dir)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !w.Ready():
			why := fmt.Errorf("%w: %s", runner.ErrNotReady, dir)
			if w.Readiness != nil {
				why = w.Readiness.Err()
			}
			errs = append(errs, fmt.Errorf("refusing to serve %s: %w", dir, why))
		default:
			out = append(out, w)
		}
	}
	for _, dir := range dirs {
		if isBundle(dir) {
			add(dir)
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading bundles: %w", err))
			continue
		}
		var found []string
		for _, e := range entries {
			if sub := filepath.Join(dir, e.Name()); e.IsDir() && isBundle(sub) {
				found = append(found, sub)
			}
		}
		if len(found) == 0 {
			errs = append(errs, fmt.Errorf("%s: neither a bundle (no %s) nor a directory of bundles", dir, bundle.ManifestFile))
		}
		sort.Strings(found)
		for _, sub := range found {
			add(sub)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func isBundle(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, bundle.ManifestFile))
	return err == nil && fi.Mode().IsRegular()
}
