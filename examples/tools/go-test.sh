#!/bin/sh
# go.test PACKAGES REPO_PATH: stands in for go test; reports the result the
# example traces recorded.
set -eu
. "$(dirname "$0")/lib.sh"
record go.test "$@"
printf '{"exit_code": 0, "failed": 0, "packages": 23}\n'
