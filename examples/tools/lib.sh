# Shared helpers of the stand-in tools. POSIX sh; sourced, not run.
#
# The stand-ins play the tools the example traces call (git, go, GitHub)
# without touching a real repository or network: each records its call in
# .stand-in/log under its working directory (the workspace root) and
# prints a JSON result shaped like the one in the traces.

# json_str prints $1 as a JSON string.
json_str() {
	printf '"'
	printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/	/\\t/g' | awk 'NR > 1 { printf "\\n" } { printf "%s", $0 }'
	printf '"'
}

# record appends the tool name and its arguments to .stand-in/log.
record() {
	mkdir -p .stand-in
	printf '%s' "$1" >>.stand-in/log
	shift
	for a in "$@"; do
		printf ' %s' "$(json_str "$a")" >>.stand-in/log
	done
	printf '\n' >>.stand-in/log
}
