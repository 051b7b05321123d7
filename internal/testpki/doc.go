// Package testpki makes throwaway certificate authorities and
// certificates for tests of the control channel's mutual TLS and of wss://
// through a TLS-terminating proxy: a realm CA, server certificates for
// given addresses (a director's, a proxy's), and client certificates (an
// area host's), written as PEM files the way an operator hands them to
// ley's --control-tls-* flags.
package testpki
