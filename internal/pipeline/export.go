package pipeline

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/store"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
)

// Exported counts what Export wrote.
type Exported struct {
	Traces int
	Bytes  int64
}

// Export writes every trace of the stored corpus c into the directory out
// as <format>-<id>.json (TraceFileName), holding the bytes Import writes
// for the same trace, so that exporting what an import stored gives the
// files an import into a directory would have written. All files or
// none: each document goes to a temporary file beside its destination as
// it is read, so the corpus is never held in memory, and every file is
// renamed into place once all are complete. The store keeps the traces
// as read, on this machine; what leaves it is redacted on the way out
// (bundle.RedactTrace), as Import redacts. Files of other names in out
// are left alone.
func Export(ctx context.Context, c *tracestore.Corpus, out string) (*Exported, error) {
	var n Exported
	w := atomicfile.NewBatch(0o644)
	defer w.Discard()
	used := map[string]bool{}
	err := c.Each(ctx, func(row *store.TraceRow, format string, body []byte) error {
		id, _ := redact.Text(row.TraceID)
		doc, err := traceFile(body)
		if err != nil {
			return fmt.Errorf("stored trace %s: %w", id, err)
		}
		n.Traces++
		n.Bytes += int64(len(doc))
		return w.AddBytes(filepath.Join(out, TraceFileName(format, id, used)), doc)
	})
	if err != nil {
		return nil, err
	}
	if err := w.Commit(); err != nil {
		return nil, err
	}
	return &n, nil
}
