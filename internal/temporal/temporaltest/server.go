// Package temporaltest gives tests a Temporal server: the one
// CRYSTALLIZE_TEMPORAL_ADDR names, else a dev server it starts from the
// temporal command (go install github.com/temporalio/cli/cmd/temporal@v1.5.1),
// in memory, on free ports, stopped when the test ends. Without either the
// test is skipped, unless CRYSTALLIZE_REQUIRE_TEMPORAL=1 (as in CI), which
// makes it fail: a test the server cannot run must not pass unseen.
package temporaltest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// Address returns the host:port of a server for t.
func Address(t testing.TB) string {
	t.Helper()
	if addr := os.Getenv("CRYSTALLIZE_TEMPORAL_ADDR"); addr != "" {
		return addr
	}
	bin := command()
	if bin == "" {
		if os.Getenv("CRYSTALLIZE_REQUIRE_TEMPORAL") == "1" {
			t.Fatal("no temporal command on PATH and no CRYSTALLIZE_TEMPORAL_ADDR, and CRYSTALLIZE_REQUIRE_TEMPORAL=1")
		}
		t.Skip("no Temporal server: install one with go install github.com/temporalio/cli/cmd/temporal@v1.5.1, or set CRYSTALLIZE_TEMPORAL_ADDR")
	}
	addr, err := start(t, bin)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// command finds the temporal program: on PATH, else where go install
// puts it.
func command() string {
	if p, err := exec.LookPath("temporal"); err == nil {
		return p
	}
	for _, dir := range []string{os.Getenv("GOBIN"), filepath.Join(os.Getenv("GOPATH"), "bin"), filepath.Join(os.Getenv("HOME"), "go", "bin")} {
		if dir == "" || dir == "bin" {
			continue
		}
		p := filepath.Join(dir, "temporal")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// freePorts returns n ports nothing listens on now.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// start runs a dev server until t ends and waits until it answers.
func start(t testing.TB, bin string) (string, error) {
	ports, err := freePorts(3)
	if err != nil {
		return "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	log, err := os.Create(filepath.Join(t.TempDir(), "temporal.log"))
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", strconv.Itoa(ports[0]), "--http-port", strconv.Itoa(ports[1]), "--metrics-port", strconv.Itoa(ports[2]),
		"--log-level", "error")
	cmd.Stdout, cmd.Stderr = log, log
	// A test binary that dies (a timeout's panic) runs no cleanup: the
	// server must not outlive it.
	cmd.SysProcAttr = dieWithParent()
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("starting %s: %w", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		c, err := client.Dial(client.Options{HostPort: addr, Logger: quiet{}})
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			cancel()
			c.Close()
			if err == nil {
				return addr, nil
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			return "", fmt.Errorf("temporal dev server at %s did not answer in 90s: %v\n%s", addr, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// quiet is a logger that drops everything: the dial attempts before the
// server is up are expected to fail.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
