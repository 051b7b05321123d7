package area

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/leyworks/ley/area/areatest"
	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/persist/blob"
)

// carrying is the state of a character that carries 7 wood and a chest.
func carrying(t *testing.T) []byte {
	t.Helper()
	st, err := blob.EncodeCharacter(&blob.Character{Version: blob.CharacterVersion, Inventory: []blob.Stack{
		{ID: 9<<32 | 1, Kind: 13, Count: 7}, {}, {ID: 9<<32 | 2, Kind: 6, Count: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// grantCarrying registers a grant for account 100 in area 1 whose
// character carries state.
func grantCarrying(t *testing.T, d *director, state []byte, x, y int32) string {
	t.Helper()
	d.send(&control.Grant{Area: 1, Token: "g-items", JoinID: 1, TTLMS: 60000, Name: "ada",
		Character: control.Character{Account: 100, X: x, Y: y, Placed: true, State: state}})
	if a := expect[*control.GrantAck](d, 5*time.Second); a.Error != "" {
		t.Fatalf("grant refused: %s", a.Error)
	}
	return "g-items"
}

// TestCarriedItemsPersistWithTheArea: what a character carries comes in
// with its grant and goes out, unchanged, in every snapshot of the Area
// that holds it, beside the Area's blob.
func TestCarriedItemsPersistWithTheArea(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.PersistEvery = 150 * time.Millisecond })
	d.spawn(1, 16, 16)
	state := carrying(t)
	c := dial(t, h)
	c.hello(grantCarrying(t, d, state, 2, 2), 1)
	for {
		s := expect[*control.Snapshot](d, 5*time.Second)
		if len(s.Characters) == 0 {
			continue // one taken before the hello landed
		}
		if got := s.Characters[0].State; !bytes.Equal(got, state) {
			t.Fatalf("the snapshot carries the character's state %x; want %x", got, state)
		}
		if _, err := blob.Decode(s.Blob, 16, 16); err != nil {
			t.Fatal(err)
		}
		return
	}
}

// TestABrokenCharacterStateBindsNoBody: a grant whose character state
// this host cannot read binds nothing (the hello is refused), and no
// snapshot writes an empty inventory over the stored one.
func TestABrokenCharacterStateBindsNoBody(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.PersistEvery = 100 * time.Millisecond })
	d.spawn(1, 16, 16)
	c := dial(t, h)
	tok := grantCarrying(t, d, []byte{0xff, 0x00}, 2, 2)
	c.send(&wire.Hello{Grant: tok, JoinID: 1, Versions: []uint16{wire.Version}})
	if e := expectMsg[*wire.Error](c, 5*time.Second); e.Code == wire.CodeOK {
		t.Fatalf("hello with an unreadable character state answered %+v", e)
	}
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		s, err := areatest.Expect[*control.Snapshot](d.Director, 200*time.Millisecond)
		if err != nil {
			continue
		}
		if len(s.Characters) != 0 {
			t.Fatalf("a snapshot writes the unbound character: %+v", s.Characters)
		}
	}
}

// TestACrossingCarriesWhatTheSnapshotHolds: portal_out carries the
// character's state exactly as the portal snapshot it waits for holds it.
func TestACrossingCarriesWhatTheSnapshotHolds(t *testing.T) {
	h, d := testHost(t, nil)
	spawnWithPortal(t, d)
	state := carrying(t)
	c := dial(t, h)
	c.hello(grantCarrying(t, d, state, 4, 5), 1)
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE}) // onto the portal at (5,5)
	var snap *control.Snapshot
	for snap == nil || len(snap.Characters) == 0 {
		snap = expect[*control.Snapshot](d, 5*time.Second)
	}
	out := expect[*control.PortalOut](d, 5*time.Second)
	if !bytes.Equal(out.State, state) {
		t.Fatalf("portal_out carries %x; want %x", out.State, state)
	}
	for snap.Seq < out.Seq {
		snap = expect[*control.Snapshot](d, 5*time.Second)
	}
	if snap.Seq != out.Seq || len(snap.Characters) != 1 || !bytes.Equal(snap.Characters[0].State, out.State) {
		t.Fatalf("the portal snapshot %d holds %+v; portal_out (seq %d) carries %x", snap.Seq, snap.Characters, out.Seq, out.State)
	}
}

