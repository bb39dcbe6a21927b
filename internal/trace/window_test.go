package trace

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkWindow compares DecodeWindow of data with DecodeDirect's trace,
// normalized and cut to w. A document DecodeDirect declines is not
// checked: DecodeWindow trusts what it skips, and is only called on
// documents known to decode.
func checkWindow(t *testing.T, p *Parser, data []byte, w Window) {
	t.Helper()
	full, ok := p.DecodeDirect(data, "a.json", 3)
	if !ok {
		return
	}
	Normalize(full)
	got, ok := p.DecodeWindow(data, "a.json", 3, w)
	if w.Lo < 0 || w.Hi < w.Lo || w.Hi > len(full.Actions) {
		if ok {
			t.Fatalf("DecodeWindow(%q, %v) accepted a window outside the trace's %d actions", data, w, len(full.Actions))
		}
		return
	}
	if !ok {
		t.Fatalf("DecodeWindow(%q, %v) declined a document DecodeDirect decodes", data, w)
	}
	want := full.Window(w)
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("DecodeWindow(%q, %v) differs (-want +got):\n%s", data, w, cmp.Diff(want, got))
	}
}

func TestDecodeWindow(t *testing.T) {
	doc := []byte(`{"id":"t","usage":{"model_calls":3},"actions":[
		{"kind":"tool_call","name":"a","parameters":{"s":"x\\\"]}y","n":[1,{"z":"\\\\"}]}},
		{"id":"b2","kind":"model_call","name":"b","output":{"text":"}]\"["}},
		{"kind":"tool_call","name":"c","capabilities":["z","a","z"],"output":"ok"} ,
		{"kind":"tool_call","name":"d","output":-1.5e3}
	],"replay_run":{"receipts":[]}}`)
	var p Parser
	for lo := 0; lo <= 4; lo++ {
		for hi := lo; hi <= 5; hi++ {
			checkWindow(t, &p, doc, Window{lo, hi})
		}
	}
	got, ok := p.DecodeWindow(doc, "a.json", 3, Window{1, 3})
	if !ok || len(got.Actions) != 2 || got.Actions[0].ID != "b2" || got.Actions[1].ID != "action_3" || got.Usage != nil {
		t.Fatalf("window 1..3 = %+v, %v; want actions b2 and action_3 and no usage", got, ok)
	}
	// Normalized as the whole trace is: a model call counts as one, and
	// capabilities are a sorted set.
	if got.Actions[0].Cost == nil || got.Actions[0].Cost.ModelCalls != 1 || !reflect.DeepEqual(got.Actions[1].Capabilities, []string{"a", "z"}) {
		t.Fatalf("window actions not normalized: %+v", got.Actions)
	}
}

func TestDecodeWindowTestdata(t *testing.T) {
	var p Parser
	files, err := filepath.Glob(filepath.Join("testdata", "valid", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	docs := [][]byte{benchDocument()}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, data)
	}
	for _, data := range docs {
		full, ok := p.DecodeDirect(data, "a.json", 3)
		if !ok {
			continue
		}
		n := len(full.Actions)
		for _, w := range []Window{{0, n}, {0, 0}, {n / 2, n}, {n / 3, n/3 + 2}, {n, n + 1}} {
			if w.Hi > n+1 {
				continue
			}
			checkWindow(t, &p, data, w)
		}
	}
}

func FuzzDecodeWindow(f *testing.F) {
	for _, seed := range append(append([]string(nil), skimSeeds...), directSeeds...) {
		f.Add([]byte(seed), 0, 1)
	}
	f.Add(benchDocument(), 3, 9)
	var p Parser
	f.Fuzz(func(t *testing.T, data []byte, lo, hi int) {
		checkWindow(t, &p, data, Window{lo % 64, hi % 64})
	})
}

func BenchmarkDecodeWindow(b *testing.B) {
	data := benchDocument()
	var p Parser
	full, ok := p.DecodeDirect(data, "a.json", 1)
	if !ok {
		b.Fatal("bench document declined")
	}
	n := len(full.Actions)
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := p.DecodeDirect(data, "a.json", 1); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("window", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := p.DecodeWindow(data, "a.json", 1, Window{n / 2, n/2 + 5}); !ok {
				b.Fatal("declined")
			}
		}
	})
}
