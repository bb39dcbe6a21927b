#!/bin/sh
# go.mod_tidy REPO_PATH: stands in for go mod tidy.
set -eu
. "$(dirname "$0")/lib.sh"
record go.mod_tidy "$@"
touch go.sum
printf '{"exit_code": 0}\n'
