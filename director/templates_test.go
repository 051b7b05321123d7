package director

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store/sqlite"
)

// mapSize returns the size of template's map in the embedded content.
func mapSize(t testing.TB, template string) (w, h int) {
	t.Helper()
	tt, err := content.Default().Template(template)
	if err != nil {
		t.Fatal(err)
	}
	return tt.Map.W, tt.Map.H
}

// TestNewAreaKindsAndTemplates: POST /v1/areas takes a kind, a template,
// both or neither; a template of the content sets the size; the built-in
// empty takes any; every refusal says what was wrong, with its code.
// Every answer (the refusals too) is held to openapi.yaml.
func TestNewAreaKindsAndTemplates(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0; c.MaxOwnedAreas = 0 })
	c, _ := r.player("maker")
	homeW, homeH := mapSize(t, "home")
	villageW, villageH := mapSize(t, "village")
	arenaW, arenaH := mapSize(t, "arena")
	tests := []struct {
		name string
		body string
		// want on success: kind, template, w x h; on a refusal: the code
		// and words of its message.
		kind, template string
		w, h           int
		code           string
		words          []string
	}{
		{name: "neither: a home", body: `{"name":"A"}`, kind: "home", template: "home", w: homeW, h: homeH},
		{name: "a kind: its default template", body: `{"name":"A","kind":"village"}`, kind: "village", template: "village", w: villageW, h: villageH},
		{name: "a template: its kind", body: `{"name":"A","template":"arena"}`, kind: "arena", template: "arena", w: arenaW, h: arenaH},
		{name: "both, and the map's size", body: fmt.Sprintf(`{"name":"A","kind":"arena","template":"arena","w":%d,"h":%d}`, arenaW, arenaH),
			kind: "arena", template: "arena", w: arenaW, h: arenaH},
		{name: "a template of another kind's rules", body: `{"name":"A","template":"offline"}`, kind: "offline", template: "offline", w: homeW, h: homeH},
		{name: "empty of a kind", body: `{"name":"A","kind":"village","template":"empty","w":32,"h":16}`, kind: "village", template: "empty", w: 32, h: 16},
		{name: "empty, no kind: a home", body: `{"name":"A","template":"empty","w":8,"h":1024}`, kind: "home", template: "empty", w: 8, h: 1024},

		{name: "unknown template", body: `{"name":"A","template":"castle"}`, code: codeUnknownTemplate,
			words: []string{`"castle"`, "arena", "empty", "home", "offline", "village"}},
		{name: "template and kind disagree", body: `{"name":"A","kind":"home","template":"arena"}`, code: codeTemplateKind,
			words: []string{`"arena"`, `"home"`}},
		{name: "a size other than the map's", body: `{"name":"A","template":"village","w":64,"h":64}`, code: "BAD_REQUEST",
			words: []string{fmt.Sprintf("%dx%d", villageW, villageH)}},
		{name: "a size with a kind's default", body: `{"name":"A","kind":"home","w":32,"h":32}`, code: "BAD_REQUEST",
			words: []string{fmt.Sprintf("%dx%d", homeW, homeH), "empty"}},
		{name: "unknown kind", body: `{"name":"A","kind":"castle"}`, code: "BAD_REQUEST",
			words: []string{`"castle"`, "arena, home, offline, village"}},
		{name: "empty without a size", body: `{"name":"A","template":"empty"}`, code: "BAD_REQUEST", words: []string{"w and h"}},
		{name: "empty too small", body: `{"name":"A","template":"empty","w":4,"h":16}`, code: "BAD_REQUEST", words: []string{"8..1024"}},
		{name: "empty of an unknown kind", body: `{"name":"A","kind":"castle","template":"empty","w":16,"h":16}`, code: "BAD_REQUEST",
			words: []string{"unknown area kind"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := r.call(http.DefaultClient, "POST", "/v1/areas", c.Token, tt.body)
			if tt.code != "" {
				if a.Status != http.StatusBadRequest || a.Code != tt.code {
					t.Fatalf("POST /v1/areas %s: %d %s; want 400 %s", tt.body, a.Status, a.Raw, tt.code)
				}
				for _, w := range tt.words {
					if !strings.Contains(a.Message, w) {
						t.Errorf("message %q lacks %q", a.Message, w)
					}
				}
				return
			}
			if a.Status != http.StatusCreated {
				t.Fatalf("POST /v1/areas %s: %d %s", tt.body, a.Status, a.Raw)
			}
			var got dirclient.Area
			if err := json.Unmarshal([]byte(a.Raw), &got); err != nil {
				t.Fatal(err)
			}
			if got.Kind != tt.kind || got.Template != tt.template || got.W != tt.w || got.H != tt.h {
				t.Errorf("created %+v; want kind %s, template %s, %dx%d", got, tt.kind, tt.template, tt.w, tt.h)
			}
			again, err := c.Area(context.Background(), got.ID)
			if err != nil || again != got {
				t.Errorf("GET /v1/areas/%d = %+v, %v; want %+v", got.ID, again, err, got)
			}
		})
	}
}

