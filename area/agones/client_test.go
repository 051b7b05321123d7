package agones

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestClientCallsTheDocumentedEndpoints: each call is one request with the
// path, method, body and content type of the Agones REST SDK reference.
func TestClientCallsTheDocumentedEndpoints(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		do   func(*Client) error
		want call
	}{
		{"Ready", func(c *Client) error { return c.Ready(ctx) }, call{"POST", "/ready", "{}", "application/json"}},
		{"Health", func(c *Client) error { return c.Health(ctx) }, call{"POST", "/health", "{}", "application/json"}},
		{"Allocate", func(c *Client) error { return c.Allocate(ctx) }, call{"POST", "/allocate", "{}", "application/json"}},
		{"Shutdown", func(c *Client) error { return c.Shutdown(ctx) }, call{"POST", "/shutdown", "{}", "application/json"}},
		{"SetLabel", func(c *Client) error { return c.SetLabel(ctx, "ley-areas", "3") }, call{"PUT", "/metadata/label", `{"key":"ley-areas","value":"3"}`, "application/json"}},
		{"SetLabel empty value", func(c *Client) error { return c.SetLabel(ctx, "ley-zone", "") }, call{"PUT", "/metadata/label", `{"key":"ley-zone","value":""}`, "application/json"}},
		{"SetAnnotation", func(c *Client) error { return c.SetAnnotation(ctx, "ley-director", "ley-director:7070 / term 4") }, call{"PUT", "/metadata/annotation", `{"key":"ley-director","value":"ley-director:7070 / term 4"}`, "application/json"}},
		{"GameServer", func(c *Client) error { _, err := c.GameServer(ctx); return err }, call{"GET", "/gameserver", "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := startSidecar(t)
			if err := tt.do(c); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			got := s.Calls(true)
			if len(got) != 1 || got[0] != tt.want {
				t.Fatalf("calls = %s; want %s", callsString(got), tt.want)
			}
		})
	}
}

// TestClientDecodesTheGameServer reads the sidecar's documented answer.
func TestClientDecodesTheGameServer(t *testing.T) {
	s, c := startSidecar(t)
	s.setStatus(map[string]any{"state": "Ready", "address": "203.0.113.7", "ports": []any{map[string]any{"name": "client", "port": 7342}}})
	s.gs["spec"] = map[string]any{"health": map[string]any{"period_seconds": 5, "failure_threshold": 3, "initial_delay_seconds": 10}}
	s.gs["object_meta"].(map[string]any)["labels"] = map[string]any{"agones.dev/sdk-ley-areas": "2"}
	gs, err := c.GameServer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if gs.ObjectMeta.Name != "ley-hosts-x7k2p-abcde" || gs.ObjectMeta.Namespace != "ley" || gs.ObjectMeta.Labels["agones.dev/sdk-ley-areas"] != "2" {
		t.Errorf("object meta = %+v", gs.ObjectMeta)
	}
	if gs.Status.State != "Ready" || gs.Status.Address != "203.0.113.7" || len(gs.Status.Ports) != 1 || gs.Status.Ports[0] != (Port{"client", 7342}) {
		t.Errorf("status = %+v", gs.Status)
	}
	if gs.Spec.Health != (Health{PeriodSeconds: 5, FailureThreshold: 3, InitialDelaySeconds: 10}) {
		t.Errorf("health = %+v", gs.Spec.Health)
	}
}

