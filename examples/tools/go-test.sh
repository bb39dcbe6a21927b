#!/bin/sh
# go.test PACKAGES REPO_PATH: stands in for go test; reports the result the
# example traces recorded.
set -eu
. "$(dirname "$0")/lib.sh"
# crystallize.toml passes "--" before the operands, so a value that starts
# with "-" is an operand, never an option.
if [ "${1-}" = "--" ]; then shift; fi
record go.test "$@"
printf '{"exit_code": 0, "failed": 0, "packages": 23}\n'
