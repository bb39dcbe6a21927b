package proc

import (
	"slices"
	"strings"
)

// BaseEnv lists the environment variables a program started on behalf
// of a workflow or a harness gets from the environment it was started
// in; every other variable, tokens and credentials among them (a judge's
// API key, GH_TOKEN, AWS_SECRET_ACCESS_KEY), is dropped unless the caller
// names it. The list is what common programs need to find each other,
// their configuration and a temporary directory, to pick a locale and a
// time zone; on Windows, what the system needs to start a process.
var BaseEnv = []string{
	"HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LOGNAME",
	"PATH", "TMPDIR", "TZ", "USER",
	"COMSPEC", "PATHEXT", "SYSTEMROOT", "TEMP", "TMP", "USERPROFILE",
}

// Environ returns the variables of environ ("KEY=value" entries) named
// in BaseEnv or in pass, in environ's order. It is never nil, so that an
// exec.Cmd given it does not fall back to the whole environment.
func Environ(environ, pass []string) []string {
	env := []string{}
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if ok && (slices.Contains(BaseEnv, k) || slices.Contains(pass, k)) {
			env = append(env, kv)
		}
	}
	return env
}
