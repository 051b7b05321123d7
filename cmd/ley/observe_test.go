package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPyroscopePushes: with LEY_PYROSCOPE_URL set, profiles are pushed to
// that server's /ingest as application ley.<role> with the role tag.
func TestPyroscopePushes(t *testing.T) {
	var mu sync.Mutex
	var names []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/ingest" {
			mu.Lock()
			names = append(names, r.URL.Query().Get("name"))
			mu.Unlock()
		}
	}))
	defer srv.Close()
	t.Setenv("LEY_PYROSCOPE_URL", srv.URL)
	t.Setenv("LEY_PYROSCOPE_UPLOAD_RATE", "200ms")
	stop, err := startPyroscope("areahost", "test-host", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		got := append([]string(nil), names...)
		mu.Unlock()
		found := false
		for _, n := range got {
			if strings.HasPrefix(n, "ley.areahost") && strings.Contains(n, "role=areahost") && strings.Contains(n, "name=test-host") {
				found = true
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no profile pushed as ley.areahost{role=areahost,...}; got %q", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
}

func TestPprofLoopbackOnly(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	if _, _, err := startPprof("0.0.0.0:0", log); err == nil {
		t.Fatal("pprof served on a non-loopback address")
	}
	addr, stop, err := startPprof("127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "goroutine") {
		t.Fatalf("pprof answered %d %.80q", resp.StatusCode, body)
	}
}

func TestRedactArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no secrets", []string{"ley", "run", "--http", "x"}, []string{"ley", "run", "--http", "x"}},
		{"a value after the flag", []string{"ley", "director", "--host-key", "k", "--http", "x"}, []string{"ley", "director", "--host-key", "[redacted]", "--http", "x"}},
		{"an inline value", []string{"ley", "run", "--demo-password=pw"}, []string{"ley", "run", "--demo-password=[redacted]"}},
		{"a single dash", []string{"ley", "areahost", "-spawn-token", "t"}, []string{"ley", "areahost", "-spawn-token", "[redacted]"}},
		{"a database url", []string{"ley", "migrate", "--database-url", "postgres://u@db/x"}, []string{"ley", "migrate", "--database-url", "[redacted]"}},
		{"the load tools' passwords", []string{"ley", "load", "--admin-password", "a", "--password=p"}, []string{"ley", "load", "--admin-password", "[redacted]", "--password=[redacted]"}},
		{"a secret flag last, without a value", []string{"ley", "run", "--host-key"}, []string{"ley", "run", "--host-key"}},
		{"after --", []string{"ley", "run", "--", "--host-key", "k"}, []string{"ley", "run", "--", "--host-key", "k"}},
	}
	for _, tt := range tests {
		if got := redactArgs(tt.args); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: redactArgs = %q; want %q", tt.name, got, tt.want)
		}
	}
}

// TestPprofCmdlineHoldsNoSecret (issue 12, finding 5): /debug/pprof/cmdline
// serves the command line with every secret flag's value redacted.
func TestPprofCmdlineHoldsNoSecret(t *testing.T) {
	saved := os.Args
	os.Args = []string{"ley", "director", "--host-key", "hk-4711", "--database-url=postgres://u:db-4711@h/x", "--http", "127.0.0.1:1"}
	defer func() { os.Args = saved }()
	addr, stop, err := startPprof("127.0.0.1:0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "127.0.0.1:1") {
		t.Fatalf("cmdline answered %d %q", resp.StatusCode, body)
	}
	for _, secret := range []string{"hk-4711", "db-4711"} {
		if strings.Contains(string(body), secret) {
			t.Errorf("cmdline shows %q: %q", secret, body)
		}
	}
}
