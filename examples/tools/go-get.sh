#!/bin/sh
# go.get MODULE VERSION REPO_PATH: stands in for go get MODULE@VERSION by
# adding a require line to the workspace's go.mod.
set -eu
. "$(dirname "$0")/lib.sh"
# crystallize.toml passes "--" before the operands, so a value that starts
# with "-" is an operand, never an option.
if [ "${1-}" = "--" ]; then shift; fi
record go.get "$@"
printf 'require %s %s\n' "$1" "$2" >>go.mod
printf '{"from": "v0.0.0", "module": %s, "to": %s}\n' "$(json_str "$1")" "$(json_str "$2")"
