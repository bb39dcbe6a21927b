package runconfig

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
)

// TestBundleMarkers pins the copies of bundle's manifest name and schema
// marker that BundleOf looks for: the configuration does not import
// bundle, and a bundle it no longer recognised would let a bundle ship
// the configuration that binds its own tools.
func TestBundleMarkers(t *testing.T) {
	if bundleManifestFile != bundle.ManifestFile || bundleSchema != bundle.Schema {
		t.Errorf("runconfig looks for %s with schema %q; a bundle is %s with %q", bundleManifestFile, bundleSchema, bundle.ManifestFile, bundle.Schema)
	}
}
