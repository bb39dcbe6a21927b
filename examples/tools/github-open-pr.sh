#!/bin/sh
# github.open_pr REPO BRANCH TITLE: stands in for opening a pull request;
# the URL is under example.invalid.
set -eu
. "$(dirname "$0")/lib.sh"
# crystallize.toml passes "--" before the operands, so a value that starts
# with "-" is an operand, never an option.
if [ "${1-}" = "--" ]; then shift; fi
record github.open_pr "$@"
printf '{"number": 1, "state": "open", "url": "https://github.example.invalid/%s/pull/1"}\n' "$1"
