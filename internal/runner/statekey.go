package runner

import (
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/statekey"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// The state key (package statekey) authenticates what a run leaves in
// the state directory for later: a suspended run's journal, the approvals
// of the ledger and the archive of approved versions (package ledger,
// which loads the same key).

// StateKeyFile is the name of the state key under the state directory.
const StateKeyFile = toolexec.StateKeyFile

// StateKeySecret is the id the state key's value is recorded as
// ("[redacted:state_key]") when a tool prints it.
const StateKeySecret = "state_key"

// journalMACFile holds the hex HMAC-SHA256 of journal.json, next to it,
// one a line; while the journal is rewritten it holds the old journal's
// too (see writeJournalPair).
const journalMACFile = "journal.mac"

// stateKey returns the key under stateDir, creating it when create is set
// and there is none (statekey.Load), synced through syncFile.
func stateKey(stateDir string, create bool) ([]byte, error) {
	return statekey.Load(filepath.Join(stateDir, StateKeyFile), create, syncFile)
}
