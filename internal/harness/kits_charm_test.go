package harness

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const charmGoMod = `module example.com/shell

go 1.22

require (
	github.com/charmbracelet/bubbletea v1.1.0
	github.com/charmbracelet/wish v1.4.0
)
`

// TestCharmServiceKitProposed: a Go module that requires Wish, Bubble
// Tea or an SSH server library gets the charm-service kit proposed; a
// plain Go module does not.
func TestCharmServiceKitProposed(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, gomod string
		want        bool
	}{
		{"wish", "module example.com/a\n\ngo 1.22\n\nrequire github.com/charmbracelet/wish v1.4.0\n", true},
		{"bubbletea-v2", "module example.com/a\n\ngo 1.22\n\nrequire github.com/charmbracelet/bubbletea/v2 v2.0.0\n", true},
		{"gliderlabs", "module example.com/a\n\ngo 1.22\n\nrequire github.com/gliderlabs/ssh v0.3.7\n", true},
		{"plain", "module example.com/a\n\ngo 1.22\n\nrequire github.com/spf13/cobra v1.8.0\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := makeRepo(t, repo{name: tc.name, tracked: map[string]string{
				"go.mod":  tc.gomod,
				"main.go": "package main\n\nfunc main() {}\n",
			}})
			p, err := Profile(ctx, dir, ProfileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pl := MakePlan(dir, p, nil, nil)
			i := slices.IndexFunc(pl.Proposed, func(pr Proposal) bool { return pr.Kit == "charm-service" })
			if got := i >= 0; got != tc.want {
				t.Fatalf("charm-service proposed = %t, want %t; hints %+v", got, tc.want, p.RiskHints)
			}
			if !tc.want {
				return
			}
			pr := pl.Proposed[i]
			if !slices.Contains(pr.RiskProtected, FamilyTerminal) {
				t.Errorf("risk protected = %v, want %s", pr.RiskProtected, FamilyTerminal)
			}
			for _, c := range []string{"sh gates/charm-go-build.sh", "sh gates/charm-go-test.sh", "sh gates/ssh-smoke.sh --server ''"} {
				if !slices.Contains(pr.CommandsRun, c) {
					t.Errorf("commands = %v, want %q", pr.CommandsRun, c)
				}
			}
		})
	}
}

