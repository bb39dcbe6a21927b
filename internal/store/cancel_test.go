package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestTxCancelledStatementClosed: when a transaction's context is
// cancelled, database/sql rolls the transaction back on its own goroutine
// and closes its prepared statements, so the statement the transaction
// runs next fails with "sql: statement is closed", which says nothing of
// the cancellation. The transaction's error must still be the
// cancellation (an import records itself interrupted and its caller
// reports an interruption, not a failure), and nothing of it is kept.
func TestTxCancelledStatementClosed(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = db.tx(ctx, func(tx *sql.Tx) error {
		put, err := tx.PrepareContext(ctx, `INSERT INTO trace_signatures (signature) VALUES (?)`)
		if err != nil {
			return err
		}
		if _, err := put.ExecContext(ctx, "a"); err != nil {
			return err
		}
		cancel()
		// The rollback runs on database/sql's goroutine: wait for it to
		// close the statement.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if _, err = put.ExecContext(context.Background(), "b"); err != nil {
				return err
			}
			time.Sleep(time.Millisecond)
		}
		t.Fatal("the statement still runs 10 s after its transaction's context was cancelled")
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("transaction cancelled mid-way: err = %v, want context.Canceled", err)
	}
	var n int
	if err := db.db.QueryRow(`SELECT count(*) FROM trace_signatures`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the cancelled transaction left %d rows (%v), want none", n, err)
	}
}