// TestGetArea: an Area's members read it; anyone else, and a missing
// Area, get NO_SUCH_AREA alike. The list carries templates too.
func TestGetArea(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0 })
	ctx := context.Background()
	owner, _ := r.player("owner")
	other, _ := r.player("other")
	a, err := owner.NewArea(ctx, dirclient.NewAreaRequest{Name: "Arena", Template: "arena"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := owner.Area(ctx, a.ID); err != nil || got.Template != "arena" || got.Kind != "arena" {
		t.Errorf("the owner's GET = %+v, %v; want the arena", got, err)
	}
	if _, err := other.Area(ctx, a.ID); refusal(t, err) != "NO_SUCH_AREA" {
		t.Errorf("another's GET: %v; want NO_SUCH_AREA", err)
	}
	if _, err := owner.Area(ctx, a.ID+1000); refusal(t, err) != "NO_SUCH_AREA" {
		t.Errorf("GET of a missing Area: %v; want NO_SUCH_AREA", err)
	}
	var list struct {
		Areas []dirclient.Area `json:"areas"`
	}
	if err := owner.Do(ctx, "GET", "/v1/areas", nil, &list); err != nil || len(list.Areas) != 1 || list.Areas[0].Template != "arena" {
		t.Errorf("GET /v1/areas = %+v, %v; want the arena with its template", list, err)
	}
}

// TestProvisionTemplates: the bulk path follows POST /v1/areas's rules:
// the load driver's open floors, a template's map, and refusals.
func TestProvisionTemplates(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0 })
	ctx := context.Background()
	admin, acct := r.player("admin")
	r.admin(acct)
	arenaW, arenaH := mapSize(t, "arena")
	tests := []struct {
		name           string
		req            dirclient.ProvisionRequest
		kind, template string
		w, h           int
		code           string
	}{
		{"empty floors", dirclient.ProvisionRequest{Template: "empty", W: 64, H: 64}, "village", "empty", 64, 64, ""},
		{"a template", dirclient.ProvisionRequest{Template: "arena"}, "arena", "arena", arenaW, arenaH, ""},
		{"the default: a village", dirclient.ProvisionRequest{}, "village", "village", 0, 0, ""},
		{"an old request: a size without a template", dirclient.ProvisionRequest{Kind: "village", W: 32, H: 32}, "", "", 0, 0, "BAD_REQUEST"},
		{"unknown template", dirclient.ProvisionRequest{Template: "castle"}, "", "", 0, 0, codeUnknownTemplate},
		{"kind mismatch", dirclient.ProvisionRequest{Kind: "home", Template: "village"}, "", "", 0, 0, codeTemplateKind},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			req.Prefix, req.Count, req.Areas, req.Password = fmt.Sprintf("p%d", i), 2, 1, "load-password"
			_, areas, err := admin.Provision(ctx, req)
			if tt.code != "" {
				if got := refusal(t, err); got != tt.code {
					t.Fatalf("provision %+v: %s; want %s", tt.req, got, tt.code)
				}
				return
			}
			if err != nil || len(areas) != 1 {
				t.Fatalf("provision %+v: %v, %v", tt.req, areas, err)
			}
			a, err := admin.Area(ctx, areas[0])
			if err != nil {
				t.Fatal(err)
			}
			w, h := tt.w, tt.h
			if w == 0 {
				w, h = mapSize(t, tt.template)
			}
			if a.Kind != tt.kind || a.Template != tt.template || a.W != w || a.H != h {
				t.Errorf("provisioned %+v; want kind %s, template %s, %dx%d", a, tt.kind, tt.template, w, h)
			}
		})
	}
}

