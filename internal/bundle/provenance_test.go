package bundle

import (
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
