package control

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Sentinel errors of the control channel's transport.
var (
	// ErrTLSNotConfigured: a peer opened with a TLS handshake on a
	// listener that serves no TLS.
	ErrTLSNotConfigured = errors.New("control: TLS handshake on a listener without TLS")
	// ErrTLSFiles: a TLS configuration's files are missing, unreadable or
	// not a certificate, key or CA bundle.
	ErrTLSFiles = errors.New("control: TLS files")
	// ErrHandshake: a TLS handshake failed (a peer without a certificate,
	// or with one the other side does not trust, or an old TLS version).
	ErrHandshake = errors.New("control: TLS handshake failed")
)

// UserTimeout bounds how long a frame a host sent may stay unacknowledged
// by the director's machine before the host's kernel ends the link (TCP
// user timeout, Linux): a host sends a heartbeat every second, so a
// director whose machine vanished (no FIN, no RST) is noticed in this
// long, not after the kernel's retransmissions give up (about 15 min).
const UserTimeout = 10 * time.Second

// recordTypeHandshake is the first byte of every TLS connection (a
// ClientHello record). A plain control frame starts with the high byte of
// its length, at most MaxFrameSize>>24 = 1: the two never meet.
const recordTypeHandshake = 0x16

// TLSFiles names the PEM files of one side of the control channel's TLS.
type TLSFiles struct {
	// Cert and Key are this side's certificate chain and private key.
	// They are read again when they change on disk (a renewal), at the
	// next handshake.
	Cert, Key string
	// CA is the bundle that verifies the other side's certificate: the
	// hosts' client certificates on the director, the director's
	// certificate on a host.
	CA string
	// ServerName, on a host, is the name the director's certificate must
	// carry; "" means the host part of the address dialed.
	ServerName string
}

// ServerTLS returns the director's control TLS configuration: TLS 1.3
// only, f's certificate, and a client certificate required from every
// peer that opens with TLS, verified against f.CA (mutual TLS).
func ServerTLS(f TLSFiles) (*tls.Config, error) {
	kp, pool, err := loadTLS(f)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS13,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return kp.get() },
		ClientAuth:     tls.RequireAndVerifyClientCert,
		ClientCAs:      pool,
		// Go takes a certificate naming no extended key usage as good for
		// any: a realm certificate issued for something else (a web
		// server's, an operator's) would pass as a host's. A host's must
		// say client authentication.
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) > 0 && !slices.Contains(cs.PeerCertificates[0].ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
				return errors.New("the host's certificate does not name client authentication among its extended key usages")
			}
			return nil
		},
	}, nil
}

// ClientTLS returns a host's control TLS configuration: TLS 1.3 only, f's
// certificate presented to the director, and the director's certificate
// verified against f.CA for f.ServerName (or the host dialed).
func ClientTLS(f TLSFiles) (*tls.Config, error) {
	kp, pool, err := loadTLS(f)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:           tls.VersionTLS13,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return kp.get() },
		RootCAs:              pool,
		ServerName:           f.ServerName,
	}, nil
}

// loadTLS reads f's key pair and CA bundle.
func loadTLS(f TLSFiles) (*keyPair, *x509.CertPool, error) {
	if f.Cert == "" || f.Key == "" || f.CA == "" {
		return nil, nil, fmt.Errorf("%w: a certificate, its key and a CA bundle are all needed", ErrTLSFiles)
	}
	kp := &keyPair{cert: f.Cert, key: f.Key}
	if _, err := kp.get(); err != nil {
		return nil, nil, err
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: CA bundle: %w", ErrTLSFiles, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, nil, fmt.Errorf("%w: CA bundle %s holds no PEM certificate", ErrTLSFiles, f.CA)
	}
	return kp, pool, nil
}

// keyPair is a certificate and key read from files, read again when
// either file's size or modification time changes. Safe for concurrent
// use.
type keyPair struct {
	cert, key string

	mu    sync.Mutex // guards the fields below
	tc    *tls.Certificate
	stamp string // the files' sizes and modification times when tc was read
}

