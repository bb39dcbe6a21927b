package normalize

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// signature is a step's mining signature: kind, name and sorted keys.
func signature(a trace.Action) string {
	keys := make([]string, 0, len(a.Parameters))
	for k := range a.Parameters {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return string(a.Kind) + ":" + a.Name + ":" + strings.Join(keys, ",")
}

// TestVariadicOperands checks that a command's operands are one list
// parameter, so that the same command on one file or on many has one
// signature, and that the argv template gives the argv back.
func TestVariadicOperands(t *testing.T) {
	same := [][]string{
		// A flag that selects the files (-A, -u) is one of them.
		{"git add go.mod", "git add go.mod go.sum", "git add a b c d e f g h", "git add -- x y", "git add -A", "git add --all", "git add -u src"},
		{"rm -rf dist", "rm -rf dist build node_modules/.cache"},
		{"make build", "make lint test"},
		{"npm install left-pad react", "npm install a b c"},
		{"go test ./...", "go test ./internal/a ./internal/b"},
	}
	for _, cmds := range same {
		var first string
		for _, cmd := range cmds {
			a := Default().Actions(shell(cmd))[0]
			s := signature(a)
			if first == "" {
				first = s
			}
			if s != first {
				t.Errorf("signature(%q) = %s, want %s as for %q", cmd, s, first, cmds[0])
			}
			if got := expandTemplate(t, a.Metadata["argv"].([]any), a.Parameters); !slices.Equal(got, strings.Fields(cmd)) {
				t.Errorf("template of %q gives %q", cmd, got)
			}
		}
	}
	tests := []struct {
		cmd    string
		params map[string]any
		argv   []any
	}{
		{"git add a.go b.go", P{"paths": L("a.go", "b.go")}, argv("git", "add", "{paths...}")},
		{"mkdir -p a/b c", P{"p": true, "paths": L("a/b", "c")}, argv("mkdir", "-p", "{paths...}")},
		{"git commit -m msg a.go b.go", P{"message": "msg", "paths": L("a.go", "b.go")}, argv("git", "commit", "-m", "{message}", "{paths...}")},
		// Fixed operand names stay; extra operands go to the list.
		{"git push origin main --force", P{"remote": "origin", "branch": "main", "force": true}, argv("git", "push", "{remote}", "{branch}", "--force")},
		{"git push origin main extra", P{"remote": "origin", "branch": "main", "args": L("extra")}, argv("git", "push", "{remote}", "{branch}", "{args...}")},
		// One module@version is split as before; several are a list.
		{"go get golang.org/x/net@v0.33.0", P{"module": "golang.org/x/net", "version": "v0.33.0"}, argv("go", "get", "{module}@{version}")},
		{"go get a@v1 b@v2", P{"modules": L("a@v1", "b@v2")}, argv("go", "get", "{modules...}")},
		{"npm install left-pad", P{"package": "left-pad"}, argv("npm", "install", "{package}")},
		{"git cherry-pick abc def", P{"commits": L("abc", "def")}, argv("git", "cherry-pick", "{commits...}")},
		// Operands on both sides of a flag are two lists, in order.
		{"ls a -l b", P{"l": true, "paths": L("a"), "paths_2": L("b")}, argv("ls", "{paths...}", "-l", "{paths_2...}")},
		// A literal that looks like a list placeholder is escaped.
		{"echo {x...}", P{"args": L("{x...}")}, argv("echo", "{args...}")},
	}
	for _, tt := range tests {
		a := Default().Actions(shell(tt.cmd))[0]
		if diff := cmp.Diff(tt.params, a.Parameters); diff != "" {
			t.Errorf("Actions(%q) parameters (-want +got):\n%s", tt.cmd, diff)
		}
		if diff := cmp.Diff(tt.argv, a.Metadata["argv"]); diff != "" {
			t.Errorf("Actions(%q) argv (-want +got):\n%s", tt.cmd, diff)
		}
	}
}

// TestWindowsPrograms checks that a program recorded on Windows is named
// as elsewhere, runs by that name, says what was recorded, and keeps its
// operands' backslashes.
func TestWindowsPrograms(t *testing.T) {
	tests := []struct {
		argv    []any
		name    string
		program any
		tmpl    []any
	}{
		{argv(`C:\Program Files\Git\cmd\git.exe`, "add", `src\main.go`), "git add", `C:\Program Files\Git\cmd\git.exe`, argv("git", "add", "{paths...}")},
		{argv("python.exe", "-m", "pytest", "-q"), "python -m pytest", "python.exe", argv("python", "-m", "pytest", "-q")},
		{argv("npm.cmd", "run", "build"), "npm run build", "npm.cmd", argv("npm", "run", "build")},
		{argv("Git.EXE", "status"), "git status", "Git.EXE", argv("git", "status")},
		{argv("/usr/bin/git", "add", "x"), "git add", nil, argv("/usr/bin/git", "add", "{paths...}")},
		// A drive alone, or backslashes alone, say Windows.
		{argv(`C:/Go/bin/go`, "vet", "./..."), "go vet", `C:/Go/bin/go`, argv("go", "vet", "{args...}")},
		{argv(`.\node_modules\.bin\eslint`, "src"), "eslint", `.\node_modules\.bin\eslint`, argv("eslint", "{paths...}")},
		// A path that ends in a separator still names a program: an
		// action must have a name, or the trace does not read back.
		{argv(`C:\tools\bin\`, "x"), "bin", `C:\tools\bin\`, argv("bin", "{args...}")},
	}
	for _, tt := range tests {
		a := Default().Actions(Call{ID: "w", Tool: "shell", Args: P{"command": tt.argv}})[0]
		if a.Name != tt.name || a.Metadata["program"] != tt.program {
			t.Errorf("Actions(%q) = %s, program %v; want %s, program %v", tt.argv, a.Name, a.Metadata["program"], tt.name, tt.program)
		}
		if diff := cmp.Diff(tt.tmpl, a.Metadata["argv"]); diff != "" {
			t.Errorf("Actions(%q) argv (-want +got):\n%s", tt.argv, diff)
		}
	}
	a := Default().Actions(Call{ID: "w", Tool: "shell", Args: P{"command": argv(`C:\Git\git.exe`, "add", `src\a.go`, `src\b.go`)}})[0]
	if diff := cmp.Diff(P{"paths": L(`src\a.go`, `src\b.go`)}, a.Parameters); diff != "" {
		t.Errorf("Windows operands (-want +got):\n%s", diff)
	}
	if !slices.Equal(a.Capabilities, []string{"exec:git"}) {
		t.Errorf("capabilities = %v, want [exec:git]", a.Capabilities)
	}
}

// TestPowerShell checks that PowerShell's read-only cmdlets are
// observations, in the PowerShell tool and inside powershell -Command,
// and that a cmdlet that writes is a step.
func TestPowerShell(t *testing.T) {
	tests := []struct {
		call Call
		want []string // kind:name of each action
	}{
		{Call{Tool: "PowerShell", Args: P{"command": "Get-Content README.md | Select-String TODO"}}, []string{"observation:Get-Content"}},
		{Call{Tool: "PowerShell", Args: P{"command": "Test-Path build; Get-ChildItem -Recurse src"}}, []string{"observation:Test-Path", "observation:Get-ChildItem"}},
		{Call{Tool: "PowerShell", Args: P{"command": "Set-Content -Path VERSION -Value 1.2.0"}}, []string{"tool_call:Set-Content"}},
		{Call{Tool: "PowerShell", Args: P{"command": "git add a.go; Remove-Item -Recurse dist"}}, []string{"tool_call:git add", "tool_call:Remove-Item"}},
		{Call{Tool: "Bash", Args: P{"command": `powershell -NoProfile -Command "Get-Content x.txt"`}}, []string{"observation:Get-Content"}},
		{Call{Tool: "Bash", Args: P{"command": `pwsh -c "Measure-Object -Line x.txt"`}}, []string{"observation:Measure-Object"}},
		{Call{Tool: "shell", Args: P{"command": argv("powershell.exe", "-ExecutionPolicy", "Bypass", "-Command", "Get-Process | Format-Table")}}, []string{"observation:Get-Process"}},
		{Call{Tool: "shell", Args: P{"command": argv("powershell.exe", "-File", "build.ps1")}}, []string{"tool_call:powershell"}},
		{Call{Tool: "Bash", Args: P{"command": `pwsh -c "Get-Item x | Remove-Item"`}}, []string{"observation:Get-Item", "tool_call:Remove-Item"}},
		// A lower-case verb-noun is a project's script, not a cmdlet.
		{Call{Tool: "Bash", Args: P{"command": "resolve-conflicts --all"}}, []string{"tool_call:resolve-conflicts"}},
		{Call{Tool: "PowerShell", Args: P{"command": "GET-CHILDITEM"}}, []string{"observation:GET-CHILDITEM"}},
	}
	for _, tt := range tests {
		var got []string
		for _, a := range Default().Actions(tt.call) {
			got = append(got, string(a.Kind)+":"+a.Name)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Actions(%v) = %q, want %q", tt.call.Args["command"], got, tt.want)
		}
	}
}
