#!/bin/sh
# git.commit MESSAGE REPO_PATH: stands in for git commit -am MESSAGE; the
# commit id is a checksum of the message.
set -eu
. "$(dirname "$0")/lib.sh"
# crystallize.toml passes "--" before the operands, so a value that starts
# with "-" is an operand, never an option.
if [ "${1-}" = "--" ]; then shift; fi
record git.commit "$@"
printf '%s\n' "$1" >>.stand-in/commits
sum=$(printf '%s' "$1" | cksum | cut -d ' ' -f 1)
printf '{"commit": "%010d"}\n' "$sum"