// TestGatheringOverTheWire: a player acting on a village tree gets its
// wood, and the Area's next snapshot carries it on the character; acting
// again at once is refused COOLDOWN and changes nothing.
func TestGatheringOverTheWire(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.PersistEvery = 100 * time.Millisecond })
	if err := d.SpawnTemplate(1, 0, 0, "village", "village"); err != nil {
		t.Fatal(err)
	}
	tpl, err := content.Default().Template("village")
	if err != nil {
		t.Fatal(err)
	}
	m := tpl.Map
	free := func(x, y int32) bool {
		if x < 0 || y < 0 || int(x) >= m.W || int(y) >= m.H || m.Wall[int(y)*m.W+int(x)] || !m.Floor[int(y)*m.W+int(x)].Walkable() {
			return false
		}
		_, taken := m.ObjectAt(int(x), int(y))
		return !taken
	}
	// The tree farthest from the map's spawners, so that no creature
	// wanders onto the square the player is granted.
	var x, y int32
	dir := wire.DirE
	best := int32(-1)
	for _, o := range m.Objects {
		if o.Class != content.ClassTree || !free(o.X-1, o.Y) {
			continue
		}
		near := int32(math.MaxInt32)
		for _, sp := range m.Spawners {
			cx, cy := sp.X+sp.W/2, sp.Y+sp.H/2
			near = min(near, max(o.X-1-cx, cx-o.X+1, o.Y-cy, cy-o.Y))
		}
		if near > best {
			x, y, best = o.X-1, o.Y, near
		}
	}
	if best < 0 {
		t.Fatal("no village tree with a free square west of it")
	}
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, x, y, time.Minute), 1)
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentAction, Dir: dir})
	c.send(&wire.Intent{Seq: 2, Kind: wire.IntentAction, Dir: dir})
	if r := expectMsg[*wire.IntentResult](c, 5*time.Second); r.Seq != 2 || r.Code != wire.CodeCooldown {
		t.Fatalf("a second gathering at once: %+v; want seq 2 COOLDOWN", r)
	}
	wood, _ := content.Default().Item("wood")
	for {
		s := expect[*control.Snapshot](d, 5*time.Second)
		if len(s.Characters) == 0 || len(s.Characters[0].State) == 0 {
			continue
		}
		ch, err := blob.DecodeCharacter(s.Characters[0].State)
		if err != nil {
			t.Fatal(err)
		}
		if len(ch.Inventory) != 1 || ch.Inventory[0].Kind != wood.Code || ch.Inventory[0].Count != 2 {
			t.Fatalf("after one gathering the character carries %+v; want 2 wood", ch.Inventory)
		}
		return
	}
}

// TestAnArenaStashesWhatItKeepsOut: a character entering an arena (whose
// rules let nothing be carried in) finds its inventory empty and its
// things in the stash, told in its inventory message, and the Area's
// snapshots write the moved state: nothing lost, nothing made.
func TestAnArenaStashesWhatItKeepsOut(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.PersistEvery = 100 * time.Millisecond })
	if err := d.SpawnTemplate(1, 16, 16, "arena", build.TemplateEmpty); err != nil {
		t.Fatal(err)
	}
	c := dial(t, h)
	c.hello(grantCarrying(t, d, carrying(t), 2, 2), 1)
	inv := expectMsg[*wire.Inventory](c, 5*time.Second)
	for i, st := range inv.Slots {
		if st != (wire.Stack{}) {
			t.Fatalf("slot %d holds %+v in an arena that lets nothing in", i, st)
		}
	}
	want := []wire.Stack{{ID: 9<<32 | 1, Kind: 13, Count: 7}, {ID: 9<<32 | 2, Kind: 6, Count: 1}}
	if !reflect.DeepEqual(inv.Stash, want) {
		t.Fatalf("stash told %+v; want %+v", inv.Stash, want)
	}
	for {
		s := expect[*control.Snapshot](d, 5*time.Second)
		if len(s.Characters) == 0 {
			continue
		}
		ch, err := blob.DecodeCharacter(s.Characters[0].State)
		if err != nil {
			t.Fatal(err)
		}
		if len(ch.Inventory) != 0 || len(ch.Stash) != 2 || ch.Stash[0].ID != want[0].ID || ch.Stash[1].ID != want[1].ID {
			t.Fatalf("the snapshot writes %+v; want an empty inventory and both stacks stashed", ch)
		}
		return
	}
}

// TestAVillageToldItsPlots: area_info of the village carries the plots its
// map marks (an Area without plots carries none: TestJoinTellsTheArea).
func TestAVillageToldItsPlots(t *testing.T) {
	h, d := testHost(t, nil)
	if err := d.SpawnTemplate(1, 0, 0, "village", "village"); err != nil {
		t.Fatal(err)
	}
	tpl, err := content.Default().Template("village")
	if err != nil {
		t.Fatal(err)
	}
	sp := tpl.Map.Spawns[0]
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, sp.X, sp.Y, time.Minute), 1)
	info := expectMsg[*wire.AreaInfo](c, 5*time.Second)
	if len(info.Plots) != len(tpl.Map.Plots) {
		t.Fatalf("area_info plots %+v; want the map's %+v", info.Plots, tpl.Map.Plots)
	}
	for i, p := range tpl.Map.Plots {
		if got := info.Plots[i]; got.X != p.X || got.Y != p.Y || int32(got.W) != p.W || int32(got.H) != p.H {
			t.Errorf("plot %d told %+v; the map's is %+v", i, got, p)
		}
	}
}

