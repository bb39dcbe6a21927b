package redact

import (
	"reflect"
	"strings"
	"testing"
)

// TestSecretKeysRenamedInOrder: object keys that hold secrets are
// redacted, and those that then collide with each other or with a key
// already there get "~2", "~3", … in the order of the original keys, the
// same in Value, Bytes and Copy; the values under them are kept or
// redacted by their new names.
func TestSecretKeysRenamedInOrder(t *testing.T) {
	k1 := "ghp_" + strings.Repeat("Aa1", 12)
	k2 := "ghp_" + strings.Repeat("Bb2", 12)
	k3 := "ghp_" + strings.Repeat("Cc3", 12)
	in := map[string]any{k3: "c", k1: "a", Redacted: "kept", k2: "b", "token=" + k1: "v", "plain": "p"}
	want := map[string]any{
		Redacted: "kept", "[redacted]~2": "a", "[redacted]~3": "b", "[redacted]~4": "c",
		"token=[redacted:github]": Redacted, "plain": "p",
	}
	got, n := Value(in)
	if !reflect.DeepEqual(got, want) || n != 5 {
		t.Errorf("Value = %v, %d; want %v, 5", got, n, want)
	}

	b := `{"` + k3 + `":"c","` + k1 + `":"a","[redacted]":"kept","` + k2 + `":"b","token=` + k1 + `":"v","plain":"p"}`
	out, bn, err := Bytes([]byte(b))
	wantJSON := `{"[redacted]":"kept","[redacted]~2":"a","[redacted]~3":"b","[redacted]~4":"c","plain":"p","token=[redacted:github]":"[redacted]"}`
	if err != nil || string(out) != wantJSON || bn != 5 {
		t.Errorf("Bytes = %s, %d, %v; want %s, 5", out, bn, err, wantJSON)
	}

	type env struct{ Env map[string]string }
	c, cn, err := Copy(&env{Env: map[string]string{k3: "c", k1: "a", Redacted: "kept", k2: "b", "token=" + k1: "v", "plain": "p"}})
	wantEnv := map[string]string{}
	for k, v := range want {
		wantEnv[k] = v.(string)
	}
	if err != nil || !reflect.DeepEqual(c.Env, wantEnv) || cn != 5 {
		t.Errorf("Copy = %v, %d, %v; want %v, 5", c.Env, cn, err, wantEnv)
	}
}
