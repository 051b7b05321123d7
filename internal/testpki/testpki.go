package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority whose files live in a test's directory.
type CA struct {
	// Cert is the path of the CA's certificate (the bundle the other
	// side verifies with).
	Cert string
	dir  string
	crt  *x509.Certificate
	key  *ecdsa.PrivateKey
	n    int64
}

// Pair is a certificate and its key, as files.
type Pair struct {
	Cert, Key string
}

// NewCA makes a CA named name with its files under dir.
func NewCA(tb testing.TB, dir, name string) *CA {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	crt, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	ca := &CA{dir: dir, crt: crt, key: key, n: 1, Cert: filepath.Join(dir, name+"-ca.pem")}
	writePEM(tb, ca.Cert, "CERTIFICATE", der)
	return ca
}

// Server issues a server certificate for name, valid for the given IP
// addresses and DNS names.
func (ca *CA) Server(tb testing.TB, name string, ips []net.IP, dns ...string) Pair {
	tb.Helper()
	return ca.issue(tb, name, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, ips, dns)
}

// Client issues a client certificate (an area host's) for name.
func (ca *CA) Client(tb testing.TB, name string) Pair {
	tb.Helper()
	return ca.issue(tb, name, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil, nil)
}

// NoUsage issues a certificate for name that names no extended key usage
// (which Go's verifier takes as any usage).
func (ca *CA) NoUsage(tb testing.TB, name string) Pair {
	tb.Helper()
	return ca.issue(tb, name, nil, nil, nil)
}

func (ca *CA) issue(tb testing.TB, name string, usage []x509.ExtKeyUsage, ips []net.IP, dns []string) Pair {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	ca.n++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.n),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usage,
		IPAddresses:  ips,
		DNSNames:     dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.crt, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	p := Pair{Cert: filepath.Join(ca.dir, name+".pem"), Key: filepath.Join(ca.dir, name+"-key.pem")}
	writePEM(tb, p.Cert, "CERTIFICATE", der)
	writePEM(tb, p.Key, "PRIVATE KEY", kder)
	return p
}

func writePEM(tb testing.TB, path, typ string, der []byte) {
	tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		tb.Fatal(err)
	}
}
