package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