// get returns the key pair, reading the files again if they changed. A
// failed re-read keeps the pair read last (a renewal caught half-written
// is read at the next handshake).
func (k *keyPair) get() (*tls.Certificate, error) {
	stamp, err := fileStamp(k.cert, k.key)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err == nil && stamp == k.stamp && k.tc != nil {
		return k.tc, nil
	}
	tc, lerr := tls.LoadX509KeyPair(k.cert, k.key)
	if err = errors.Join(err, lerr); err != nil {
		if k.tc != nil {
			return k.tc, nil
		}
		return nil, fmt.Errorf("%w: key pair %s, %s: %w", ErrTLSFiles, k.cert, k.key, err)
	}
	k.tc, k.stamp = &tc, stamp
	return k.tc, nil
}

// fileStamp is the size and modification time of each of paths.
func fileStamp(paths ...string) (string, error) {
	var b strings.Builder
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%d:%d;", fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String(), nil
}

// Accept readies a connection a control listener accepted: one that
// opens with a TLS handshake is served TLS with cfg (ErrTLSNotConfigured
// when cfg is nil) and returned once the handshake is done; any other is
// plain. ctx bounds the wait for the first byte and the handshake (the
// caller's read deadline on nc applies too). On an error nc is closed.
func Accept(ctx context.Context, nc net.Conn, cfg *tls.Config) (*Conn, error) {
	nc = quiet(nc)
	stop := context.AfterFunc(ctx, func() { _ = nc.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	br := bufio.NewReaderSize(nc, 1)
	first, err := br.Peek(1)
	if err != nil {
		nc.Close()
		return nil, err
	}
	pc := &peekedConn{Conn: nc, r: br}
	if first[0] != recordTypeHandshake {
		return NewConn(pc), nil
	}
	if cfg == nil {
		nc.Close()
		return nil, ErrTLSNotConfigured
	}
	tc := tls.Server(pc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		tc.Close()
		return nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	return NewConn(tc), nil
}

// peekedConn is a net.Conn whose first bytes were read into r by a peek.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (p *peekedConn) Read(b []byte) (int, error) {
	if p.r.Buffered() > 0 {
		return p.r.Read(b)
	}
	return p.Conn.Read(b)
}

// DialContext connects to a control listener at addr: "unix:/path" for a
// unix socket, anything else a TCP host:port. With cfg it speaks TLS and
// returns once the handshake is done, having verified the director's
// certificate for cfg.ServerName, or for addr's host when that is empty.
// ctx bounds the dial and the handshake. A TCP link ends when a frame
// stays unacknowledged for UserTimeout (Linux).
func DialContext(ctx context.Context, addr string, cfg *tls.Config) (*Conn, error) {
	network := "tcp"
	if a, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, addr = "unix", a
	}
	d := net.Dialer{Control: dialControl}
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("dial director %s: %w", addr, err)
	}
	nc = quiet(nc)
	if cfg == nil {
		return NewConn(nc), nil
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("dial director %s: %w", addr, err)
		}
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		tc.Close()
		return nil, fmt.Errorf("dial director %s: %w: %w", addr, ErrHandshake, err)
	}
	return NewConn(tc), nil
}

// Secure reports whether the connection is TLS.
func (c *Conn) Secure() bool {
	_, ok := c.nc.(*tls.Conn)
	return ok
}

// PeerCertificate returns the peer's certificate as the TLS handshake
// verified it (the leaf of its first verified chain), or nil on a plain
// connection or one whose peer sent none.
func (c *Conn) PeerCertificate() *x509.Certificate {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return nil
	}
	st := tc.ConnectionState()
	if len(st.VerifiedChains) == 0 || len(st.VerifiedChains[0]) == 0 {
		return nil
	}
	return st.VerifiedChains[0][0]
}

// Local reports whether the peer is on this machine: a unix socket, or a
// TCP peer on a loopback address.
func (c *Conn) Local() bool {
	switch a := c.nc.RemoteAddr().(type) {
	case *net.UnixAddr:
		return true
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	}
	return false
}

// IsLocalAddr reports whether a control address names this machine: a
// unix socket, "localhost", or a loopback IP. Other names are not looked
// up (a name may resolve elsewhere tomorrow).
func IsLocalAddr(addr string) bool {
	if strings.HasPrefix(addr, "unix:") {
		return true
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
