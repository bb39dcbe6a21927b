package runconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSecrets(t *testing.T) {
	tests := []struct {
		file string
		want map[string]string
		errs []string
	}{
		{
			file: "testdata/secrets/good.env",
			want: map[string]string{"GITHUB_TOKEN": "ghp-abc", "API_KEY": "quoted value", "SINGLE": "x=y", "EMPTY": ""},
		},
		{
			file: "testdata/secrets/bad.env",
			errs: []string{
				"unusable secrets file: testdata/secrets/bad.env:1: want KEY=VALUE",
				"unusable secrets file: testdata/secrets/bad.env:2: the key is not a logical secret id (letters, digits, _ . -, not starting with a digit)",
				"unusable secrets file: testdata/secrets/bad.env:4: A is already set on line 3",
			},
		},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseSecrets(tt.file, data)
		if tt.errs != nil {
			if err == nil || err.Error() != strings.Join(tt.errs, "\n") {
				t.Errorf("parseSecrets(%s) = %v, want\n%s", tt.file, err, strings.Join(tt.errs, "\n"))
			}
			if err != nil && strings.Contains(err.Error(), "=2") {
				t.Errorf("the error quotes a value: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("parseSecrets(%s) = %v", tt.file, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseSecrets(%s) (-want +got):\n%s", tt.file, diff)
		}
	}
}

func FuzzParseSecrets(f *testing.F) {
	for _, name := range []string{"good.env", "bad.env"} {
		data, err := os.ReadFile(filepath.Join("testdata/secrets", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		values, err := parseSecrets("f.env", data)
		if err != nil {
			if !errors.Is(err, ErrSecretsFile) {
				t.Errorf("error %v is not ErrSecretsFile", err)
			}
			return
		}
		for k := range values {
			if !IsSecretID(k) {
				t.Errorf("key %q is not a secret id", k)
			}
		}
	})
}
