package redact

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// realisticTrace returns a crystallization trace of about size bytes: a
// release workflow's actions repeated, with a secret every few actions, as
// agents record them (shell commands, file reads, model calls with token
// usage, digests, ids, timestamps).
func realisticTrace(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"version":1,"id":"trace-release-0001","source_hash":"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","flow":"release","actions":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		secret := ""
		switch i % 7 {
		case 3:
			secret = `,"env":{"GITHUB_TOKEN":"` + fakeGitHub + `"}`
		case 5:
			secret = `,"note":"retried with Authorization: Bearer ` + fakeRandom + `"`
		}
		fmt.Fprintf(&b, `{"id":"a%[1]d","kind":"tool_call","name":"shell","parameters":{"command":"cargo publish --manifest-path crates/harn-vm/Cargo.toml --dry-run","cwd":"/home/runner/work/harn/harn","timeout_ms":600000%[2]s},`+
			`"inputs":{"version":"v0.7.%[1]d","channel":"#release-eng","commit":"3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f"},`+
			`"output":{"exit_code":0,"stdout":"   Packaging harn-vm v0.7.%[1]d (/home/runner/work/harn/harn/crates/harn-vm)\n    Verifying harn-vm v0.7.%[1]d\n   Compiling serde v1.0.197\n   Finished release [optimized] target(s) in 41.2s\n","stderr":""},`+
			`"capabilities":["cargo.package","fs.read"],"side_effects":[{"kind":"fs.write","path":"target/package/harn-vm-0.7.%[1]d.crate"}],"duration_ms":41213,"deterministic":true,`+
			`"metadata":{"started_at":"2024-01-15T10:30:%02[3]d.123456Z","run_id":"4b0d6c3e-8f1a-4e2b-9c7d-1a2b3c4d5e6f","model":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","input_tokens":1204,"output_tokens":388,"max_tokens":4096}}},`+
			`{"id":"b%[1]d","kind":"model_call","name":"summarize","parameters":{"prompt":"Summarize the release notes for harn-vm v0.7.%[1]d and list breaking changes.","temperature":0},`+
			`"output":{"text":"The release bumps the manifest version, regenerates Cargo.lock and publishes harn-vm. No breaking changes."},"cost":{"usd":0.0042},"usage":{"token_count":1592}}`,
			i, secret, i%60)
	}
	b.WriteString(`],"metadata":{"host":"ci-runner-7","redacted":false}}`)
	return b.Bytes()
}

func BenchmarkScan(b *testing.B) {
	doc := realisticTrace(1 << 20)
	b.SetBytes(int64(len(doc)))
	b.ResetTimer()
	for b.Loop() {
		Scan(doc)
	}
}

func BenchmarkBytes(b *testing.B) {
	doc := realisticTrace(1 << 20)
	b.SetBytes(int64(len(doc)))
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Bytes(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBytesSlow measures the encoding/json path that Bytes replaces,
// for comparison.
func BenchmarkBytesSlow(b *testing.B) {
	doc := realisticTrace(1 << 20)
	b.SetBytes(int64(len(doc)))
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := slowBytes(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSecret(b *testing.B) {
	values := []string{"cargo publish --dry-run", "v0.7.12", fakeGitHub, "/home/runner/work/harn/harn/crates/harn-vm/Cargo.toml"}
	for b.Loop() {
		for _, v := range values {
			Secret(v)
		}
	}
}

// BenchmarkWriter streams a gate's log (a trace's text, in 32 KiB
// writes, as a pipe delivers it) through the redacting Writer.
func BenchmarkWriter(b *testing.B) {
	data := realisticTrace(4 << 20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		w := NewWriter(io.Discard)
		for i := 0; i < len(data); i += 32 << 10 {
			w.Write(data[i:min(i+32<<10, len(data))])
		}
		w.Close()
	}
}
