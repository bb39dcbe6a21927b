package redact

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// stamp encodes itself, as trace types with extra members do.
type stamp struct {
	At    string
	Extra map[string]any
}

func (s stamp) MarshalJSON() ([]byte, error) {
	m := map[string]any{"at": s.At}
	for k, v := range s.Extra {
		m[k] = v
	}
	return json.Marshal(m)
}

func (s *stamp) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	s.At, _ = m["at"].(string)
	delete(m, "at")
	if len(m) > 0 {
		s.Extra = m
	}
	return nil
}

type inner struct {
	Name  string `json:"name"`
	Notes string `json:"notes,omitempty"`
}

type kind string

type doc struct {
	inner
	Title      string            `json:"title"`
	Kind       kind              `json:"kind"`
	Secret     string            `json:"secret,omitempty"`
	Token      *string           `json:"access_token"`
	Count      int               `json:"count"`
	Ratio      float64           `json:"ratio"`
	OK         bool              `json:"ok"`
	Tags       []string          `json:"tags"`
	Empty      []string          `json:"empty,omitempty"`
	Positions  []int             `json:"positions"`
	Env        map[string]string `json:"env"`
	Counts     map[string]int    `json:"counts"`
	Value      any               `json:"value"`
	Values     []any             `json:"values"`
	Stamp      stamp             `json:"stamp"`
	StampP     *stamp            `json:"stamp_p,omitempty"`
	Raw        []byte            `json:"raw"`
	Children   []doc             `json:"children"`
	Skipped    string            `json:"-"`
	unexported string
	NoTag      string
}

// viaJSON is what Copy stands for: encode, decode generically, Value,
// encode, decode into a new T.
func viaJSON[T any](t *testing.T, v *T) (*T, int, error) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		return nil, 0, err
	}
	g, err := decodeNumbers(b)
	if err != nil {
		t.Fatal(err)
	}
	out, n := Value(g)
	if b, err = json.Marshal(out); err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	r := new(T)
	if err := d.Decode(r); err != nil {
		return nil, 0, err
	}
	return r, n, nil
}

const ghToken = "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345"

func sample() *doc {
	tok := "Bearer " + ghToken
	return &doc{
		inner:      inner{Name: "deploy_" + ghToken, Notes: ""},
		Title:      "invalid \xff\xfe utf-8 and " + ghToken,
		Kind:       kind(ghToken),
		Secret:     "DEPLOY_TOKEN",
		Token:      &tok,
		Count:      3,
		OK:         true, // a value Copy must carry over, not only zero
		Ratio:      0.25,
		Tags:       []string{"a", ghToken, "[redacted:github]"},
		Empty:      []string{},
		Positions:  []int{1, 2},
		Env:        map[string]string{"GITHUB_TOKEN": "x", "PATH": "/bin", ghToken: "k1", "ghp_" + "zyxwvutsrqponmlkjihgfedcba98765432": "k2", "[redacted]": "taken"},
		Counts:     map[string]int{"a": 1},
		Value:      map[string]any{"password": "hunter2", "n": 1.5, "list": []string{"x", ghToken}, "bad\xff": true},
		Values:     []any{json.Number("7"), "url https://user:s3cr3tpassw0rd@example.com/x", nil, []any(nil)},
		Stamp:      stamp{At: "now", Extra: map[string]any{"api_key": "abc123456789", "n": json.Number("2")}},
		Raw:        []byte("plain bytes"),
		Children:   []doc{{Title: ghToken, Env: map[string]string{}}},
		Skipped:    "kept only in memory",
		unexported: "gone",
		NoTag:      "no tag " + ghToken,
	}
}

// TestCopyMatchesJSON: Copy gives what the JSON round trip gives, value
// and count.
func TestCopyMatchesJSON(t *testing.T) {
	for name, d := range map[string]*doc{
		"sample": sample(),
		"zero":   {},
		"nested": {Children: []doc{*sample(), {}}, StampP: &stamp{At: ghToken}},
	} {
		t.Run(name, func(t *testing.T) {
			before, _ := json.Marshal(d)
			got, n, err := Copy(d)
			if err != nil {
				t.Fatal(err)
			}
			want, wn, err := viaJSON(t, d)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(want)
				t.Errorf("Copy:\n%s\nround trip:\n%s", gb, wb)
			}
			if n != wn {
				t.Errorf("Copy counted %d replacements, the round trip %d", n, wn)
			}
			if after, _ := json.Marshal(d); !bytes.Equal(before, after) {
				t.Error("Copy changed its argument")
			}
			if b, _ := json.Marshal(got); strings.Contains(string(b), ghToken) {
				t.Errorf("the copy holds the token: %s", b)
			}
		})
	}
}

// TestCopyErrors: where the round trip's decode would fail, Copy fails
// and names the member.
func TestCopyErrors(t *testing.T) {
	type numbers struct {
		Pin   int            `json:"password,omitempty"`
		Inner *inner         `json:"secret"`
		Map   map[string]int `json:"m"`
		F     float64        `json:"f"`
	}
	for _, tc := range []struct {
		in   numbers
		want string
	}{
		{numbers{Pin: 1234}, "redacting /password: the member's key is sensitive"},
		{numbers{Map: map[string]int{"api_token": 3}}, "redacting /m/api_token: the member's key is sensitive"},
		{numbers{F: math.NaN()}, "redacting /f: unsupported value NaN"},
		{numbers{Inner: &inner{}}, "redacting /secret: the member's key is sensitive"},
	} {
		_, _, err := Copy(&tc.in)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Copy(%+v) = %v, want an error starting %q", tc.in, err, tc.want)
		}
		if _, _, jerr := viaJSON(t, &tc.in); jerr == nil {
			t.Errorf("the round trip of %+v succeeded", tc.in)
		}
	}
}

// FuzzCopy: for any strings in any place (keys, values, names, generic
// values), Copy gives what the JSON round trip gives.
func FuzzCopy(f *testing.F) {
	f.Add("x", "password", ghToken)
	f.Add("token=abc123456789xyz", "\xff", "[redacted:github]")
	f.Add("", "[redacted]", "a~b/c")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		d := &doc{
			inner: inner{Name: a, Notes: b},
			Title: c, Kind: kind(a), Secret: b,
			Tags:  []string{a, b, c},
			Env:   map[string]string{a: b, b: c, c: a},
			Value: map[string]any{a: b, b: []any{c, json.Number("1")}, "token": c},
			Stamp: stamp{At: a, Extra: map[string]any{b: c}},
		}
		got, n, err := Copy(d)
		want, wn, werr := viaJSON(t, d)
		if (err == nil) != (werr == nil) {
			t.Fatalf("Copy error %v, round trip error %v", err, werr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(got, want) || n != wn {
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			t.Fatalf("Copy (%d):\n%s\nround trip (%d):\n%s", n, gb, wn, wb)
		}
	})
}
