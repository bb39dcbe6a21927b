#!/bin/sh
# git.create_branch BRANCH REPO_PATH: stands in for git checkout -b.
set -eu
. "$(dirname "$0")/lib.sh"
record git.create_branch "$@"
printf '%s\n' "$1" >.stand-in/branch
printf '{"base": "main", "branch": %s}\n' "$(json_str "$1")"
