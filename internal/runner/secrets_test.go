package runner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// writeSecrets writes a secrets file with mode perm into dir.
func writeSecrets(t *testing.T, dir, content string, perm os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, "secrets.env")
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil { // the umask may have cut it
		t.Fatal(err)
	}
}

func TestSecretsFileReadableByOthers(t *testing.T) {
	for _, perm := range []os.FileMode{0o644, 0o640, 0o604} {
		cfg := &runconfig.Config{Dir: t.TempDir(), Secrets: runconfig.SecretsConfig{File: "secrets.env"}}
		writeSecrets(t, cfg.Dir, "API_TOKEN=x\n", perm)
		w := workflow(t, "# capabilities: none · secrets: API_TOKEN\ndef wf(ctx):\n    ctx.secret(\"API_TOKEN\")\n")
		res, err := Run(context.Background(), w, nil, opts(t, cfg))
		p := filepath.Join(cfg.Dir, "secrets.env")
		want := "unusable secrets file: " + p + " has mode " + "0" + strings.TrimPrefix(perm.String(), "-")
		if !errors.Is(err, runconfig.ErrSecretsFile) || res != nil {
			t.Fatalf("Run with a %v secrets file = %v, want ErrSecretsFile before the first step", perm, err)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "unusable secrets file: "+p+" has mode ") || !strings.HasSuffix(msg, "which lets group or others read it; run chmod 600 "+p) {
			t.Errorf("error = %q, want one like %q naming the fix", msg, want)
		}
	}
}

