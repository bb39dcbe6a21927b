package normalize

import (
	"path"
	"strings"
)

// programName is the name a command's first word runs, as the heads table
// and capabilities name programs: its base name, and for a program
// recorded on Windows (a path with backslashes or a drive letter, or a
// name ending in .exe, .cmd, .bat or .com) the base name without that
// extension, in lower case: C:\Program Files\Git\cmd\git.exe, git.EXE
// and npm.cmd are git, git and npm. windows reports whether the word was
// such a name, so that the argv template runs the program by that name
// (the same template whichever system recorded it) and the action says
// what was recorded.
func programName(w string) (name string, windows bool) {
	// A trailing separator names no other program (C:\tools\ is tools,
	// as path.Base makes dir/ dir): the base is taken from the path
	// without it, so that the name is never empty, which no action may be.
	trimmed := strings.TrimRight(w, `\/`)
	if trimmed == "" {
		return path.Base(w), false
	}
	base := trimmed
	if i := strings.LastIndexAny(trimmed, `\/`); i >= 0 {
		base = trimmed[i+1:]
	}
	lower := strings.ToLower(base)
	for _, ext := range windowsExts {
		if strings.HasSuffix(lower, ext) && len(lower) > len(ext) {
			return lower[:len(lower)-len(ext)], true
		}
	}
	if strings.ContainsRune(w, '\\') || hasDrive(w) {
		return base, true
	}
	return path.Base(w), false
}

// windowsExts are the extensions Windows runs a program by without them
// being typed; npm, npx, yarn and pnpm are .cmd shims there.
var windowsExts = []string{".exe", ".cmd", ".bat", ".com"}

// hasDrive reports whether w starts with a drive letter, C: or C:\.
func hasDrive(w string) bool {
	return len(w) >= 2 && w[1] == ':' && isLetter(w[0])
}

// powershells are the PowerShell programs whose -Command runs a script.
var powershells = wordSet(`powershell pwsh`)

// powershellScript returns the script of "powershell -NoProfile -Command
// SCRIPT" and its kin (pwsh, -c, the rest of the words joined as
// PowerShell joins them). A -File or an operand before the command is not
// unwrapped: the script is elsewhere.
func powershellScript(argv []string) (string, bool) {
	if len(argv) < 3 {
		return "", false
	}
	if prog, _ := programName(argv[0]); !powershells[prog] {
		return "", false
	}
	for i := 1; i < len(argv)-1; i++ {
		w := strings.ToLower(argv[i])
		if !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "/") {
			return "", false
		}
		switch strings.TrimLeft(w, "-/") {
		case "command", "c":
			return strings.Join(argv[i+1:], " "), true
		case "file", "f", "encodedcommand", "e", "ec":
			return "", false
		case "executionpolicy", "ep", "ex", "windowstyle", "w", "outputformat", "of", "o", "inputformat", "if", "workingdirectory", "wd":
			i++ // takes a value
		}
	}
	return "", false
}

// cmdletReadVerbs are the PowerShell verbs of cmdlets that only read or
// shape what they are given (Get-Content, Select-String, Test-Path,
// Measure-Object, Format-Table); readCmdlets are read-only cmdlets of other
// verbs. A cmdlet is Verb-Noun, its verb from PowerShell's approved list.
var (
	cmdletReadVerbs = wordSet(`get select test measure format compare find resolve search read`)
	readCmdlets     = wordSet(`out-string out-host out-null where-object sort-object group-object
		write-output write-host convertto-json convertfrom-json convertto-csv convertfrom-csv`)
)

// readOnlyCmdlet reports whether prog is a PowerShell cmdlet that changes
// nothing. PowerShell reads names in any case, but only a capitalised verb
// (Get-Content, Test-Path) is taken for a cmdlet: a lower-case
// find-duplicates or resolve-conflicts is far more often a project's own
// script, which may write. ForEach-Object is not one: its script block
// may do anything.
func readOnlyCmdlet(prog string) bool {
	if prog == "" || prog[0] < 'A' || prog[0] > 'Z' {
		return false
	}
	lower := strings.ToLower(prog)
	if readCmdlets[lower] {
		return true
	}
	verb, noun, ok := strings.Cut(lower, "-")
	return ok && noun != "" && cmdletReadVerbs[verb]
}
