package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// TestConcurrentRuns starts eight runs at once, as separate processes, on
// one state directory whose database does not exist yet: each creates or
// migrates it, registers, posts inbox items and ends while the others do
// the same. None may fail on a lock, and the registry must hold every
// run and every item.
func TestConcurrentRuns(t *testing.T) {
	bin, err := exec.LookPath("crystallize") // installed on PATH by TestMain
	if err != nil {
		t.Skip("the crystallize test command is not on PATH:", err)
	}
	dir := t.TempDir()
	const notes = 20
	wf := "def busy(ctx, n):\n" +
		"    for i in range(" + strconv.Itoa(notes) + "):\n" +
		"        ctx.notify(\"run \" + n + \" note \" + str(i), complete = False)\n" +
		"    ctx.tool(\"pause\")\n"
	files := map[string]string{
		"wf.star":          wf,
		"crystallize.toml": "[tools.\"pause\"]\ncommand = [\"sleep\", \"0.2\"]\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const runs = 8
	var wg sync.WaitGroup
	errs := make([]error, runs)
	outs := make([]bytes.Buffer, runs)
	start := make(chan struct{})
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "run", "wf.star", "--param", "n="+strconv.Itoa(i))
			cmd.Dir = dir
			cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
			<-start
			errs[i] = cmd.Run()
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil || strings.Contains(outs[i].String(), "registry") {
			t.Errorf("run %d: %v\n%s", i, err, outs[i].String())
		}
	}

	ctx := context.Background()
	db, err := store.Open(ctx, registry.Path(filepath.Join(dir, ".crystallize")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list, err := registry.List(ctx, db, true, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != runs {
		t.Fatalf("registry holds %d sessions, want %d: %+v", len(list), runs, list)
	}
	for _, s := range list {
		if s.State != registry.StatusCompleted || s.Ended == 0 {
			t.Errorf("session %s: state %s, ended %d; want completed and ended", s.SessionID, s.State, s.Ended)
		}
	}
	items, err := db.Items(ctx, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != runs*notes {
		t.Errorf("inbox holds %d items, want %d", len(items), runs*notes)
	}
}
