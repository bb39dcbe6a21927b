#!/bin/sh
# git.create_branch BRANCH REPO_PATH: stands in for git checkout -b.
set -eu
. "$(dirname "$0")/lib.sh"
# crystallize.toml passes "--" before the operands, so a value that starts
# with "-" is an operand, never an option.
if [ "${1-}" = "--" ]; then shift; fi
record git.create_branch "$@"
printf '%s\n' "$1" >.stand-in/branch
printf '{"base": "main", "branch": %s}\n' "$(json_str "$1")"
