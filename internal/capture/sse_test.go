package capture

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type parsed struct {
	Name, ID, Data string
	HasID          bool
	Retry          int64
}

func parseAll(t testing.TB, input string, max int) ([]parsed, error) {
	t.Helper()
	var got []parsed
	err := readEvents(strings.NewReader(input), max, func(e event) error {
		if e.tooLarge {
			return errEventTooLarge
		}
		got = append(got, parsed{e.name, e.id, string(e.data), e.hasID, e.retry})
		return nil
	})
	return got, err
}

func TestReadEvents(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []parsed
	}{
		{"sdk comment then message", ": ok\n\nevent: message\nid: _0\ndata: {\"a\":1}\n\n",
			[]parsed{{Name: "message", ID: "_0", HasID: true, Data: `{"a":1}`, Retry: -1}}},
		{"crlf and cr line ends", "data: a\r\ndata: b\rid:7\r\n\r\n",
			[]parsed{{Data: "a\nb", ID: "7", HasID: true, Retry: -1}}},
		{"no space after colon, field without colon", "data:x\ndata\n\n",
			[]parsed{{Data: "x\n", Retry: -1}}},
		{"close event with retry", "event: close\nretry: 250\n\n",
			[]parsed{{Name: "close", Retry: 250}}},
		{"bad retry ignored", "retry: 1s\ndata: y\n\n", []parsed{{Data: "y", Retry: -1}}},
		{"byte order mark", "\ufeffdata: z\n\n", []parsed{{Data: "z", Retry: -1}}},
		{"unfinished event discarded", "data: one\n\ndata: two\n", []parsed{{Data: "one", Retry: -1}}},
		{"id with NUL ignored", "id: a\x00b\ndata: q\n\n", []parsed{{Data: "q", Retry: -1}}},
		{"blank lines only", "\n\n\r\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseAll(t, tc.in, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadEventsTooLarge(t *testing.T) {
	_, err := parseAll(t, "data: "+strings.Repeat("x", 100)+"\n\n", 64)
	if !errors.Is(err, errEventTooLarge) {
		t.Fatalf("err = %v, want errEventTooLarge", err)
	}
	// An oversized event is read to its end and handed over alone; the
	// events around it are whole.
	var seen []string
	in := "data: a\n\nid: 7\ndata: " + strings.Repeat("x", 100) + "\ndata: y\n\ndata: b\n\n"
	err = readEvents(strings.NewReader(in), 64, func(e event) error {
		if e.tooLarge {
			seen = append(seen, fmt.Sprintf("tooLarge id=%q data=%q", e.id, e.data))
		} else {
			seen = append(seen, string(e.data))
		}
		return nil
	})
	if want := []string{"a", `tooLarge id="" data=""`, "b"}; err != nil || !slices.Equal(seen, want) {
		t.Errorf("events = %q, %v; want %q", seen, err, want)
	}
	// The bound is per event, not per stream.
	in = strings.Repeat("data: "+strings.Repeat("x", 40)+"\n\n", 10)
	if got, err := parseAll(t, in, 64); err != nil || len(got) != 10 {
		t.Fatalf("%d events, %v", len(got), err)
	}
}

// FuzzReadEvents: arbitrary input never panics, and events written the
// way the SDK writes them (with any of the three line ends) come back as
// written, in order.
func FuzzReadEvents(f *testing.F) {
	f.Add([]byte("event: message\nid: _0\ndata: {}\n\n"), "a\nb", "_1", uint8(0))
	f.Add([]byte("\r\r\n:\n"), "", "", uint8(1))
	f.Fuzz(func(t *testing.T, raw []byte, data, id string, ends uint8) {
		_, _ = parseAll(t, string(raw), 1<<16)

		if strings.ContainsAny(id, "\r\n\x00") || strings.ContainsRune(data, '\r') {
			return // not representable in one field
		}
		nl := []string{"\n", "\r\n", "\r"}[ends%3]
		var b bytes.Buffer
		var want []parsed
		for i := 0; i < 3; i++ {
			d := fmt.Sprintf("%s-%d", data, i)
			fmt.Fprintf(&b, "event: message%sid: %s%s", nl, id, nl)
			for _, line := range strings.Split(d, "\n") {
				fmt.Fprintf(&b, "data: %s%s", line, nl)
			}
			b.WriteString(nl)
			want = append(want, parsed{Name: "message", ID: id, HasID: true, Data: d, Retry: -1})
		}
		got, err := parseAll(t, b.String(), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q (-want +got):\n%s", b.String(), diff)
		}
	})
}

// TestRetryMillis checks that a retry field is digits only, and that a
// huge one is held to what a time.Duration of milliseconds can hold.
func TestRetryMillis(t *testing.T) {
	for in, want := range map[string]int64{
		"": -1, "x": -1, "-5": -1, "1.5": -1, "3000": 3000, "0": 0,
		"99999999999999999999999": -1,
		"9999999999999999":        int64(math.MaxInt64 / time.Millisecond),
	} {
		if got := retryMillis(in); got != want {
			t.Errorf("retryMillis(%q) = %d, want %d", in, got, want)
		}
		if got := retryMillis(in); got > 0 && time.Duration(got)*time.Millisecond < 0 {
			t.Errorf("retryMillis(%q) overflows a duration", in)
		}
	}
}