// TestContentMayNotDefineEmpty: a content folder with a template named
// "empty" (the built-in one's name) is refused at New, saying so.
func TestContentMayNotDefineEmpty(t *testing.T) {
	dir := t.TempDir()
	templates := `{"templates": [{"name": "empty", "rules": "home", "map": "maps/home.tmj"}]}`
	if err := os.WriteFile(filepath.Join(dir, content.TemplatesFile), []byte(templates), 0o600); err != nil {
		t.Fatal(err)
	}
	lib, err := content.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := testConfig()
	cfg.Content = lib
	if _, err := New(cfg, st); err == nil || !strings.Contains(err.Error(), `template named "empty"`) {
		t.Errorf("New with a content template named empty: %v; want it refused", err)
	}
}

// TestSpawnedHostsGetTheContent: the hosts a director spawns are given
// its content folder (--content), and start with it.
func TestSpawnedHostsGetTheContent(t *testing.T) {
	dir := t.TempDir()
	rules := `{"rules": [{"name": "forest", "max_players": 16, "steps_per_second": 5}]}`
	templates := `{"templates": [{"name": "forest", "rules": "forest", "map": "maps/home.tmj"}]}`
	for name, body := range map[string]string{content.RulesFile: rules, content.TemplatesFile: templates} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := content.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := startRealm(t, func(c *Config) { c.Content, c.Spawn.Content = lib, dir })
	args := spawnedHostArgs(t, r)
	if i := slices.Index(args, "--content"); i < 0 || i+1 >= len(args) || args[i+1] != dir {
		t.Errorf("the spawned host's command line %q lacks --content %s", strings.Join(args, " "), dir)
	}
	c, _ := r.player("forester")
	if a, err := c.NewArea(context.Background(), dirclient.NewAreaRequest{Name: "Wood", Kind: "forest"}); err != nil || a.Template != "forest" {
		t.Errorf("an Area of the folder's kind: %+v, %v; want template forest", a, err)
	}
}

// TestSpawnedHostsAllowTheDirectorsPages: the hosts a director spawns
// accept player connections from the pages it serves (its own web origin,
// both loopback names when it listens on loopback), and from no other site.
func TestSpawnedHostsAllowTheDirectorsPages(t *testing.T) {
	r := startRealm(t, nil)
	args := spawnedHostArgs(t, r)
	i := slices.Index(args, "--allowed-origins")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("the spawned host's command line %q has no --allowed-origins", strings.Join(args, " "))
	}
	_, port, _ := net.SplitHostPort(r.d.httpAddr)
	got := strings.Split(args[i+1], ",")
	for _, want := range []string{"http://127.0.0.1:" + port, "http://localhost:" + port} {
		if !slices.Contains(got, want) {
			t.Errorf("allowed origins %v lack %s", got, want)
		}
	}
	r.d.cfg.WebOrigins = []string{"https://game.example"}
	if got := r.d.webOrigins(); !slices.Equal(got, []string{"https://game.example"}) {
		t.Errorf("with WebOrigins set, the hosts get %v; want exactly them", got)
	}
}

