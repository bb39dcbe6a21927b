package review

import (
	"bytes"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// FuzzRenderEscapes puts arbitrary text where a bundle puts its own: a
// step name, a trace id, a parameter example, a divergence path and the
// workflow source. Whatever it is, the page never carries a tag or an
// attribute quote of it: every "<" and `"` of the text arrives as an
// entity.
func FuzzRenderEscapes(f *testing.F) {
	for _, s := range []string{`<script>window.__pwned=1</script>`, `"'><img src=x onerror="x()">`, `</textarea><svg onload=x>`, "]]><!--", "javascript:alert(1)", "\x00<\u2028>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.ContainsAny(s, `<"`) {
			return
		}
		// Fenced by a marker, so that text which happens to be a piece
		// of the page's own markup ("0 or <td) is not taken for it.
		s = "QZX" + s + "QZX"
		m, c, _, fixtures := bigCandidate(2, 3)
		c.Steps[0].Name = s
		c.Parameters[0].Examples = []any{s}
		c.Constants = []candidate.Constant{{Step: 1, Path: s, Value: s}}
		m.Shadow.Traces[0].TraceID = s
		m.Shadow.Traces[0].Status = candidate.StatusFail
		m.Shadow.Traces[0].ReplayOracle = &candidate.OracleReport{Divergence: &candidate.Divergence{Path: s, Left: s, Right: s}}
		fixtures[s] = &trace.Trace{ID: s, Actions: []trace.Action{{ID: s, Name: s}}}
		p := Build(m, c, []byte("# step 1 · "+s+"\n"+s+"\n"), fixtures)
		var buf bytes.Buffer
		if err := renderPage(&buf, view{Page: p, Token: "t"}); err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(buf.Bytes(), []byte(s)); i >= 0 {
			t.Errorf("page carries %q unescaped at %d", s, i)
		}
	})
}
