package cli

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReviewServes starts crystallize review as the command line does,
// fetches its page, and stops it with the command's context: on loopback
// quietly, anywhere else with a warning on stderr.
func TestReviewServes(t *testing.T) {
	dir, err := filepath.Abs("../review/testdata/pass")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		t.Run(tt.addr, func(t *testing.T) {
			var stdout, stderr syncBuffer
			e := &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, e, []string{"review", "--addr", tt.addr, "--state-dir", t.TempDir(), "--db", filepath.Join(t.TempDir(), "state.db"), dir})
			}()
			listening := regexp.MustCompile(`^review: 1 bundle\(s\) at http://.+:(\d+)/ `)
			var port string
			for deadline := time.Now().Add(20 * time.Second); port == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if m := listening.FindStringSubmatch(stdout.String()); m != nil {
					port = m[1]
				}
			}
			if port == "" {
				t.Fatalf("review did not say where it listens: %q %q", stdout.String(), stderr.String())
			}
			resp, err := http.Get("http://127.0.0.1:" + port + "/b/0/")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="decide-form"`) {
				t.Errorf("GET the bundle's page = %d, want the page with its form", resp.StatusCode)
			}
			cancel()
			select {
			case code := <-done:
				if code != exitOK {
					t.Errorf("exit status %d after the context ended: %s", code, stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("review did not stop when its context ended")
			}
			if got := strings.Contains(stderr.String(), "is not a loopback address"); got != tt.warn {
				t.Errorf("warning on stderr = %v, want %v: %q", got, tt.warn, stderr.String())
			}
		})
	}
}
