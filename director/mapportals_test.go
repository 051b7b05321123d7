package director

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/systems/persist/blob"
)

// mapPortal returns the one portal of template's map in the embedded
// content, and where it leads by the rules: its arrival square, or the
// target map's first spawn point.
func mapPortal(t testing.TB, template string) (p content.Portal, toX, toY int32) {
	t.Helper()
	lib := content.Default()
	tt, err := lib.Template(template)
	if err != nil {
		t.Fatal(err)
	}
	if len(tt.Map.Portals) != 1 {
		t.Fatalf("the %s map has %d portals; the test wants one", template, len(tt.Map.Portals))
	}
	p = tt.Map.Portals[0]
	if p.HasTo {
		return p, p.ToX, p.ToY
	}
	to, err := lib.Template(p.Target)
	if err != nil {
		t.Fatal(err)
	}
	return p, to.Map.Spawns[0].X, to.Map.Spawns[0].Y
}

// spawnedPortals returns the portals area's live incarnation was spawned
// with.
func (r *realm) spawnedPortals(area uint32) []control.Portal {
	l := r.live(area)
	if l == nil {
		r.t.Fatalf("area %d is not live", area)
	}
	return l.Portals()
}

// TestMapPortalsLeadToTheirTemplate: over a real director and host, a
// village and an arena in one realm: the village is spawned with its
// map's portal leading to the arena at the arena map's spawn point, the
// arena with its portal leading back to the village on the square its
// map names (the portals the transfers check a crossing against:
// director/transfer's TestLeadsTo).
func TestMapPortalsLeadToTheirTemplate(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	c, _ := r.player("walker")
	village, err := c.NewArea(ctx, dirclient.NewAreaRequest{Name: "Village", Template: "village"})
	if err != nil {
		t.Fatal(err)
	}
	arena, err := c.NewArea(ctx, dirclient.NewAreaRequest{Name: "Arena", Template: "arena"})
	if err != nil {
		t.Fatal(err)
	}
	vp, vx, vy := mapPortal(t, "village")
	ap, ax, ay := mapPortal(t, "arena")
	if vp.Target != "arena" || ap.Target != "village" {
		t.Fatalf("the village's portal leads to %q, the arena's to %q; the test wants arena and village", vp.Target, ap.Target)
	}
	tests := []struct {
		area uint32
		want control.Portal
	}{
		{village.ID, control.Portal{X: vp.X, Y: vp.Y, ToArea: arena.ID, ToX: vx, ToY: vy}},
		{arena.ID, control.Portal{X: ap.X, Y: ap.Y, ToArea: village.ID, ToX: ax, ToY: ay}},
	}
	for _, tt := range tests {
		if _, err := c.Join(ctx, tt.area); err != nil {
			t.Fatalf("join %d: %v", tt.area, err)
		}
		got := r.spawnedPortals(tt.area)
		if !reflect.DeepEqual(got, []control.Portal{tt.want}) {
			t.Errorf("area %d spawned with portals %+v; want [%+v]", tt.area, got, tt.want)
		}
	}
}

// TestSpawnPortalsRules: map portals resolve to the oldest Area of their
// target template; an owner's portal wins on the same square and the
// others stay; a target template without an Area leaves the portal out;
// the empty template has none.
func TestSpawnPortalsRules(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0 })
	ctx := context.Background()
	c, _ := r.player("owner")
	mk := func(req dirclient.NewAreaRequest) dirclient.Area {
		t.Helper()
		a, err := c.NewArea(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	spawned := func(id uint32) []control.Portal {
		t.Helper()
		a, err := r.store.Area(ctx, store.AreaID(id))
		if err != nil {
			t.Fatal(err)
		}
		return r.d.spawnPortals(ctx, a)
	}
	vp, vx, vy := mapPortal(t, "village")
	ap, ax, ay := mapPortal(t, "arena")

	village := mk(dirclient.NewAreaRequest{Name: "First village", Template: "village"})
	if got := spawned(village.ID); len(got) != 0 {
		t.Errorf("a village with no arena in the realm: portals %+v; want none (no Area is made for a portal)", got)
	}
	arena := mk(dirclient.NewAreaRequest{Name: "Arena", Template: "arena"})
	second := mk(dirclient.NewAreaRequest{Name: "Second village", Template: "village"})
	floor := mk(dirclient.NewAreaRequest{Name: "Floor", Template: "empty", W: 16, H: 16})

	if got, want := spawned(arena.ID), []control.Portal{{X: ap.X, Y: ap.Y, ToArea: village.ID, ToX: ax, ToY: ay}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the arena's portals %+v; want %+v (to the oldest village)", got, want)
	}
	if got, want := spawned(second.ID), []control.Portal{{X: vp.X, Y: vp.Y, ToArea: arena.ID, ToX: vx, ToY: vy}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the second village's portals %+v; want %+v", got, want)
	}
	owner := []dirclient.Portal{
		{X: vp.X, Y: vp.Y, ToArea: floor.ID, ToX: 3, ToY: 3}, // on the map portal's square
		{X: 10, Y: 10, ToArea: village.ID, ToX: 5, ToY: 6},
	}
	if err := c.SetPortals(ctx, second.ID, owner); err != nil {
		t.Fatal(err)
	}
	want := []control.Portal{{X: vp.X, Y: vp.Y, ToArea: floor.ID, ToX: 3, ToY: 3}, {X: 10, Y: 10, ToArea: village.ID, ToX: 5, ToY: 6}}
	if got := spawned(second.ID); !reflect.DeepEqual(got, want) {
		t.Errorf("the second village with its owner's portals: %+v; want %+v (the owner's win on the map portal's square)", got, want)
	}
	if got := spawned(floor.ID); len(got) != 0 {
		t.Errorf("an empty Area's portals %+v; want none", got)
	}
}

// TestAreaStoredBeforeTemplatesRunsItsMap: an Area stored before templates
// (a 64x64 village with a version 1 blob of that size, the template its
// kind's name, which the migration gave it) runs its template's map: its
// host builds the 64x48 village without the stale blob, a player joins, and
// the host's snapshots of the map's size are stored, not refused.
func TestAreaStoredBeforeTemplatesRunsItsMap(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	c, me := r.player("elder")
	area, err := r.store.CreateArea(ctx, store.NewArea{Owner: store.AccountID(me.ID), Kind: "village", Template: "village", Name: "Old village", W: 64, H: 64, Seed: 1, Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	floor := make([]int32, 64*64)
	for i := range floor {
		floor[i] = 1
	}
	old, err := blob.Encode(&blob.Blob{Version: 1, W: 64, H: 64, Floor: floor, Wanderers: []blob.Wanderer{{X: 63, Y: 63, Seed: 1, Every: 1, Per: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	epoch, err := r.store.BeginIncarnation(ctx, area.ID, store.TokenHash{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.WriteSnapshot(ctx, store.Snapshot{Area: area.ID, Epoch: epoch, Seq: 1, Blob: old, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Join(ctx, uint32(area.ID)); err != nil {
		t.Fatalf("join the old village: %v", err)
	}
	tpl, err := r.d.cfg.Content.Template("village")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		data, seq, _, err := r.store.AreaSnapshot(ctx, area.ID)
		if err != nil {
			t.Fatal(err)
		}
		if seq > 1 {
			if err := blob.Check(data, tpl.Map.W, tpl.Map.H); err != nil {
				t.Fatalf("the stored snapshot %d does not fit the map: %v", seq, err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot of the old village's new incarnation was stored in 15 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
