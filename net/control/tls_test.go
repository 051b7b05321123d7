package control

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/leyworks/ley/internal/testpki"
)

// pki is a realm CA with a director certificate for 127.0.0.1 and a host
// certificate, and a second CA nobody trusts.
type pki struct {
	ca, other        *testpki.CA
	director, host   testpki.Pair
	stranger, badSrv testpki.Pair
	noUsage          testpki.Pair
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, dir, "realm")
	other := testpki.NewCA(t, dir, "other")
	return pki{
		ca: ca, other: other,
		director: ca.Server(t, "director", []net.IP{net.IPv4(127, 0, 0, 1)}, "director.test"),
		host:     ca.Client(t, "host-1"),
		noUsage:  ca.NoUsage(t, "any-use"),
		stranger: other.Client(t, "stranger"),
		badSrv:   other.Server(t, "impostor", []net.IP{net.IPv4(127, 0, 0, 1)}),
	}
}

// acceptOne serves one connection of ln with Accept and reports it.
func acceptOne(ln net.Listener, cfg *tls.Config) (chan *Conn, chan error) {
	conns, errs := make(chan *Conn, 1), make(chan error, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			errs <- err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := Accept(ctx, nc, cfg)
		if err != nil {
			errs <- err
			return
		}
		conns <- c
	}()
	return conns, errs
}

// TestMutualTLS: a host with a certificate of the realm's CA registers
// over TLS 1.3 and the director sees who it is; a plain host is served
// plain; every other combination fails its handshake on one side.
func TestMutualTLS(t *testing.T) {
	p := newPKI(t)
	srv, err := ServerTLS(TLSFiles{Cert: p.director.Cert, Key: p.director.Key, CA: p.ca.Cert})
	if err != nil {
		t.Fatal(err)
	}
	impostor, err := ServerTLS(TLSFiles{Cert: p.badSrv.Cert, Key: p.badSrv.Key, CA: p.ca.Cert})
	if err != nil {
		t.Fatal(err)
	}
	client := func(pair testpki.Pair, serverName string) *tls.Config {
		cfg, err := ClientTLS(TLSFiles{Cert: pair.Cert, Key: pair.Key, CA: p.ca.Cert, ServerName: serverName})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	noCert := &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: client(p.host, "").RootCAs}
	tls12 := client(p.host, "")
	tls12.MinVersion, tls12.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	tests := []struct {
		name       string
		server     *tls.Config
		client     *tls.Config
		wantSecure bool
		wantCN     string
		serverErr  error // what the director's side fails with (errors.Is), when it is known
		fails      bool
	}{
		{name: "mutual TLS", server: srv, client: client(p.host, ""), wantSecure: true, wantCN: "host-1"},
		{name: "server name given", server: srv, client: client(p.host, "director.test"), wantSecure: true, wantCN: "host-1"},
		{name: "plain host, TLS listener", server: srv, client: nil},
		{name: "plain host, plain listener", server: nil, client: nil},
		{name: "TLS host, plain listener", server: nil, client: client(p.host, ""), serverErr: ErrTLSNotConfigured, fails: true},
		{name: "host certificate of another CA", server: srv, client: client(p.stranger, ""), serverErr: ErrHandshake, fails: true},
		{name: "no host certificate", server: srv, client: noCert, serverErr: ErrHandshake, fails: true},
		{name: "realm certificate with no key usage", server: srv, client: client(p.noUsage, ""), serverErr: ErrHandshake, fails: true},
		{name: "the director's own certificate as a host's", server: srv, client: client(p.director, ""), serverErr: ErrHandshake, fails: true},
		{name: "director certificate of another CA", server: impostor, client: client(p.host, ""), fails: true},
		{name: "director certificate for another name", server: srv, client: client(p.host, "elsewhere.test"), fails: true},
		{name: "TLS 1.2", server: srv, client: tls12, serverErr: ErrHandshake, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			conns, errs := acceptOne(ln, tt.server)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			hc, dialErr := DialContext(ctx, ln.Addr().String(), tt.client)
			var sendErr error
			if dialErr == nil {
				// A host speaks first (its register). TLS 1.3 also
				// finishes the client's handshake before the director
				// checked its certificate: the frame shows whether it
				// passed.
				sendErr = hc.Send(&Heartbeat{UnixMS: 1})
			}
			var sc *Conn
			var srvErr error
			select {
			case sc = <-conns:
			case srvErr = <-errs:
			}
			if sc != nil {
				_ = sc.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := sc.Recv(); err != nil {
					srvErr = err
				}
			}
			srvErr = errors.Join(srvErr, sendErr)
			if hc != nil {
				defer hc.Close()
			}
			if sc != nil {
				defer sc.Close()
			}
			failed := dialErr != nil || srvErr != nil
			if failed != tt.fails {
				t.Fatalf("dial err = %v, accept err = %v; want failure %v", dialErr, srvErr, tt.fails)
			}
			if tt.serverErr != nil && !errors.Is(srvErr, tt.serverErr) {
				t.Errorf("accept err = %v; want %v", srvErr, tt.serverErr)
			}
			if tt.fails {
				return
			}
			if got := sc.Secure(); got != tt.wantSecure {
				t.Errorf("Secure() = %v; want %v", got, tt.wantSecure)
			}
			cn := ""
			if c := sc.PeerCertificate(); c != nil {
				cn = c.Subject.CommonName
			}
			if cn != tt.wantCN {
				t.Errorf("peer certificate CN = %q; want %q", cn, tt.wantCN)
			}
			if !sc.Local() {
				t.Error("a loopback peer is not Local")
			}
		})
	}
}

