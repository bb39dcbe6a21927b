package redact

import "testing"

func TestSensitiveKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"token", true},
		{"access_token", true},
		{"refreshToken", true},
		{"GITHUB_TOKEN", true},
		{"secret", true},
		{"client_secret", true},
		{"password", true},
		{"db_passwd", true},
		{"api_key", true},
		{"apiKey", true},
		{"X-Api-Key", true},
		{"APIKEY", true},
		{"Authorization", true},
		{"Cookie", true},
		{"Set-Cookie", true},
		{"credentials", true},
		{"aws_credential", true},
		{"private_key", true},
		{"privateKey", true},
		{"session_key", true},
		{"sessionKey", true},
		{"passwordHash", true},
		{"token_count", false},
		{"max_tokens", false},
		{"maxTokens", false},
		{"tokens_used", false},
		{"input_tokens", false},
		{"promptTokenCount", false},
		{"tokenizer", false},
		{"token_type", false},
		{"required_secrets", false},
		{"secret_name", false},
		{"password_file", false},
		{"token_url", false},
		{"access_token_expires_in", false},
		{"name", false},
		{"key", false},
		{"monkey", false},
		{"author", false},
		{"session_id", false},
		{"", false},
	} {
		if got := SensitiveKey(tc.key); got != tc.want {
			t.Errorf("SensitiveKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

// TestSensitiveAssignmentKey checks the one key an assignment in text
// adds to SensitiveKey: AWS's access key (aws_access_key=… in a config or
// a shell line), but not its public id, and not as a JSON member name.
func TestSensitiveAssignmentKey(t *testing.T) {
	for _, tc := range []struct {
		key          string
		assign, want bool
	}{
		{"aws_access_key", true, true},
		{"AWS_ACCESS_KEY", true, true},
		{"accessKey", true, true},
		{"aws_access_key_id", true, false},
		{"AWS_ACCESS_KEY_ID", true, false},
		{"aws_access_key", false, false},
		{"aws_secret_access_key", false, true},
	} {
		if got := sensitive(tc.key, tc.assign); got != tc.want {
			t.Errorf("sensitive(%q, assign %v) = %v, want %v", tc.key, tc.assign, got, tc.want)
		}
	}
}
