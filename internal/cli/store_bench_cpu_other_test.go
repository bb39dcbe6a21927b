//go:build !unix

package cli

import "time"

// processCPU is not measured here: the benchmark reports CPU as 0.
func processCPU() time.Duration { return 0 }
