package normalize

import (
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestClusteredWriteFlag checks that a write flag inside a cluster of
// short flags counts as given: sed -ni edits in place, sed -n only reads.
func TestClusteredWriteFlag(t *testing.T) {
	for cmd, want := range map[string]string{
		`sed -n 's/a/b/p' notes.txt`:             "observation",
		`sed -ni 's/a/b/p' notes.txt`:            "tool_call",
		`sort -uo out.txt in.txt`:                "tool_call",
		`sort -u in.txt`:                         "observation",
		`sed --in-place=.bak 's/a/b/' notes.txt`: "tool_call",
		`sort --output=out.txt in.txt`:           "tool_call",
	} {
		acts := Default().Actions(shell(cmd))
		if len(acts) != 1 || string(acts[0].Kind) != want {
			t.Errorf("Actions(%q): %d actions, first of kind %v; want one %s", cmd, len(acts), acts[0].Kind, want)
		}
	}
}

// TestKey checks how a flag or operand name becomes a parameter key:
// letters and digits stay, dashes and dots become "_", the rest goes.
func TestKey(t *testing.T) {
	for name, want := range map[string]string{
		"dry-run": "dry_run", "Z9": "Z9", "a0": "a0", "max.depth": "max_depth",
		"n~{}": "n", "[x]": "x", "@": "flag", "/:": "flag", "AZaz09": "AZaz09",
		"2": "n2", "9x": "n9x", "0": "n0",
	} {
		c := command{longNames: map[string]string{}, params: map[string]any{}}
		if got := c.key(name); got != want {
			t.Errorf("key(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestWordClasses checks the word shapes argv reading depends on at the
// edges of each range: a subcommand word and a cluster of letters.
func TestWordClasses(t *testing.T) {
	for w, want := range map[string]bool{
		"run": true, "Run": true, "z": true, "Z": true, "mod:tidy": true, "x.y_z-9": true, "a0": true, "a9": true,
		"": false, "9a": false, "_a": false, "a/b": false, "a b": false, "a@": false, "a[": false, "a{": false, "a`": false,
	} {
		if got := isSubcommand(w); got != want {
			t.Errorf("isSubcommand(%q) = %v, want %v", w, got, want)
		}
	}
	for s, want := range map[string]bool{
		"la": true, "AZaz": true, "": false, "l1": false, "l@": false, "l[": false, "l`": false, "l{": false,
	} {
		if got := isLetters(s); got != want {
			t.Errorf("isLetters(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestPatchMetadata checks what an apply_patch action records of the
// call: the shell command it came from, and the patch itself when it
// could not be read and no command says what ran.
func TestPatchMetadata(t *testing.T) {
	tests := []struct {
		name     string
		call     Call
		command  any
		unparsed bool
	}{
		{"from a shell", shell([]any{"apply_patch", "*** Begin Patch\n*** Add File: n.md\n+n\n*** End Patch\n"}),
			`apply_patch $'*** Begin Patch\n*** Add File: n.md\n+n\n*** End Patch\n'`, false},
		{"unreadable, as a tool", Call{Tool: "apply_patch", Args: P{"input": "*** Begin Patch\nnothing\n"}}, "*** Begin Patch\nnothing\n", true},
		{"unreadable, from a shell", shell([]any{"apply_patch", "*** Begin Patch\nnothing\n"}), `apply_patch $'*** Begin Patch\nnothing\n'`, true},
	}
	for _, tt := range tests {
		acts := Default().Actions(tt.call)
		if len(acts) != 1 {
			t.Fatalf("%s: %d actions, want 1", tt.name, len(acts))
		}
		md := acts[0].Metadata
		if md["command"] != tt.command || (md["unparsed"] == true) != tt.unparsed {
			t.Errorf("%s: metadata %q, want command %q and unparsed %v", tt.name, md, tt.command, tt.unparsed)
		}
	}
}

// TestHasDrive checks the drive letter a Windows path starts with.
func TestHasDrive(t *testing.T) {
	for w, want := range map[string]bool{
		`C:\Tools\go.exe`: true, "c:": true, "C:go": true,
		"C": false, "": false, "1:x": false, `\\server\x`: false, "CD:": false,
	} {
		if got := hasDrive(w); got != want {
			t.Errorf("hasDrive(%q) = %v, want %v", w, got, want)
		}
	}
}

// TestFilterThatWrites checks that sed, sort or awk after a pipe is a
// filter of the command before it only when it writes nothing.
func TestFilterThatWrites(t *testing.T) {
	for cmd, want := range map[string]int{
		`go test ./... | sort`:               1,
		`go test ./... | sort -o out.txt`:    2,
		`go test ./... | sed -n 1,5p`:        1,
		`go test ./... | sed -i s/a/b/ f`:    2,
		`go test ./... | awk -i inplace 1 f`: 2,
	} {
		if got := len(Default().Actions(shell(cmd))); got != want {
			t.Errorf("Actions(%q): %d actions, want %d", cmd, got, want)
		}
	}
}

// TestCatHeredocOnly checks that only a plain cat of a heredoc in $(…)
// is read as literal text: not with an assignment before it, and a
// substitution that is no simple command is no literal either.
func TestCatHeredocOnly(t *testing.T) {
	msg := func(cmd string) any {
		acts := Default().Actions(shell(cmd))
		if len(acts) == 0 {
			return nil
		}
		return acts[0].Parameters["message"]
	}
	if got := msg("git commit -m \"$(cat <<'EOF'\nFix the parser\nEOF\n)\""); got != "Fix the parser" {
		t.Errorf("cat heredoc message %q, want the literal text", got)
	}
	if got := msg("git commit -m \"$(LANG=C cat <<'EOF'\nFix the parser\nEOF\n)\""); got == "Fix the parser" {
		t.Errorf("cat heredoc after an assignment read as literal text %q", got)
	}
	for _, sub := range []string{
		"$(! cat <<'EOF'\nFix the parser\nEOF\n)",
		"$(cat <<'EOF' 2>/dev/null\nFix the parser\nEOF\n)",
		"$(cat <<'EOF' &\nFix the parser\nEOF\n)",
	} {
		if got := msg("git commit -m \"" + sub + "\""); got == "Fix the parser" {
			t.Errorf("%q read as literal text", sub)
		}
	}
	if got := msg("git commit -m \"$(if true; then echo x; fi)\""); got == "x" {
		t.Errorf("an if in $(…) read as literal text %q", got)
	}
}

// TestFilterRedirect checks that a command after a pipe that redirects
// its output to a file is no filter of the command before it: it writes.
func TestFilterRedirect(t *testing.T) {
	for cmd, want := range map[string]int{
		`go test ./... | grep -v ok`:                1,
		`go test ./... | grep -v ok 2>&1`:           1,
		`go test ./... | grep -v ok > failures.txt`: 2,
	} {
		if got := len(Default().Actions(shell(cmd))); got != want {
			t.Errorf("Actions(%q): %d actions, want %d", cmd, got, want)
		}
	}
}

// TestPatchMove checks that a patch that moves a file writes its new
// path too.
func TestPatchMove(t *testing.T) {
	acts := Default().Actions(Call{Tool: "apply_patch", Args: P{"input": "*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n@@\n-x\n+y\n*** End Patch\n"}})
	if len(acts) != 1 || !slices.ContainsFunc(acts[0].SideEffects, func(se trace.SideEffect) bool { return se.Target == "b.go" && se.Mutation == "add" }) {
		t.Errorf("moved file: %+v, want a write of b.go", acts)
	}
}

// TestScriptCacheNil checks that a nil script cache parses every script,
// as parse promises, instead of failing on the cache it lacks.
func TestScriptCacheNil(t *testing.T) {
	var none *scriptCache
	for _, src := range []string{"go test ./... && git add -A", "echo 'unterminated"} {
		want, wantErr := parseShell(src)
		got, err := none.parse(src)
		if (err != nil) != (wantErr != nil) || (got == nil) != (want == nil) {
			t.Errorf("nil cache parse(%q) = %v, %v; want %v, %v", src, got, err, want, wantErr)
		}
	}
}

// TestCountFlag checks that a dash and a number (git log -3, head -20) is
// a count, the parameter n, so that runs asking for other counts are one
// step with a value that varies, not different flags.
func TestCountFlag(t *testing.T) {
	for cmd, want := range map[string]string{"git log -3": "3", "head -20 README.md": "20"} {
		a := Default().Actions(shell(cmd))[0]
		if a.Parameters["n"] != want {
			t.Errorf("Actions(%q) parameters %v, want n = %s", cmd, a.Parameters, want)
		}
	}
}

// TestSedInPlaceWrites checks that sed is read-only only without its
// in-place flag, in each way it is spelled: --in-place, -i with a backup
// suffix, and -i in a cluster of short flags.
func TestSedInPlaceWrites(t *testing.T) {
	for cmd, want := range map[string]trace.Kind{
		`sed -n 1,5p f.txt`:           trace.KindObservation,
		`sed --in-place s/a/b/ f.txt`: trace.KindToolCall,
		`sed -i.bak s/a/b/ f.txt`:     trace.KindToolCall,
		`sed -ni s/a/b/p f.txt`:       trace.KindToolCall,
		`sed -e s/a/b/ -i f.txt`:      trace.KindToolCall,
	} {
		if a := Default().Actions(shell(cmd)); len(a) != 1 || a[0].Kind != want {
			t.Errorf("Actions(%q) = %+v, want one %s", cmd, a, want)
		}
	}
}

// TestGeminiReplaceOne checks that Gemini CLI's replace with one expected
// replacement edits one occurrence: only more than one is every
// occurrence.
func TestGeminiReplaceOne(t *testing.T) {
	for n, want := range map[float64]bool{1: false, 2: true} {
		a := Default().Actions(Call{Tool: "replace", Args: P{"file_path": "x.py", "old_string": "a", "new_string": "b", "expected_replacements": n}})[0]
		if got := a.Parameters["replace_all"] == true; got != want {
			t.Errorf("replace with expected_replacements %g: parameters %v, want replace_all %v", n, a.Parameters, want)
		}
	}
}

// TestExtendValueFlagsNames checks that a value_flags entry is named like
// any head, so that a misspelt one is reported instead of never matching.
func TestExtendValueFlagsNames(t *testing.T) {
	_, err := Default().Extend(Config{ValueFlags: map[string][]string{"a  b": {"x"}}})
	if err == nil || !strings.Contains(err.Error(), `normalize.value_flags["a  b"]`) {
		t.Errorf("Extend(value_flags with a bad head) = %v, want an error naming it", err)
	}
}

// TestVersionAndHelpProbes: a program run with nothing but a version or
// help flag prints and changes nothing, whatever the program, so it is
// an observation. Agents probe their tools this way at the start of a
// session (node --version && npm --version), and as tool calls the
// probes would be mined as a procedure. The same flag beside an operand
// or another flag, or a subcommand named version, is not a probe.
func TestVersionAndHelpProbes(t *testing.T) {
	for cmd, want := range map[string]string{
		`node --version`:                "observation",
		`npm -v`:                        "observation",
		`python3 -V`:                    "observation",
		`gh --help`:                     "observation",
		`terraform -h`:                  "observation",
		`'C:\tools\node.exe' --version`: "observation",
		`npm --version install`:         "tool_call",
		`npm version minor`:             "tool_call",
		`npm version`:                   "tool_call",
		`cargo --verbose --version`:     "tool_call",
		`make`:                          "tool_call",
		`node -e 'require("x")' -v`:     "tool_call",
	} {
		acts := Default().Actions(shell(cmd))
		if len(acts) != 1 || string(acts[0].Kind) != want {
			t.Errorf("Actions(%q): %d actions, first %+v; want one %s", cmd, len(acts), acts, want)
		}
	}
	acts := Default().Actions(shell(`node --version && npm --version`))
	if len(acts) != 2 || acts[0].Kind != trace.KindObservation || acts[1].Kind != trace.KindObservation {
		t.Errorf("node --version && npm --version = %+v; want two observations", acts)
	}
}