// TestCraftingOverTheWire: a character's client is told the recipes it
// knows after its inventory (none at first); a craft at a cauldron makes
// planks of wood, teaches the recipe and tells this client alone; the
// snapshot writes the recipe with the character, and a refused craft
// answers NO_RECIPE.
func TestCraftingOverTheWire(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.PersistEvery = 100 * time.Millisecond })
	if err := d.SpawnTemplate(1, 16, 16, "village", build.TemplateEmpty); err != nil {
		t.Fatal(err)
	}
	lib := content.Default()
	kind := func(name string) uint16 {
		k, ok := lib.Item(name)
		if !ok {
			t.Fatalf("no item %q", name)
		}
		return k.Code
	}
	st, err := blob.EncodeCharacter(&blob.Character{Version: blob.CharacterVersion, Inventory: []blob.Stack{
		{ID: 9<<32 | 1, Kind: kind("cauldron"), Count: 1}, {ID: 9<<32 | 2, Kind: kind("wood"), Count: 3},
	}})
	if err != nil {
		t.Fatal(err)
	}
	maker := dial(t, h)
	maker.hello(grantCarrying(t, d, st, 5, 5), 1)
	expectMsg[*wire.Inventory](maker, 5*time.Second)
	if r := expectMsg[*wire.Recipes](maker, 5*time.Second); len(r.Known) != 0 {
		t.Fatalf("a character that made nothing is told %+v", r.Known)
	}
	other := dial(t, h)
	other.hello(d.grant(1, 200, 2, 9, 9, time.Minute), 2)
	expectMsg[*wire.Recipes](other, 5*time.Second)

	maker.send(&wire.Intent{Seq: 1, Kind: wire.IntentPlace, Dir: wire.DirE, Item: wire.ItemSlots{From: 0}})
	maker.send(&wire.Intent{Seq: 2, Kind: wire.IntentCraft, Dir: wire.DirE})
	if r := expectMsg[*wire.IntentResult](maker, 5*time.Second); r.Seq != 2 || r.Code != wire.CodeNoRecipe {
		t.Fatalf("crafting an empty cauldron: %+v; want seq 2 NO_RECIPE", r)
	}
	maker.send(&wire.Intent{Seq: 3, Kind: wire.IntentMoveItem, Dir: wire.DirE, Item: wire.ItemSlots{From: 1, To: wire.ContainerSlot, Count: 2}})
	maker.send(&wire.Intent{Seq: 4, Kind: wire.IntentCraft, Dir: wire.DirE})
	r := expectMsg[*wire.Recipes](maker, 5*time.Second)
	want := []wire.Recipe{{Code: 1, Name: "planks", Station: "cauldron",
		Inputs: []wire.Amount{{Kind: kind("wood"), Count: 2}}, Outputs: []wire.Amount{{Kind: kind("plank"), Count: 4}}}}
	if !reflect.DeepEqual(r.Known, want) {
		t.Fatalf("after the craft the maker is told %+v; want %+v", r.Known, want)
	}
	for {
		s := expect[*control.Snapshot](d, 5*time.Second)
		var mine *control.Character
		for i := range s.Characters {
			if s.Characters[i].Account == 100 {
				mine = &s.Characters[i]
			}
		}
		if mine == nil {
			continue
		}
		ch, err := blob.DecodeCharacter(mine.State)
		if err != nil {
			t.Fatal(err)
		}
		if len(ch.Recipes) == 1 && ch.Recipes[0] == 1 {
			break
		}
	}
	// The other player was told nothing of it: its answer to a craft at
	// nothing, sent after the maker learned, comes after anything the
	// server sent it in the tick of the craft.
	other.send(&wire.Intent{Seq: 1, Kind: wire.IntentCraft, Dir: wire.DirN})
	for {
		switch m := other.next(5 * time.Second).(type) {
		case *wire.Recipes:
			t.Fatalf("another player was told recipes: %+v", m)
		case *wire.IntentResult:
			if m.Seq != 1 || m.Code != wire.CodeNothingThere {
				t.Fatalf("a craft at nothing: %+v; want seq 1 NOTHING_THERE", m)
			}
			return
		}
	}
}
