package redact

import "bytes"

// SensitiveKey reports whether the value of a field named key is private:
// the key, ignoring case and the separators '_', '-', '.' and camelCase,
// contains token, secret, password, passwd, apikey, authorization, cookie,
// credential, privatekey or sessionkey. So "access_token", "X-Api-Key",
// "apiKey", "Set-Cookie" and "client_secret" are sensitive.
//
// A key is not sensitive, although it contains one of those words, when it
// names a fact about credentials rather than holding one: when one of its
// words (split at separators and camelCase) is a count or a limit (count,
// limit, usage, used, budget, max, min, total, num, remaining, estimate,
// length, len), the plural "tokens" or "secrets" (max_tokens, tokens_used,
// required_secrets, which lists logical ids), a form of "tokenize", or a
// reference to where a credential lives or which it is (id, except in
// secret_id, type, kind, name, url, uri,
// endpoint, path, file, env, var, ref, ttl, expires, expiry, expiration,
// hint, policy). So "token_count", "maxTokens", "tokenizer", "token_type",
// "password_file" and "secret_name" are not sensitive. The exclusions trade a
// little recall for fixtures that keep their token accounting and their
// secret references, which the mined workflow needs.
func SensitiveKey(key string) bool {
	return sensitive(key, false)
}

// sensitive is SensitiveKey; with assign it also takes access_key (but not
// access_key_id), the key of AWS-style assignments in text. It does not
// allocate: it runs at every ':' and '=' of the scanned text.
func sensitive(key string, assign bool) bool {
	if len(key) < 5 || len(key) > maxKey {
		return false
	}
	// words is key in lower case with '_' between words; joined is the
	// same without the '_'.
	var wb, jb [2 * maxKey]byte
	words, joined := wb[:0], jb[:0]
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'A' <= c && c <= 'Z':
			if i > 0 && ('a' <= key[i-1] && key[i-1] <= 'z' || '0' <= key[i-1] && key[i-1] <= '9') {
				words = append(words, '_')
			}
			words = append(words, c+'a'-'A')
			joined = append(joined, c+'a'-'A')
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			words = append(words, c)
			joined = append(joined, c)
		default:
			words = append(words, '_')
		}
	}
	if !hasSensitiveWord(joined, assign) {
		return false
	}
	for i := 0; i < len(words); {
		j := i
		for j < len(words) && words[j] != '_' {
			j++
		}
		w := words[i:j]
		if excluded(w) {
			return false
		}
		// An id names a credential (credentialsId, token_id) except
		// Vault's secret_id, which is one.
		if (string(w) == "id" || string(w) == "ids") && !bytes.Contains(joined, []byte("secret")) {
			return false
		}
		i = j + 1
	}
	return true
}

// hasSensitiveWord reports whether the joined key contains a sensitive
// word. It tries the words only at the bytes they start with, so a key
// costs one pass and no search per word.
func hasSensitiveWord(joined []byte, assign bool) bool {
	for i, c := range joined {
		var ws []string
		switch c {
		case 't':
			ws = []string{"token"}
		case 's':
			ws = []string{"secret", "sessionkey"}
		case 'p':
			ws = []string{"password", "passwd", "privatekey"}
		case 'a':
			ws = []string{"apikey", "authorization"}
			if assign && bytes.HasPrefix(joined[i:], []byte("accesskey")) && !bytes.HasPrefix(joined[i:], []byte("accesskeyid")) {
				return true
			}
		case 'c':
			ws = []string{"cookie", "credential"}
		default:
			continue
		}
		for _, w := range ws {
			if len(joined)-i >= len(w) && string(joined[i:i+len(w)]) == w {
				return true
			}
		}
	}
	return false
}

// excluded reports whether a word of a key makes it name a fact about a
// credential rather than hold one; see SensitiveKey.
func excluded(w []byte) bool {
	if bytes.HasPrefix(w, []byte("tokeniz")) {
		return true
	}
	switch string(w) {
	case "count", "counts", "limit", "limits", "usage", "used", "budget",
		"max", "min", "total", "num", "remaining", "estimate", "length", "len",
		"tokens", "secrets",
		"type", "kind", "name", "names", "url", "uri", "endpoint", "path",
		"file", "env", "var", "ref", "ttl", "expires", "expiry", "expiration",
		"hint", "policy":
		return true
	}
	return false
}