// TestSpawnedHostsWriteAsTold: Spawn.Writev reaches the hosts a director
// spawns as --writev, and without it they are not given the flag; and
// Spawn.ShutdownGrace reaches them as --shutdown-grace, Spawn.HugePages
// as --huge-pages=true or =false.
func TestSpawnedHostsWriteAsTold(t *testing.T) {
	for _, writev := range []bool{false, true} {
		huge := !writev
		r := startRealm(t, func(c *Config) { c.Spawn.Writev = writev; c.Spawn.HugePages = huge })
		args := spawnedHostArgs(t, r)
		if got := slices.Contains(args, "--writev"); got != writev {
			t.Errorf("Spawn.Writev %v: the spawned host's command line %q has --writev: %v", writev, strings.Join(args, " "), got)
		}
		if want := fmt.Sprintf("--huge-pages=%v", huge); !slices.Contains(args, want) {
			t.Errorf("Spawn.HugePages %v: the spawned host's command line %q lacks %s", huge, strings.Join(args, " "), want)
		}
		if i := slices.Index(args, "--shutdown-grace"); i < 0 || i+1 >= len(args) || args[i+1] != r.d.cfg.Spawn.ShutdownGrace.String() {
			t.Errorf("the spawned host's command line %q lacks --shutdown-grace %v", strings.Join(args, " "), r.d.cfg.Spawn.ShutdownGrace)
		}
	}
}

// TestPoolSizedByCapacity: with no pool size given, a host has as many
// Area slots as its memory limit holds at registry.NominalAreaCost (128
// KiB) each (64..16,384); what Areas take of them is the registry's
// (TestUsedCountsTheHostsOwnFigure).
func TestPoolSizedByCapacity(t *testing.T) {
	for _, tt := range []struct {
		pool  int
		limit string
		want  int
	}{
		{64, "1GiB", 64},
		{0, "1GiB", 8192},
		{0, "512MiB", 4096},
		{0, "8MiB", 64},
		{0, "64GiB", 16384},
		{0, "1073741824", 8192},
		{0, "", 1024},
		{0, "lots", 1024},
	} {
		c := SpawnConfig{PoolSize: tt.pool, MemLimit: tt.limit}
		if got := c.Pool(); got != tt.want {
			t.Errorf("pool %d, limit %q: %d Areas; want %d", tt.pool, tt.limit, got, tt.want)
		}
	}
	for _, pool := range []int{-1, control.MaxPoolSize + 1} {
		cfg := testConfig()
		cfg.Spawn.PoolSize = pool
		if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), "pool size") {
			t.Errorf("a pool size of %d: %v; want refused", pool, err)
		}
	}
}

// TestShutdownGraceBounded: the hosts' shutdown grace is refused below 0
// and above MaxShutdownGrace (a stopping realm would kill its hosts before
// their final snapshots were acked), and taken at both ends.
func TestShutdownGraceBounded(t *testing.T) {
	for _, tt := range []struct {
		grace time.Duration
		ok    bool
	}{{-time.Millisecond, false}, {0, true}, {MaxShutdownGrace, true}, {MaxShutdownGrace + time.Millisecond, false}} {
		cfg := testConfig()
		cfg.Spawn.ShutdownGrace = tt.grace
		err := cfg.validate()
		if tt.ok && err != nil {
			t.Errorf("a shutdown grace of %v refused: %v", tt.grace, err)
		}
		if !tt.ok && (err == nil || !strings.Contains(err.Error(), "shutdown grace")) {
			t.Errorf("a shutdown grace of %v: %v; want refused", tt.grace, err)
		}
	}
}

// spawnedHostArgs reads the command line of one of the hosts r's director
// spawned (from /proc).
func spawnedHostArgs(t *testing.T, r *realm) []string {
	t.Helper()
	var pid int
	for _, h := range r.d.registry.Hosts() {
		pid = h.PID
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatalf("read the host's command line: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
}
