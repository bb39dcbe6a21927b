package redact

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestCopySensitiveMemberTypes: under a sensitive key, a member whose
// type cannot hold "[redacted]" (a number of any kind, a struct, an
// array, a slice or map that is not empty) makes Copy fail with the
// member's path, as the round trip's decode fails; one that can (a string,
// an interface, a pointer to a string) or holds nothing (null, false, an
// empty slice or map) is copied, as numbers of every kind under other keys
// are.
func TestCopySensitiveMemberTypes(t *testing.T) {
	type point struct{ X int }
	for _, o := range []outcome{
		both(t, &struct{ Token int8 }{1}),
		both(t, &struct{ Token uint }{7}),
		both(t, &struct{ Token uint16 }{7}),
		both(t, &struct{ Token float32 }{1.5}),
		both(t, &struct{ Token point }{}),
		both(t, &struct{ Token [2]string }{}),
		both(t, &struct{ Token []string }{[]string{"a"}}),
		both(t, &struct{ Token map[string]string }{map[string]string{"a": "b"}}),
		both(t, &struct{ Token *uint }{new(uint)}),
	} {
		if o.err == nil || !strings.HasPrefix(o.err.Error(), "redacting /Token: the member's key is sensitive") {
			t.Errorf("Copy(%+v) error = %v, want the sensitive member named", o.in, o.err)
		}
		if o.rtErr == nil {
			t.Errorf("the round trip of %+v succeeded", o.in)
		}
	}
	s := "hunter2"
	for _, o := range []outcome{
		both(t, &struct{ Token string }{"hunter2"}),
		both(t, &struct{ Token *string }{&s}),
		both(t, &struct{ Token any }{3.5}),
		both(t, &struct{ Token bool }{true}),
		both(t, &struct{ Token []string }{}),
		both(t, &struct{ Token map[string]int }{}),
		both(t, &struct{ Token *int }{}),
		both(t, &struct{ Count uint }{7}),
		both(t, &struct{ Count uint8 }{255}),
		both(t, &struct{ Count int64 }{-3}),
		both(t, &struct{ Ratio float32 }{0.5}),
	} {
		if o.err != nil || o.rtErr != nil || !reflect.DeepEqual(o.got, o.want) || o.n != o.wn {
			t.Errorf("Copy(%+v) = %+v, %d, %v; the round trip gives %+v, %d, %v", o.in, o.got, o.n, o.err, o.want, o.wn, o.rtErr)
		}
	}
}

// TestCopyNilInInterface: a nil map or slice held in an interface encodes
// as null and comes back as a nil interface, as in the round trip, not as
// an empty map or slice.
func TestCopyNilInInterface(t *testing.T) {
	for _, o := range []outcome{
		both(t, &struct{ Note any }{map[string]any(nil)}),
		both(t, &struct{ Note any }{[]any(nil)}),
		both(t, &struct{ Note []any }{[]any{map[string]any(nil), []any(nil), map[string]any{}}}),
	} {
		if o.err != nil || o.rtErr != nil || !reflect.DeepEqual(o.got, o.want) {
			t.Errorf("Copy(%+v) = %#v, %v; the round trip gives %#v, %v", o.in, o.got, o.err, o.want, o.rtErr)
		}
	}
}

// TestCopyUnencodableInterface: a value in an interface that JSON cannot
// encode (NaN, a channel) fails Copy with the member's path, as it fails
// the round trip, instead of coming back as null.
func TestCopyUnencodableInterface(t *testing.T) {
	for _, o := range []outcome{
		both(t, &struct{ Note any }{math.NaN()}),
		both(t, &struct{ Note any }{map[string]any{"x": make(chan int)}}),
		both(t, &struct{ Note any }{[]float64{math.Inf(1)}}),
	} {
		if o.err == nil || !strings.HasPrefix(o.err.Error(), "redacting /Note: ") {
			t.Errorf("Copy(%+v) = %+v, %v; want an error naming /Note", o.in, o.got, o.err)
		}
		if o.rtErr == nil {
			t.Errorf("the round trip of %+v succeeded", o.in)
		}
	}
}