// TestSecretsFile: secrets come from the environment first, then from
// the file; the file's values reach ctx.secret, command templates and
// http headers, and appear in no file the run writes.
func TestSecretsFile(t *testing.T) {
	const (
		fileToken = "file-token-3f9a0c7e5b21d84"
		fileAPI   = "file-api-key-77aa10ce93"
		envAPI    = "env-api-key-0b1c2d3e4f"
	)
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		w.Write([]byte(`{"echo":"` + auth + `"}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	writeSecrets(t, dir, "# secrets\nGITHUB_TOKEN="+fileToken+"\nAPI_KEY="+fileAPI+"\n", 0o600)
	os.WriteFile(filepath.Join(dir, runconfig.ConfigFile), []byte(`[secrets]
file = "secrets.env"
env = ["API_KEY"]
[tools."argv"]
command = ["`+os.Args[0]+`", "--token={secret:GITHUB_TOKEN}"]
env = { RUNTIME_TEST_HELPER = "argv" }
[tools."gh.get"]
http = { url = "`+srv.URL+`/user", headers = { Authorization = "token {secret:GITHUB_TOKEN}" } }
`), 0o644)
	cfg, err := runconfig.LoadConfig(filepath.Join(dir, runconfig.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	w := workflow(t, `# capabilities: none · secrets: GITHUB_TOKEN, API_KEY
def wf(ctx):
    tok = ctx.secret("GITHUB_TOKEN")
    key = ctx.secret("API_KEY")
    a = ctx.tool("argv")
    g = ctx.tool("gh.get")
    ctx.log("token " + tok + " key " + key)
    return {"argv": a, "echo": g, "key": key, "key_len": len(key)}
`)
	o := opts(t, cfg)
	o.Getenv = func(k string) string {
		if k == "API_KEY" {
			return envAPI
		}
		return ""
	}
	var log strings.Builder
	o.Log = &log
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "token "+fileToken {
		t.Errorf("the http tool sent Authorization %q, want the file's token", auth)
	}
	want := map[string]any{
		"argv":    []any{"--token=[redacted:GITHUB_TOKEN]"},
		"echo":    map[string]any{"echo": "token [redacted:GITHUB_TOKEN]"},
		"key":     "[redacted:API_KEY]",
		"key_len": json.Number(strconv.Itoa(len(envAPI))), // the environment's, not the file's
	}
	if diff := cmp.Diff(want, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if got := log.String(); got != "token [redacted:GITHUB_TOKEN] key [redacted:API_KEY]\n" {
		t.Errorf("log = %q", got)
	}
	for _, v := range []string{fileToken, fileAPI, envAPI} {
		assertNoSecret(t, o.StateDir, v)
	}
}

// TestSecretsFileMissing: a secrets file the config names must exist.
func TestSecretsFileMissing(t *testing.T) {
	cfg := &runconfig.Config{Dir: t.TempDir(), Secrets: runconfig.SecretsConfig{File: "nope.env"}}
	_, err := Run(context.Background(), workflow(t, "def wf(ctx):\n    pass\n"), nil, opts(t, cfg))
	if !errors.Is(err, runconfig.ErrSecretsFile) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Run = %v, want ErrSecretsFile wrapping not-exist", err)
	}
}

// TestSecretNotProvided: a workflow's declaration of a secret is not
// enough to read an environment variable: only [secrets] env lets it,
// else the secret comes from the secrets file or not at all.
func TestSecretNotProvided(t *testing.T) {
	w := workflow(t, "# capabilities: none · secrets: GH_TOKEN\ndef wf(ctx):\n    return len(ctx.secret(\"GH_TOKEN\"))\n")
	getenv := func(k string) string {
		if k == "GH_TOKEN" {
			return "from-the-environment"
		}
		return ""
	}
	tests := []struct {
		name    string
		secrets runconfig.SecretsConfig
		file    string
		want    string // the output, or the error
	}{
		{"not provided", runconfig.SecretsConfig{}, "", "secret_not_provided: GH_TOKEN is not provided by the configuration"},
		{"other variable listed", runconfig.SecretsConfig{Env: []string{"HOME"}}, "", "secret_not_provided"},
		{"listed", runconfig.SecretsConfig{Env: []string{"GH_TOKEN"}}, "", "20"},
		{"in the file", runconfig.SecretsConfig{File: "secrets.env"}, "GH_TOKEN=from-file\n", "9"},
		{"not in the file", runconfig.SecretsConfig{File: "secrets.env"}, "OTHER=x\n", "or add it to secrets.env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &runconfig.Config{Dir: t.TempDir(), Secrets: tt.secrets}
			if tt.file != "" {
				writeSecrets(t, cfg.Dir, tt.file, 0o600)
			}
			o := opts(t, cfg)
			o.Getenv = getenv
			res, err := Run(context.Background(), w, nil, o)
			if err != nil {
				if !errors.Is(err, runconfig.ErrSecret) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Run = %v, want ErrSecret with %q", err, tt.want)
				}
				return
			}
			if got := fmt.Sprint(res.Output); got != tt.want {
				t.Errorf("output = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestSecretTransformsNotRecorded: a workflow that reverses, upper-cases,
// base64-encodes or splits a secret before logging or returning it does
// not get it into the run's records.
func TestSecretTransformsNotRecorded(t *testing.T) {
	const value = "tok-9f8e7d6c5b4a3210-Secret"
	w := workflow(t, `# capabilities: none · secrets: TOKEN
def wf(ctx):
    tok = ctx.secret("TOKEN")
    rev = "".join(reversed(list(tok.elems())))
    ctx.log("reversed " + rev)
    ctx.log("upper " + tok.upper())
    ctx.log("split " + tok[:7] + " " + tok[7:])
    r = ctx.tool("b64", value = tok)
    return {"lower": tok.lower(), "b64": r, "spaced": " ".join([tok[:10], tok[10:]])}
`)
	cfg := &runconfig.Config{Secrets: runconfig.SecretsConfig{Env: []string{"TOKEN"}}}
	o := opts(t, cfg)
	o.Getenv = func(k string) string { return map[string]string{"TOKEN": value}[k] }
	o.Tools = map[string]toolexec.Tool{"b64": {Func: func(_ context.Context, args map[string]any) (any, error) {
		v := args["value"].(string)
		return map[string]any{"std": base64.StdEncoding.EncodeToString([]byte(v)), "basic": "Basic " + base64.StdEncoding.EncodeToString([]byte("me:"+v))}, nil
	}}}
	var log strings.Builder
	o.Log = &log
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	out := string(stepvalue.Canonical(res.Output)) + log.String()
	for _, form := range []string{"reversed", "case", "split", "base64"} {
		if !strings.Contains(out, "[redacted:TOKEN~"+form+"]") {
			t.Errorf("no %s form replaced in\n%s", form, out)
		}
	}
	rev := []byte(value)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	for _, leak := range []string{value, string(rev), strings.ToUpper(value), strings.ToLower(value), base64.StdEncoding.EncodeToString([]byte(value)), value[:7] + " " + value[7:]} {
		if strings.Contains(out, leak) {
			t.Errorf("%q leaked into the result or log:\n%s", leak, out)
		}
		assertNoSecret(t, o.StateDir, leak)
	}
}
