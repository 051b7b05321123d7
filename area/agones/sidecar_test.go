package agones

// The Agones SDK sidecar is the one real component this package cannot run
// here: it is a container image Agones injects into a GameServer's Pod, it
// needs a Kubernetes API server and the Agones controller to act on what it
// is told, and neither its image nor the Agones Go module can be fetched on
// this machine. So the tests run against fakeSidecar, a small HTTP server
// that implements the endpoints the Agones REST SDK documents (path,
// method, JSON body; 404 for any other path, 405 for another method, 400
// for a body that is not the documented one) and records every call.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// call is one request the fake sidecar received.
type call struct {
	Method, Path, Body, ContentType string
}

func (c call) String() string { return c.Method + " " + c.Path + " " + c.Body }

// fakeSidecar implements the documented Agones SDK REST endpoints.
type fakeSidecar struct {
	mu    sync.Mutex
	calls []call
	fail  map[string][]int // path -> status codes to answer with, one per call, before succeeding
	gs    map[string]any   // the answer to GET /gameserver, in the sidecar's snake_case JSON
}

// documented lists the endpoints: path -> method and body kind.
var documented = map[string]struct {
	method string
	body   string // "empty": {}; "kv": {"key","value"}; "": none
}{
	"/ready":               {http.MethodPost, "empty"},
	"/health":              {http.MethodPost, "empty"},
	"/allocate":            {http.MethodPost, "empty"},
	"/shutdown":            {http.MethodPost, "empty"},
	"/metadata/label":      {http.MethodPut, "kv"},
	"/metadata/annotation": {http.MethodPut, "kv"},
	"/gameserver":          {http.MethodGet, ""},
}

func newFakeSidecar() *fakeSidecar {
	return &fakeSidecar{fail: map[string][]int{}, gs: map[string]any{
		"object_meta": map[string]any{"name": "ley-hosts-x7k2p-abcde", "namespace": "ley", "uid": "1234", "resource_version": "v1", "generation": "1", "creation_timestamp": "1531795395"},
		"status":      map[string]any{"state": "Scheduled"},
	}}
}

func (s *fakeSidecar) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call{Method: r.Method, Path: r.URL.Path, Body: compact(body), ContentType: r.Header.Get("Content-Type")})
	ep, ok := documented[r.URL.Path]
	switch {
	case !ok:
		http.Error(w, `{"code":5,"message":"Not Found"}`, http.StatusNotFound)
		return
	case r.Method != ep.method:
		http.Error(w, `{"code":12,"message":"Method Not Allowed"}`, http.StatusMethodNotAllowed)
		return
	}
	if err := checkBody(ep.body, body, r.Header.Get("Content-Type")); err != nil {
		http.Error(w, fmt.Sprintf(`{"code":3,"message":%q}`, err.Error()), http.StatusBadRequest)
		return
	}
	if codes := s.fail[r.URL.Path]; len(codes) > 0 {
		s.fail[r.URL.Path] = codes[1:]
		http.Error(w, `{"code":14,"message":"injected failure"}`, codes[0])
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/gameserver" {
		_ = json.NewEncoder(w).Encode(s.gs)
		return
	}
	_, _ = io.WriteString(w, "{}")
}

// checkBody enforces the documented request bodies.
func checkBody(kind string, body []byte, contentType string) error {
	switch kind {
	case "":
		if len(bytes.TrimSpace(body)) != 0 {
			return fmt.Errorf("unexpected body %q", body)
		}
		return nil
	case "empty":
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil || len(m) != 0 {
			return fmt.Errorf("body %q: want {}", body)
		}
	case "kv":
		var kv struct{ Key, Value string }
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&kv); err != nil || kv.Key == "" {
			return fmt.Errorf("body %q: want {\"key\":...,\"value\":...}", body)
		}
	}
	if contentType != "application/json" {
		return fmt.Errorf("content type %q: want application/json", contentType)
	}
	return nil
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

// failNext makes the next calls to path answer with codes, in order.
func (s *fakeSidecar) failNext(path string, codes ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[path] = append(s.fail[path], codes...)
}

// setStatus sets the GameServer's status answered on GET /gameserver.
func (s *fakeSidecar) setStatus(st map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gs["status"] = st
}

// Calls returns a copy of the calls so far, leaving out health pings and
// GameServer reads unless all is set.
func (s *fakeSidecar) Calls(all bool) []call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []call
	for _, c := range s.calls {
		if all || (c.Path != "/health" && c.Path != "/gameserver") {
			out = append(out, c)
		}
	}
	return out
}

// count returns how many calls to path were received.
func (s *fakeSidecar) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c.Path == path {
			n++
		}
	}
	return n
}

// startSidecar serves a fakeSidecar on a real loopback socket and returns a
// Client for it.
func startSidecar(t *testing.T) (*fakeSidecar, *Client) {
	t.Helper()
	s := newFakeSidecar()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := DefaultClientConfig()
	cfg.BaseURL = srv.URL
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// pipeSidecar serves a fakeSidecar over in-memory net.Pipe connections, so
// a test inside a synctest bubble can speak real HTTP to it (a loopback
// socket is not durably blocking, so fake time would never advance). Call
// it inside the bubble; close stops the server and its connections.
func pipeSidecar(t *testing.T) (s *fakeSidecar, c *Client, closeAll func()) {
	t.Helper()
	s = newFakeSidecar()
	ln := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: s}
	go func() { _ = srv.Serve(ln) }()
	tr := &http.Transport{DialContext: ln.dial}
	cfg := DefaultClientConfig()
	cfg.BaseURL = "http://sidecar.test:9358"
	cfg.HTTPClient = &http.Client{Transport: tr, Timeout: cfg.Timeout}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, c, func() {
		tr.CloseIdleConnections()
		_ = srv.Close()
	}
}

// pipeListener is a net.Listener whose connections are net.Pipe ends.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	cli, srv := net.Pipe()
	select {
	case l.conns <- srv:
		return cli, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "sidecar.test:9358" }

// callsString renders calls one per line, for failure messages.
func callsString(cs []call) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("\n\t" + c.String())
	}
	return b.String()
}