// outcome is what Copy and the JSON round trip make of one value.
type outcome struct {
	in         any
	got, want  any
	n, wn      int
	err, rtErr error
}

// both runs Copy and the round trip on v.
func both[T any](t *testing.T, v *T) outcome {
	t.Helper()
	o := outcome{in: v}
	o.got, o.n, o.err = Copy(v)
	o.want, o.wn, o.rtErr = viaJSON(t, v)
	return o
}

// Base is embedded through a pointer in withBase.
type Base struct {
	ID    string `json:"id"`
	Token string `json:"token"`
}

type withBase struct {
	*Base
	Note string `json:"note"`
}

// TestCopyEmbeddedPointer: the fields of a struct embedded through a
// pointer are members of the outer object; Copy allocates the embedded
// struct once and fills all of them, as the round trip's decode does.
func TestCopyEmbeddedPointer(t *testing.T) {
	for _, v := range []*withBase{
		{Base: &Base{ID: "run-1", Token: "hunter2"}, Note: "by " + fakeGitHub},
		{Note: "no base"},
	} {
		o := both(t, v)
		if o.err != nil || o.rtErr != nil || !reflect.DeepEqual(o.got, o.want) || o.n != o.wn {
			t.Errorf("Copy(%+v) = %+v, %d, %v; the round trip gives %+v, %d, %v", v, o.got, o.n, o.err, o.want, o.wn, o.rtErr)
		}
	}
	got, _, err := Copy(&withBase{Base: &Base{ID: "run-1", Token: "hunter2"}})
	if err != nil || got.Base == nil || got.ID != "run-1" || got.Token != Redacted {
		t.Errorf("Copy = %+v, %v; want the embedded id kept and its token redacted", got, err)
	}
}

// TestCopySelfEncodingValues: values whose type encodes itself take the
// round trip, also where they cannot be addressed (map values); one under
// a sensitive key that cannot decode "[redacted]" fails Copy with the
// member's path, as it fails the round trip.
func TestCopySelfEncodingValues(t *testing.T) {
	when := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	for _, o := range []outcome{
		both(t, &struct{ M map[string]stamp }{map[string]stamp{"a": {At: "now", Extra: map[string]any{"api_key": "abc123456789"}}}}),
		both(t, &struct{ M map[string]time.Time }{map[string]time.Time{"start": when}}),
		both(t, &struct{ L []stamp }{[]stamp{{At: "then " + fakeGitHub}}}),
	} {
		if o.err != nil || o.rtErr != nil || !reflect.DeepEqual(o.got, o.want) || o.n != o.wn {
			t.Errorf("Copy(%+v) = %+v, %d, %v; the round trip gives %+v, %d, %v", o.in, o.got, o.n, o.err, o.want, o.wn, o.rtErr)
		}
	}
	for _, o := range []outcome{
		both(t, &struct{ Token time.Time }{when}),
		both(t, &struct{ Cookie stamp }{stamp{At: "now"}}),
	} {
		if o.err == nil || !strings.HasPrefix(o.err.Error(), "redacting /") {
			t.Errorf("Copy(%+v) = %+v, %v; want an error with the member's path", o.in, o.got, o.err)
		}
		if o.rtErr == nil {
			t.Errorf("the round trip of %+v succeeded", o.in)
		}
	}
}

// TestCopyErrorInSlice: a member that fails inside a slice element fails
// Copy with the element's index in the path, as it fails the round trip.
func TestCopyErrorInSlice(t *testing.T) {
	type pin struct {
		Password int `json:"password"`
	}
	o := both(t, &struct{ Users []pin }{[]pin{{}, {Password: 1234}}})
	if o.err == nil || !strings.HasPrefix(o.err.Error(), "redacting /Users/0/password: ") {
		t.Errorf("Copy error = %v, want one naming /Users/0/password", o.err)
	}
	if o.rtErr == nil {
		t.Errorf("the round trip of %+v succeeded", o.in)
	}
}