// TestCharmServiceKitWrites: the kit writes the Go gates, the smoke gate
// (whose comment lists the main packages as candidates, none chosen),
// and a manifest entry whose server command is empty; it sits beside the
// go-service kit without taking its files. The written gate, run by the
// harness as written, is not evidence.
func TestCharmServiceKitWrites(t *testing.T) {
	ctx := context.Background()
	dir := makeRepo(t, repo{name: "shell", tracked: map[string]string{
		"go.mod":              charmGoMod,
		"cmd/shell/main.go":   "package main\n\nfunc main() {}\n",
		"internal/ui/view.go": "package ui\n",
	}})
	p, err := Profile(ctx, dir, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, "go-service", p, true); err != nil {
		t.Fatal(err)
	}
	res, err := Write(dir, "charm-service", p, true)
	if err != nil {
		t.Fatal(err)
	}
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := read("gates/charm-go-build.sh"); !strings.HasSuffix(got, "\ngo build ./...\n") {
		t.Errorf("charm-go-build.sh:\n%s", got)
	}
	if got := read("gates/charm-go-test.sh"); !strings.HasSuffix(got, "\ngo test ./...\n") {
		t.Errorf("charm-go-test.sh:\n%s", got)
	}
	gate := read("gates/ssh-smoke.sh")
	for _, want := range []string{"candidates only", "go run ./cmd/shell.", "BatchMode=yes", "StrictHostKeyChecking=yes", "--update-baselines"} {
		if !strings.Contains(gate, want) {
			t.Errorf("ssh-smoke.sh lacks %q", want)
		}
	}
	if got := read("harness/ssh/session.keys"); got != "q" {
		t.Errorf("session.keys = %q", got)
	}
	m := res.Manifest
	if !slices.Contains(m.RiskFamilies, FamilyTerminal) || !slices.Equal(m.Kits, []string{"charm-service", "go-service"}) {
		t.Errorf("manifest families %v, kits %v", m.RiskFamilies, m.Kits)
	}
	var smoke *Command
	for i, c := range m.Commands {
		if c.ID == "ssh-smoke" {
			smoke = &m.Commands[i]
		}
	}
	if smoke == nil || smoke.Command != "sh gates/ssh-smoke.sh --server ''" || smoke.Kit != "charm-service" {
		t.Fatalf("ssh-smoke entry = %+v", smoke)
	}

	// The server command is the user's to write into the manifest; a
	// rewrite of the kit keeps it, and resets nothing else.
	edited := strings.Replace(read(ManifestPath), `--server ''`, `--server 'go run ./cmd/shell -port $SSH_PORT'`, 1)
	if err := os.WriteFile(filepath.Join(dir, ManifestPath), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := Write(dir, "charm-service", p, true)
	if err != nil {
		t.Fatal(err)
	}
	if kept := again.Manifest.Commands[slices.IndexFunc(again.Manifest.Commands, func(c Command) bool { return c.ID == "ssh-smoke" })]; kept.Command != `sh gates/ssh-smoke.sh --server 'go run ./cmd/shell -port $SSH_PORT'` {
		t.Errorf("after a rewrite, ssh-smoke = %q: the user's server command was lost", kept.Command)
	}
	if read(ManifestPath) != edited {
		t.Errorf("a rewrite changed the edited manifest:\n%s", read(ManifestPath))
	}

	// Run as written: the empty server command checks nothing.
	only := &Manifest{Schema: m.Schema, Owner: m.Owner, GeneratedBy: m.GeneratedBy, Commands: []Command{*smoke}}
	rep, err := Run(ctx, dir, only, "test", p.ProfileID, RunOptions{Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	g := rep.Gates[0]
	if g.Passed || !g.NotEvidence || g.ExitCode != ExitNotEvidence || !strings.Contains(g.Tail, "no server command") {
		t.Fatalf("ssh-smoke as written: %+v", g)
	}
}

// Stand-ins for the system ssh tools: the package has no SSH server
// library in its module graph, so the end-to-end test puts an ssh,
// ssh-keyscan and a "server" of its own on PATH. The server marks the
// port it was given as listening; ssh-keyscan answers only for that
// port; ssh refuses anything but a batch-mode, strictly checked session
// to that port and prints a recorded screen, with the keys it was sent.
const (
	standInServer = `#!/bin/sh
[ -n "${STANDIN_SERVER_FAIL:-}" ] && { echo "listen: address already in use"; exit 1; }
echo "$SSH_HOST:$SSH_PORT" >"$STANDIN_STATE/listening"
echo "serving on $SSH_HOST:$SSH_PORT"
sleep 60 &
echo $! >"$STANDIN_STATE/child"
wait
`
	standInKeyscan = `#!/bin/sh
port=""
while [ $# -gt 0 ]; do case "$1" in -p) port=$2; shift 2;; -T) shift 2;; *) host=$1; shift;; esac; done
[ -n "${STANDIN_FOREIGN:-}" ] || [ "$(cat "$STANDIN_STATE/listening" 2>/dev/null)" = "$host:$port" ] || exit 0
echo "[$host]:$port ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIStandInHostKeyForTheSmokeTestOnly"
`
	standInSSH = `#!/bin/sh
port=""; key=""; known=""; batch=""; strict=""; tty=""
while [ $# -gt 0 ]; do
  case "$1" in
    -p) port=$2; shift 2;;
    -i) key=$2; shift 2;;
    -F) shift 2;;
    -tt) tty=1; shift;;
    -o) case "$2" in
          BatchMode=yes) batch=1;;
          StrictHostKeyChecking=yes) strict=1;;
          UserKnownHostsFile=*) known=${2#UserKnownHostsFile=};;
        esac; shift 2;;
    *) dest=$1; shift;;
  esac
done
[ "$batch$strict$tty" = 111 ] || { echo "not a batch, strictly checked session with a terminal" >&2; exit 255; }
[ -f "$key" ] && [ -f "$key.pub" ] || { echo "no key $key" >&2; exit 255; }
grep -q "^\[127.0.0.1\]:$port " "$known" || { echo "host key of port $port not in $known" >&2; exit 255; }
[ "$(cat "$STANDIN_STATE/listening")" = "127.0.0.1:$port" ] || { echo "connection refused" >&2; exit 255; }
[ -n "${STANDIN_EMPTY:-}" ] && exit 0
keys=$(cat)
printf '\033[?25l\033[2J\033[H\033]0;shell\007\033[1mShell\033[0m %s\r\n' "${STANDIN_VERSION:-v1}"
printf '  > list\r\n    quit\r\n'
printf 'keys: %s\r\n\033[?25h' "$keys"
`
)

func TestCharmServiceSSHSmokeGate(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed: the gate makes a real throwaway key")
	}
	ctx := context.Background()
	dir := makeRepo(t, repo{name: "shell", tracked: map[string]string{"go.mod": charmGoMod, "main.go": "package main\n\nfunc main() {}\n"}})
	p, err := Profile(ctx, dir, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, "charm-service", p, true); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	state := t.TempDir()
	for name, body := range map[string]string{"ssh": standInSSH, "ssh-keyscan": standInKeyscan, "shell-server": standInServer} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	server := "'" + filepath.Join(bin, "shell-server") + "'"
	gate := func(env []string, args ...string) (int, string, string) {
		t.Helper()
		evidence := t.TempDir()
		os.Remove(filepath.Join(state, "listening"))
		cmd := exec.Command("sh", append([]string{"gates/ssh-smoke.sh"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "STANDIN_STATE="+state, EvidenceEnv+"="+evidence, "SSH_SMOKE_START_SECONDS=2")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		screen, _ := os.ReadFile(filepath.Join(evidence, "ssh-screen.txt"))
		return code, string(out), string(screen)
	}
	wantScreen := "Shell v1\n  > list\n    quit\nkeys: q\n"

	code, out, _ := gate(nil, "--server", "")
	if code != ExitNotEvidence || !strings.Contains(out, "no server command") {
		t.Fatalf("no server: exit %d\n%s", code, out)
	}
	code, out, screen := gate(nil, "--server", server)
	if code != ExitNotEvidence || !strings.Contains(out, "no baseline harness/ssh/baselines/session.txt") {
		t.Fatalf("no baseline: exit %d\n%s", code, out)
	}
	if screen != wantScreen {
		t.Fatalf("screen recorded as evidence = %q, want %q", screen, wantScreen)
	}
	code, out, _ = gate(nil, "--server", server, "--update-baselines")
	if code != ExitNotEvidence || !strings.Contains(out, "recorded harness/ssh/baselines/session.txt") {
		t.Fatalf("update: exit %d\n%s", code, out)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "harness/ssh/baselines/session.txt")); string(data) != wantScreen {
		t.Fatalf("baseline = %q", data)
	}
	code, out, _ = gate(nil, "--server", server)
	if code != 0 || !strings.Contains(out, "matches") {
		t.Fatalf("same screen: exit %d\n%s", code, out)
	}
	// The gate stops what the server command started, grandchildren
	// included, even when run outside the harness's process group.
	if child, err := os.ReadFile(filepath.Join(state, "child")); err != nil {
		t.Fatal(err)
	} else if stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(child)) + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
		t.Fatalf("the server's child %s outlived the gate: %s", strings.TrimSpace(string(child)), stat)
	}
	code, out, _ = gate([]string{"STANDIN_VERSION=v2"}, "--server", server)
	if code != 1 || !strings.Contains(out, "-Shell v1") || !strings.Contains(out, "+Shell v2") {
		t.Fatalf("changed screen: exit %d\n%s", code, out)
	}
	code, out, _ = gate([]string{"STANDIN_EMPTY=1"}, "--server", server)
	if code != 1 || !strings.Contains(out, "printed nothing") {
		t.Fatalf("empty session: exit %d\n%s", code, out)
	}
	code, out, _ = gate([]string{"STANDIN_SERVER_FAIL=1"}, "--server", server)
	if code != 1 || !strings.Contains(out, "exited without listening") {
		t.Fatalf("server that cannot listen: exit %d\n%s", code, out)
	}
	// A port where another SSH server already answers is never used:
	// the session would compare someone else's screen.
	code, out, _ = gate([]string{"STANDIN_FOREIGN=1"}, "--server", server)
	if code != ExitNotEvidence || !strings.Contains(out, "already answered on every port") {
		t.Fatalf("foreign servers on every port: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(state, "listening")); err == nil {
		t.Fatal("the gate started the server on a port another SSH server answers on")
	}
	code, out, _ = gate(nil, "--server", "exec sleep 60")
	if code != 1 || !strings.Contains(out, "no SSH server answered") {
		t.Fatalf("server that ignores the port: exit %d\n%s", code, out)
	}
}
