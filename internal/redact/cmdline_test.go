package redact

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJoinOptionValues(t *testing.T) {
	for _, tc := range []struct {
		argv, want []string
	}{
		{[]string{"-u", "admin:Hx9pLq2Vw7", "https://x.example.com"}, []string{"-uadmin:Hx9pLq2Vw7", "https://x.example.com"}},
		{[]string{"--user", "admin:Hx9pLq2Vw7"}, []string{"--user=admin:Hx9pLq2Vw7"}},
		{[]string{"login", "--token", "4f9a8c7e6d5b4a39281716"}, []string{"login", "--token=4f9a8c7e6d5b4a39281716"}},
		{[]string{"--password", "Sup3rS3cret", "-e", "select 1"}, []string{"--password=Sup3rS3cret", "-e", "select 1"}},
		// Not credentials: no password, a reference, a word, another option.
		{[]string{"-u", "root", "-p", "shop"}, []string{"-u", "root", "-p", "shop"}},
		{[]string{"-u", "1000:1000"}, []string{"-u", "1000:1000"}},
		{[]string{"-u", "$USER:$PASS"}, []string{"-u", "$USER:$PASS"}},
		{[]string{"--token", "--verbose"}, []string{"--token", "--verbose"}},
		{[]string{"--token-file", "/run/secrets/t"}, []string{"--token-file", "/run/secrets/t"}},
		{[]string{"--name", "Hx9pLq2Vw7"}, []string{"--name", "Hx9pLq2Vw7"}},
	} {
		if got := JoinOptionValues(tc.argv); !cmp.Equal(got, tc.want) {
			t.Errorf("JoinOptionValues(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// TestCommandLine: the command-line rules find the credential an option
// passes, and leave the options that look like them alone.
func TestCommandLine(t *testing.T) {
	for _, s := range []string{
		"mysql -uroot -pSup3rS3cret9 -e 'select 1'",
		"curl -u admin:Hx9pLq2Vw7 https://x.example.com",
		`curl --user "deploy:Hx9pLq2Vw7" https://x.example.com`,
		"curl --user=deploy:Hx9pLq2Vw7 https://x.example.com",
		// The user quoted on its own, the password after it, quoted
		// or not.
		`curl --user "deploy":Hx9pLq2Vw7 https://x.example.com`,
		`curl -u 'deploy':'Hx9pLq2Vw7' https://x.example.com`,
		"vault login --token 4f9a8c7e6d5b4a39281716",
		"machine api.example.com login deploy password Nr7Kq2Xw9Lm4",
	} {
		if kind, ok := Secret(s); !ok || kind != KindCommandLine {
			t.Errorf("Secret(%q) = %q, %v; want %q", s, kind, ok, KindCommandLine)
		}
	}
	for _, s := range []string{
		"docker build --secret id=npmrc,src=/home/dev/.npmrc -t app .",
		"docker login --password-stdin registry.example.com",
		"docker run -p 8080:80 -p127.0.0.1:5432:5432 -u 1000:1000 postgres",
		"mkdir -p build/out && gcc -pthread -pedantic -pipe main.c",
		"find . -name '*.go' -print0 | xargs -0 gofmt -l",
		"ssh -p2222 deploy@host.example.com",
		"python -m pytest -p no:cacheprovider -q",
		"git push -u origin main:main",
		"pip install --user requests",
		"curl -u username:password https://x.example.com",
		"curl -u \"$USER:$PASS\" https://x.example.com",
		"Change your password immediately: run passwd on the machine",
		"the password hunter2 was rotated",
	} {
		if kind, ok := Secret(s); ok {
			t.Errorf("Secret(%q) = %q, want no secret", s, kind)
		}
	}
}