// TestKeyPairReloads: a renewed certificate written over the old files is
// presented from the next handshake on.
func TestKeyPairReloads(t *testing.T) {
	p := newPKI(t)
	kp := &keyPair{cert: p.host.Cert, key: p.host.Key}
	first, err := kp.get()
	if err != nil {
		t.Fatal(err)
	}
	renewed := p.ca.Client(t, "host-1-renewed")
	for _, f := range [][2]string{{renewed.Cert, p.host.Cert}, {renewed.Key, p.host.Key}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Minute)
		if err := os.Chtimes(f[1], later, later); err != nil {
			t.Fatal(err)
		}
	}
	second, err := kp.get()
	if err != nil {
		t.Fatal(err)
	}
	if string(second.Certificate[0]) == string(first.Certificate[0]) {
		t.Error("the renewed certificate was not read")
	}
	if err := os.WriteFile(p.host.Cert, []byte("half-written"), 0o600); err != nil {
		t.Fatal(err)
	}
	third, err := kp.get()
	if err != nil || string(third.Certificate[0]) != string(second.Certificate[0]) {
		t.Errorf("a broken renewal: got err %v; want the pair read last", err)
	}
}

func TestTLSFilesRefused(t *testing.T) {
	p := newPKI(t)
	tests := []struct {
		name string
		f    TLSFiles
	}{
		{"nothing", TLSFiles{}},
		{"no CA", TLSFiles{Cert: p.host.Cert, Key: p.host.Key}},
		{"missing key", TLSFiles{Cert: p.host.Cert, Key: p.host.Key + ".none", CA: p.ca.Cert}},
		{"CA not PEM", TLSFiles{Cert: p.host.Cert, Key: p.host.Key, CA: p.host.Key}},
		{"key of another certificate", TLSFiles{Cert: p.host.Cert, Key: p.director.Key, CA: p.ca.Cert}},
	}
	for _, tt := range tests {
		if _, err := ClientTLS(tt.f); !errors.Is(err, ErrTLSFiles) {
			t.Errorf("%s: err = %v; want ErrTLSFiles", tt.name, err)
		}
		if _, err := ServerTLS(tt.f); !errors.Is(err, ErrTLSFiles) {
			t.Errorf("%s (server): err = %v; want ErrTLSFiles", tt.name, err)
		}
	}
}

func TestIsLocalAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"unix:/run/ley.sock", true},
		{"127.0.0.1:7070", true},
		{"127.9.9.9:7070", true},
		{"[::1]:7070", true},
		{"localhost:7070", true},
		{"10.0.0.5:7070", false},
		{"director.example:7070", false},
		{"[fd00::2]:7070", false},
		{"no-port", false},
	}
	for _, tt := range tests {
		if got := IsLocalAddr(tt.addr); got != tt.want {
			t.Errorf("IsLocalAddr(%q) = %v; want %v", tt.addr, got, tt.want)
		}
	}
}
