package bundle

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestManifestOwnerAndEvalPackLink: the promotion owner is the author (the
// one person a bundle names as answering for it) and eval_pack.link is
// the link given; without them both stay null.
func TestManifestOwnerAndEvalPackLink(t *testing.T) {
	s, h := releaseTraces(t, nil)
	o := opts()
	o.EvalPackLink = "https://evals.example.com/packs/release"
	_, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: o}.write(t)
	if m.Promotion.Owner == nil || *m.Promotion.Owner != o.Author {
		t.Errorf("promotion.owner = %v, want %q", deref(m.Promotion.Owner), o.Author)
	}
	if m.EvalPack.Link == nil || *m.EvalPack.Link != o.EvalPackLink {
		t.Errorf("eval_pack.link = %v, want %q", deref(m.EvalPack.Link), o.EvalPackLink)
	}

	o = opts()
	o.Author = ""
	_, m = scenario{sources: s, heldout: h, build: releaseCandidate, opts: o}.write(t)
	if m.Promotion.Owner != nil || m.EvalPack.Link != nil {
		t.Errorf("with no author and no link: owner %v, link %v, want both null", deref(m.Promotion.Owner), deref(m.EvalPack.Link))
	}
}

// TestManifestSourceReceiptID: a trace whose metadata carries a
// source_receipt_id has it recorded in source_traces (redacted like the
// trace's fixture); the others stay null.
func TestManifestSourceReceiptID(t *testing.T) {
	s, h := releaseTraces(t, nil)
	s[0].Metadata = map[string]any{SourceReceiptKey: "receipt-release-a"}
	h[0].Metadata = map[string]any{SourceReceiptKey: "receipt-holdout"}
	s[1].Metadata = map[string]any{SourceReceiptKey: 42} // not a string: no receipt
	_, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	want := map[string]string{s[0].ID: "receipt-release-a", h[0].ID: "receipt-holdout"}
	if len(m.SourceTraces) != 4 {
		t.Fatalf("%d source traces, want 4", len(m.SourceTraces))
	}
	for _, st := range m.SourceTraces {
		got := deref(st.SourceReceiptID)
		w, ok := want[st.TraceID]
		switch {
		case ok && got != w:
			t.Errorf("%s: source_receipt_id = %v, want %q", st.TraceID, got, w)
		case !ok && st.SourceReceiptID != nil:
			t.Errorf("%s: source_receipt_id = %q, want null", st.TraceID, got)
		}
	}
}

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestManifestEvalPackLinkRedacted: a token pasted into the eval pack
// link or a name is redacted in the manifest, as in report.json, so the
// bundle validates instead of carrying the secret.
func TestManifestEvalPackLinkRedacted(t *testing.T) {
	s, h := releaseTraces(t, nil)
	o := opts()
	token := "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	o.EvalPackLink = "https://evals.example.com/packs/release?token=" + token
	o.Author = "ops " + token
	o.Approver = "lead " + token
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: o}.write(t)
	if v := Validate(dir); !v.OK {
		t.Errorf("bundle does not validate:\n%s", describe(v))
	}
	if b := mustRead(t, filepath.Join(dir, ManifestFile)); strings.Contains(string(b), token) {
		t.Errorf("%s holds the token", ManifestFile)
	}
	if m.EvalPack.Link == nil || !strings.HasPrefix(*m.EvalPack.Link, "https://evals.example.com/packs/release?token=[redacted") {
		t.Errorf("eval_pack.link = %v", deref(m.EvalPack.Link))
	}
}
