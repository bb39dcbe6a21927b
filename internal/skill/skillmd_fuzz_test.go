package skill

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzCheck runs Check over arbitrary SKILL.md and gate.json
// bytes, seeded with the golden skills and a few hand-written
// frontmatters. Check must not panic, must give the same answer
// twice, must report only its own codes, and a problem placed on a line
// must name a line of the document.
func FuzzCheck(f *testing.F) {
	seeds, err := filepath.Glob("testdata/skillmd/*.SKILL.md")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		md, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		gate, err := os.ReadFile(strings.TrimSuffix(s, ".SKILL.md") + ".gate.json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(md, gate)
	}
	f.Add([]byte("---\nname: a\ndescription: |\n  x\n  y\nmetadata:\n  k: [1, {a: 2}]\n---\n"), []byte(nil))
	f.Add([]byte("---\nname: &a x\ndescription: *a\n---\n"), []byte(`{"schema":"crystallize.skill.gate","schema_version":1}`))
	f.Add([]byte("---\r\nname: 'it''s'\r\ndescription: \"\\u00e9\\x\"\r\n---"), []byte("{"))
	f.Add([]byte("---\n? complex\n: key\n---\n"), []byte("null"))
	f.Add([]byte("\xff---\n"), []byte(nil))

	codes := []string{CodeFrontmatter, CodeUnknownKey, CodeName, CodeNameDirMismatch, CodeDescription,
		CodeCompatibility, CodeAllowedTools, CodeMetadata, CodeGateMismatch, CodeGateRejected}
	linePrefix := regexp.MustCompile(`^line (\d+): `)
	f.Fuzz(func(t *testing.T, src, gate []byte) {
		probs := Check("skill", src, gate)
		if again := Check("skill", src, gate); !cmp.Equal(probs, again) {
			t.Fatalf("Check is not deterministic:\n%s", cmp.Diff(probs, again))
		}
		lines := strings.Count(string(src), "\n") + 1
		for _, p := range probs {
			if !slices.Contains(codes, p.Code) {
				t.Errorf("problem %+v has a code Check does not document", p)
			}
			if p.Message == "" {
				t.Errorf("problem %+v has no message", p)
			}
			if m := linePrefix.FindStringSubmatch(p.Message); m != nil {
				if n, _ := strconv.Atoi(m[1]); n < 1 || n > lines {
					t.Errorf("problem %+v names line %d of a %d-line document", p, n, lines)
				}
			}
		}
	})
}
