package codegen

import (
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// maxPlainFileName is the longest name FileName keeps as it is; a longer
// one is shortened. Far below the 255 bytes most file systems allow, so
// that a suffix and an extension always fit.
const maxPlainFileName = 100

// maxFileNameStem is how much of a shortened name's readable stem
// FileName keeps before the hash that keeps it distinct.
const maxFileNameStem = 40

// FileName returns s as a single path element that is safe to create on
// every common file system, for a name that came from input: a candidate
// name (a goal or a tool name turned into an identifier, perhaps
// redacted), a trace id. Every file a stage names after such a value is
// named through it, so one rule decides what a hostile name can do.
//
// A name that is already plain (1 to 100 bytes of ASCII letters, digits,
// ".", "_" and "-", not starting with "." or "-", not ending with ".",
// and not a Windows device name such as CON or lpt1.json) is returned as
// it is, so ordinary names read the same on disk. Any other name becomes
// its lower-case ASCII words joined by "-", cut to 40 bytes, then "-" and
// 12 hex digits of its SHA-256, or fallback and the hash when it has no
// ASCII letter or digit: "../x" is "x-<hash>", a 300-character name 53
// bytes, "日本" "<fallback>-<hash>". The result never contains a path
// separator, NUL or "..", never starts with a dot, and distinct inputs
// that are not plain get distinct names but for a hash collision.
// Callers writing several files still compare the results case-blind:
// "A" and "a" are both plain and one file on a case-insensitive system.
func FileName(s, fallback string) string {
	if plainFileName(s) {
		return s
	}
	hash := strings.TrimPrefix(candidate.SkillID(s, ""), "skill_")[:12]
	name := candidate.Slug(s)
	if len(name) > maxFileNameStem {
		name = strings.TrimRight(name[:maxFileNameStem], "-")
	}
	if name == "" {
		name = candidate.Slug(fallback)
		if name == "" {
			name = "file"
		}
	}
	return name + "-" + hash
}

// plainFileName reports whether FileName keeps s as it is.
func plainFileName(s string) bool {
	if s == "" || len(s) > maxPlainFileName || s[0] == '.' || s[0] == '-' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isASCIILetter(c) && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return !windowsDevice(s)
}

// windowsDevice reports whether Windows takes the file name s for a
// device (CON, PRN, AUX, NUL, COM0–COM9, LPT0–LPT9, in any case and
// with any extension): creating "nul.star" there writes nowhere.
func windowsDevice(s string) bool {
	base, _, _ := strings.Cut(strings.ToLower(s), ".")
	switch base {
	case "con", "prn", "aux", "nul":
		return true
	}
	return len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) && '0' <= base[3] && base[3] <= '9'
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
