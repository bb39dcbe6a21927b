package serve

import (
	"errors"
	"testing"
)

func TestCheckLoopback(t *testing.T) {
	for _, tt := range []struct {
		addr   string
		allow  bool
		remote bool
		bad    bool
	}{
		{"127.0.0.1:8931", false, false, false},
		{"[::1]:8931", false, false, false},
		{"localhost:0", false, false, false},
		{":8931", false, true, false},
		{"0.0.0.0:8931", false, true, false},
		{"0.0.0.0:8931", true, false, false},
		{"8931", false, false, true},
	} {
		err := CheckLoopback(tt.addr, tt.allow)
		switch {
		case tt.remote != errors.Is(err, ErrRemote):
			t.Errorf("CheckLoopback(%q, %v) = %v; remote refusal %v", tt.addr, tt.allow, err, tt.remote)
		case tt.bad != (err != nil && !errors.Is(err, ErrRemote)):
			t.Errorf("CheckLoopback(%q, %v) = %v; malformed %v", tt.addr, tt.allow, err, tt.bad)
		}
	}
}
