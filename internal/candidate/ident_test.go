package candidate

import (
	"strings"
	"testing"
)

// fakeGitHubToken is a GitHub-token-shaped value assembled at run time,
// so no file of the repository holds one.
var fakeGitHubToken = "gh" + "p_" + strings.Repeat("aB3dE5gH7j", 4)[:36]

func TestIdentifier(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		// A secret goes before the name is split and lower-cased, which
		// would leave the token in a shape no scanner recognizes.
		{"Deploy with " + fakeGitHubToken, "deploy_with_redacted_github"},
		{"deploy_" + fakeGitHubToken, "deploy_redacted_github"},
		{fakeGitHubToken, "redacted"},
		{"Bump golang.org/x/net to v0.33.0", "bump_golang_org_x_net_to_v0_33_0"},
		{"version", "version"},
		{"repo_path", "repo_path"},
		{"repo-path", "repo_path"},
		{"repo path", "repo_path"},
		{"repoPath", "repo_path"},
		{"RepoPath", "repo_path"},
		{"HTTPServer", "http_server"},
		{"sha256Sum", "sha256_sum"},
		{"v2API", "v2_api"},
		{"API", "api"},
		{"a.b.c", "a_b_c"},
		{"a--b__c", "a_b_c"},
		{"__init__", "init"},
		{"  spaced  ", "spaced"},
		{"$.items[0].id", "items_0_id"},
		{"", "value"},
		{"_", "value"},
		{"---", "value"},
		{"ключ", "value"},
		{"naïve", "na_ve"},
		{"2fa", "_2fa"},
		{"-2fa", "_2fa"},
		{"123", "_123"},
		{"if", "if_"},
		{"If", "if_"},
		{"lambda", "lambda_"},
		{"assert", "assert_"},
		{"yield", "yield_"},
		{"None", "none"},
		{"True", "true"},
		{"len", "len_"},
		{"str", "str_"},
		{"type", "type_"},
		{"print", "print_"},
		{"set", "set_"},
		{"ctx", "ctx_"},
		{"json", "json_"},
		{"struct", "struct_"},
		{"CTX", "ctx_"},
		{"if_", "if_"},
		{"len_", "len_"},
		{"step1", "step1"},
		{"a\x00b", "a_b"},
		{"\"\"\"", "value"},
		{"\xff\xfe", "value"},
	}
	for _, tt := range tests {
		if got := Identifier(tt.in); got != tt.want {
			t.Errorf("Identifier(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestIdentifierProperties checks the promises of Identifier's doc
// comment on every table input and a few more.
func TestIdentifierProperties(t *testing.T) {
	inputs := []string{
		"", "x", "X", "_x_", "if", "ctx", "None", "9", "é", "a\nb", "a\"b",
		"ThisIsALongCamelCaseNAME", "x__", "__", "for_", "0if",
	}
	for _, in := range inputs {
		id := Identifier(in)
		if !IsIdentifier(id) {
			t.Errorf("IsIdentifier(Identifier(%q) = %q) = false, want true", in, id)
		}
		if reserved(id) || hostName(id) {
			t.Errorf("Identifier(%q) = %q, a reserved name", in, id)
		}
		if again := Identifier(id); again != id {
			t.Errorf("Identifier(Identifier(%q)) = %q, want %q", in, again, id)
		}
	}
}

func TestIsIdentifier(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"version", true},
		{"repo_path", true},
		{"_private", true},
		{"CamelCase", true},
		{"x1", true},
		{"len", true},
		{"ctx", true},
		{"None", true},
		{"", false},
		{"1x", false},
		{"repo-path", false},
		{"a.b", false},
		{"a b", false},
		{"ключ", false},
		{"if", false},
		{"lambda", false},
		{"load", false},
		{"pass", false},
		{"assert", false},
		{"nonlocal", false},
		{"yield", false},
		{"If", true},
	}
	for _, tt := range tests {
		if got := IsIdentifier(tt.in); got != tt.want {
			t.Errorf("IsIdentifier(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func FuzzIdentifier(f *testing.F) {
	for _, s := range []string{"", "repoPath", "if", "2fa", "a-b", "ctx", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id := Identifier(s)
		if !IsIdentifier(id) || reserved(id) || hostName(id) {
			t.Fatalf("Identifier(%q) = %q, not a bindable identifier", s, id)
		}
		if again := Identifier(id); again != id {
			t.Fatalf("Identifier(Identifier(%q)) = %q, want %q", s, again, id)
		}
	})
}
