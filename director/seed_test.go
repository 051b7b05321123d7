package director

import (
	"context"
	"testing"

	"github.com/leyworks/ley/store"
)

// TestSeedDemo: the demo account owns a village, an arena and a home of
// their templates, the village's map portal leads to the arena and the
// arena's back; a second seed finds the same three.
func TestSeedDemo(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0 })
	ctx := context.Background()
	demo, err := r.d.SeedDemo(ctx, "demo@t.local", "demo-password")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id       store.AreaID
		template string
	}{{demo.Area, "village"}, {demo.Arena, "arena"}, {demo.Home, "home"}} {
		a, err := r.store.Area(ctx, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		w, h := mapSize(t, tt.template)
		if a.Owner != demo.Account || a.Kind != tt.template || a.Template != tt.template || a.W != w || a.H != h {
			t.Errorf("demo area %d = %+v; want the demo's %s of its map's size %dx%d", tt.id, a, tt.template, w, h)
		}
	}
	leadsTo := func(from, to store.AreaID) {
		t.Helper()
		a, err := r.store.Area(ctx, from)
		if err != nil {
			t.Fatal(err)
		}
		ps := r.d.spawnPortals(ctx, a)
		if len(ps) != 1 || ps[0].ToArea != uint32(to) {
			t.Errorf("area %d's portals %+v; want one to area %d", from, ps, to)
		}
	}
	leadsTo(demo.Area, demo.Arena)
	leadsTo(demo.Arena, demo.Area)
	if ps := r.d.spawnPortals(ctx, mustArea(t, r, demo.Home)); len(ps) != 0 {
		t.Errorf("the home's portals %+v; want none", ps)
	}
	again, err := r.d.SeedDemo(ctx, "demo@t.local", "another password")
	if err != nil {
		t.Fatal(err)
	}
	if again != (Demo{Email: "demo@t.local", Password: "another password", Account: demo.Account, Area: demo.Area, Arena: demo.Arena, Home: demo.Home}) {
		t.Errorf("the second seed = %+v; want the first's account and Areas (%+v)", again, demo)
	}
	if areas, err := r.store.AreasOf(ctx, demo.Account); err != nil || len(areas) != 3 {
		t.Errorf("the demo's Areas after two seeds: %d, %v; want 3", len(areas), err)
	}
}

func mustArea(t testing.TB, r *realm, id store.AreaID) store.Area {
	t.Helper()
	a, err := r.store.Area(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
