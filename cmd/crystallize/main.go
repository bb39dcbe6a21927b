// Command crystallize turns repeated agent traces into reviewed,
// replay-gated workflows. See internal/cli for the commands.
package main

import (
	"os"

	"github.com/crystallize-dev/crystallize/internal/cli"
)

func main() { os.Exit(cli.Main()) }
