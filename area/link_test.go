package area

import (
	"crypto/tls"
	"errors"
	"reflect"
	"testing"
)

func TestDirectors(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"10.0.0.5:7070", []string{"10.0.0.5:7070"}},
		{"10.0.0.5:7070,10.0.0.6:7070", []string{"10.0.0.5:7070", "10.0.0.6:7070"}},
		{" a:1 , ,b:2,", []string{"a:1", "b:2"}},
		{"unix:/run/ley.sock", []string{"unix:/run/ley.sock"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := directors(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("directors(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// TestCheckCleartext: the host key crosses the network only over TLS, or
// when the operator allowed a plain link.
func TestCheckCleartext(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		addr    string
		refused bool
	}{
		{"host key to a remote director", Config{HostKey: "k"}, "10.0.0.5:7070", true},
		{"host key to a named director", Config{HostKey: "k"}, "director.internal:7070", true},
		{"host key over TLS", Config{HostKey: "k", ControlTLS: &tls.Config{}}, "10.0.0.5:7070", false},
		{"host key, plain link allowed", Config{HostKey: "k", ControlInsecure: true}, "10.0.0.5:7070", false},
		{"host key on loopback", Config{HostKey: "k"}, "127.0.0.1:7070", false},
		{"host key on localhost", Config{HostKey: "k"}, "localhost:7070", false},
		{"host key on a unix socket", Config{HostKey: "k"}, "unix:/run/ley.sock", false},
		{"spawn token", Config{SpawnToken: "t"}, "10.0.0.5:7070", false},
	}
	for _, tt := range tests {
		l := &link{h: &Host{cfg: tt.cfg}}
		err := l.checkCleartext(tt.addr)
		if got := err != nil; got != tt.refused {
			t.Errorf("%s: err = %v; want refused %v", tt.name, err, tt.refused)
		}
		if err != nil && !errors.Is(err, ErrRegistration) {
			t.Errorf("%s: err = %v; want it to wrap ErrRegistration", tt.name, err)
		}
	}
}