// TestClientErrors: a non-2xx answer is a *StatusError (ErrStatus), an
// unreachable sidecar is ErrUnreachable, a done context is the context's
// error and not ErrUnreachable.
func TestClientErrors(t *testing.T) {
	ctx := context.Background()
	for _, code := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		s, c := startSidecar(t)
		s.failNext("/ready", code)
		err := c.Ready(ctx)
		var se *StatusError
		if !errors.Is(err, ErrStatus) || !errors.As(err, &se) || se.Code != code || se.Path != "/ready" || se.Method != "POST" {
			t.Errorf("status %d: err = %v; want a *StatusError with that code", code, err)
			continue
		}
		if !strings.Contains(se.Body, "injected failure") {
			t.Errorf("status %d: body = %q; want the sidecar's message", code, se.Body)
		}
		if got, want := retryable(err), code >= 500; got != want {
			t.Errorf("status %d: retryable = %v; want %v", code, got, want)
		}
	}

	// Nothing listens on a port that was just closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := DefaultClientConfig()
	cfg.BaseURL = "http://" + addr
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Health(ctx); !errors.Is(err, ErrUnreachable) || !retryable(err) {
		t.Errorf("closed port: err = %v; want ErrUnreachable", err)
	}

	// A sidecar that never answers: the client's timeout ends the call.
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer srv.Close()
	defer close(hang)
	cfg.BaseURL, cfg.Timeout = srv.URL, 50*time.Millisecond
	c, err = NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Health(ctx); !errors.Is(err, ErrUnreachable) {
		t.Errorf("hung sidecar: err = %v; want ErrUnreachable", err)
	}

	cfg.Timeout = time.Minute
	c, err = NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Health(cctx); !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnreachable) {
		t.Errorf("cancelled: err = %v; want context.Canceled only", err)
	}
}

// TestSetLabelRejectsInvalidLabels: keys and values Kubernetes would refuse
// once prefixed are errors before anything is sent.
func TestSetLabelRejectsInvalidLabels(t *testing.T) {
	s, c := startSidecar(t)
	ctx := context.Background()
	long := strings.Repeat("k", 60) // "sdk-" + 60 = 64 > 63
	for _, kv := range [][2]string{
		{"", "1"},
		{"ley.dev/areas", "1"}, // a prefixed key can hold only one '/'
		{"ley-", "1"},
		{"ley areas", "1"},
		{long, "1"},
		{"ley-areas", "-1"},
		{"ley-areas", "a b"},
		{"ley-areas", strings.Repeat("9", 64)},
	} {
		if err := c.SetLabel(ctx, kv[0], kv[1]); !errors.Is(err, ErrBadLabel) {
			t.Errorf("SetLabel(%q, %q) = %v; want ErrBadLabel", kv[0], kv[1], err)
		}
	}
	if err := c.SetAnnotation(ctx, "ley/x", "anything"); !errors.Is(err, ErrBadLabel) {
		t.Errorf("SetAnnotation with '/' in key = %v; want ErrBadLabel", err)
	}
	if got := s.Calls(true); len(got) != 0 {
		t.Errorf("calls = %s; want none", callsString(got))
	}
	if err := c.SetLabel(ctx, strings.Repeat("k", 59), strings.Repeat("9", 63)); err != nil {
		t.Errorf("longest valid label: %v", err)
	}
}

// TestBaseURLFromEnv reads AGONES_SDK_HTTP_PORT as Agones sets it.
func TestBaseURLFromEnv(t *testing.T) {
	tests := []struct {
		env, want string
		bad       bool
	}{
		{"", "http://localhost:9358", false},
		{"9400", "http://localhost:9400", false},
		{" 9401 ", "http://localhost:9401", false},
		{"http", "", true},
		{"0", "", true},
		{"65536", "", true},
	}
	for _, tt := range tests {
		t.Setenv(PortEnv, tt.env)
		got, err := BaseURLFromEnv()
		if tt.bad {
			if !errors.Is(err, ErrBadPort) {
				t.Errorf("%s=%q: err = %v; want ErrBadPort", PortEnv, tt.env, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s=%q: got %q, %v; want %q", PortEnv, tt.env, got, err, tt.want)
		}
	}
}

// TestNewClientValidates refuses a config that cannot work.
func TestNewClientValidates(t *testing.T) {
	for _, cfg := range []ClientConfig{
		{BaseURL: "", Timeout: time.Second},
		{BaseURL: "localhost:9358", Timeout: time.Second},
		{BaseURL: "ftp://localhost:9358", Timeout: time.Second},
		{BaseURL: "http://localhost:9358", Timeout: 0},
	} {
		if _, err := NewClient(cfg); err == nil {
			t.Errorf("NewClient(%+v) succeeded; want an error", cfg)
		}
	}
}
