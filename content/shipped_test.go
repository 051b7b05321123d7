package content

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// TestDefault guards Default's panic: the embedded content loads.
func TestDefault(t *testing.T) {
	lib, err := Load(Embedded())
	if err != nil {
		t.Fatal(err)
	}
	if Default() == nil {
		t.Fatal("Default() = nil")
	}
	if got, want := lib.Kinds(), []string{"arena", "home", "offline", "village"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Kinds() = %v; want %v", got, want)
	}
	var names []string
	for _, tp := range lib.Templates() {
		names = append(names, tp.Name)
	}
	if want := []string{"arena", "home", "offline", "village"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Templates() = %v; want %v", names, want)
	}
}

func TestShippedRules(t *testing.T) {
	lib := Default()
	for _, want := range []RuleSet{
		{Name: "home", MaxPlayers: 8, StepsPerSecond: 5, Diagonal: true, PlayerHP: 100, PlayerDamage: 5,
			Build: BuildBuilders, MaxItems: 5000, ChangesPerMinute: 120},
		{Name: "village", MaxPlayers: 64, StepsPerSecond: 5, Diagonal: true, PlayerHP: 100, PlayerDamage: 5,
			Build: BuildPlots, MaxItems: 20000, ChangesPerMinute: 60},
		{Name: "arena", MaxPlayers: 64, StepsPerSecond: 6, Diagonal: true, CreaturesHuntPlayers: true, PvP: true, LineOfSight: true, SenseLOS: true, PlayerHP: 100, PlayerDamage: 8,
			Build: BuildNobody, MaxItems: DefaultMaxItems, ChangesPerMinute: DefaultChangesPerMinute, Carry: []string{}},
		{Name: "offline", MaxPlayers: 1, StepsPerSecond: 5, Diagonal: true, CreaturesHuntPlayers: true, PlayerHP: 100, PlayerDamage: 5,
			Build: BuildAnyone, MaxItems: DefaultMaxItems, ChangesPerMinute: DefaultChangesPerMinute},
	} {
		got, err := lib.Kind(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Kind(%q) = %+v; want %+v", want.Name, got, want)
		}
		tp, err := lib.Template(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tp.Rules, want) {
			t.Errorf("Template(%q).Rules = %+v; want %+v", want.Name, tp.Rules, want)
		}
	}
}

func TestShippedVillagePlots(t *testing.T) {
	tp, err := Default().Template("village")
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Map.Plots) == 0 {
		t.Fatal("the village marks no plots")
	}
	p := tp.Map.Plots[0]
	if !tp.Map.InPlot(p.X, p.Y) || !tp.Map.InPlot(p.X+p.W-1, p.Y+p.H-1) || tp.Map.InPlot(p.X+p.W, p.Y) {
		t.Errorf("InPlot disagrees with plot %+v", p)
	}
	for _, s := range tp.Map.Spawns {
		if tp.Map.InPlot(s.X, s.Y) {
			t.Errorf("spawn (%d, %d) lies on a plot: players would appear inside what others build", s.X, s.Y)
		}
	}
}

func TestShippedCreatures(t *testing.T) {
	lib := Default()
	wolf, err := lib.Creature("wolf")
	if err != nil {
		t.Fatal(err)
	}
	if !wolf.HuntsPlayers || wolf.AttackDamage <= 0 {
		t.Errorf("wolf = %+v; want a hunter of players", wolf)
	}
	deer, err := lib.Creature("deer")
	if err != nil {
		t.Fatal(err)
	}
	if deer.HuntsPlayers || len(deer.Hunts) != 0 || !deer.Wanders {
		t.Errorf("deer = %+v; want a wanderer that hunts nothing", deer)
	}
	slime, err := lib.Creature("slime")
	if err != nil {
		t.Fatal(err)
	}
	if !slime.HuntsPlayers || slime.StepTicks <= wolf.StepTicks || slime.StepTicks <= deer.StepTicks {
		t.Errorf("slime = %+v; want a slow hunter of players", slime)
	}
	// Creature hands out copies: changing one changes nothing in the library.
	wolf.Hunts[0] = "changed"
	if again, _ := lib.Creature("wolf"); again.Hunts[0] != "deer" {
		t.Errorf("wolf.Hunts = %v after a caller's change; want [deer]", again.Hunts)
	}
}

// TestShippedMaps checks every shipped map is a playable place: spawns,
// portals and some square of every spawner's area are walkable and
// reachable from the first spawn (walking through open doors).
func TestShippedMaps(t *testing.T) {
	for _, tp := range Default().Templates() {
		t.Run(tp.Name, func(t *testing.T) {
			m := tp.Map
			if len(m.Spawns) == 0 {
				t.Fatal("no spawns")
			}
			reach := reachable(m, m.Spawns[0])
			for _, s := range m.Spawns {
				if !m.Walkable(int(s.X), int(s.Y)) {
					t.Errorf("spawn %v is not walkable", s)
				}
				if !reach[int(s.Y)*m.W+int(s.X)] {
					t.Errorf("spawn %v is not reachable from spawn %v", s, m.Spawns[0])
				}
			}
			for _, p := range m.Portals {
				if !m.Walkable(int(p.X), int(p.Y)) || !reach[int(p.Y)*m.W+int(p.X)] {
					t.Errorf("portal %d %q at (%d, %d) is not walkable and reachable", p.ID, p.Name, p.X, p.Y)
				}
			}
			for _, s := range m.Spawners {
				ok := false
				for y := s.Y; y < s.Y+s.H; y++ {
					for x := s.X; x < s.X+s.W; x++ {
						ok = ok || m.Walkable(int(x), int(y)) && reach[int(y)*m.W+int(x)]
					}
				}
				if !ok {
					t.Errorf("spawner %d %q has no walkable square reachable from the spawns", s.ID, s.Name)
				}
			}
			for _, o := range m.Objects {
				if m.WallAt(int(o.X), int(o.Y)) {
					t.Errorf("object %d on a wall", o.ID)
				}
			}
		})
	}
}

// reachable returns the squares a body can walk to from start, stepping
// in eight directions over walkable squares.
func reachable(m *Map, start Point) []bool {
	seen := make([]bool, m.W*m.H)
	queue := []Point{start}
	seen[int(start.Y)*m.W+int(start.X)] = true
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for dy := int32(-1); dy <= 1; dy++ {
			for dx := int32(-1); dx <= 1; dx++ {
				x, y := int(p.X+dx), int(p.Y+dy)
				if !m.Walkable(x, y) || seen[y*m.W+x] {
					continue
				}
				seen[y*m.W+x] = true
				queue = append(queue, Point{int32(x), int32(y)})
			}
		}
	}
	return seen
}

func classCount(m *Map, c ObjectClass) int {
	n := 0
	for _, o := range m.Objects {
		if o.Class == c {
			n++
		}
	}
	return n
}

func TestShippedVillage(t *testing.T) {
	lib := Default()
	tp, err := lib.Template("village")
	if err != nil {
		t.Fatal(err)
	}
	m := tp.Map
	for _, c := range []ObjectClass{ClassDoor, ClassTree, ClassSign, ClassRock, ClassChest} {
		if classCount(m, c) == 0 {
			t.Errorf("the village has no %s", c)
		}
	}
	if !slices.ContainsFunc(m.Portals, func(p Portal) bool { return p.Target == "arena" }) {
		t.Error("the village has no portal to the arena")
	}
	deer := 0
	for _, s := range m.Spawners {
		if s.Creature == "deer" {
			deer++
		}
	}
	if deer < 2 {
		t.Errorf("the village has %d deer spawners; want a few", deer)
	}
	if m.W < 48 || m.H < 32 {
		t.Errorf("the village is %dx%d; want about 64x48", m.W, m.H)
	}
}

func TestShippedHome(t *testing.T) {
	tp, err := Default().Template("home")
	if err != nil {
		t.Fatal(err)
	}
	m := tp.Map
	for _, c := range []ObjectClass{ClassDoor, ClassChest, ClassSign} {
		if classCount(m, c) == 0 {
			t.Errorf("home has no %s", c)
		}
	}
	if !slices.Contains(m.Wall, true) {
		t.Error("home has no walls")
	}
	off, err := Default().Template("offline")
	if err != nil {
		t.Fatal(err)
	}
	if off.Map != m {
		t.Error("offline does not share home's map")
	}
}

func TestShippedArena(t *testing.T) {
	lib := Default()
	tp, err := lib.Template("arena")
	if err != nil {
		t.Fatal(err)
	}
	m := tp.Map
	hunters := map[string]int{}
	for _, s := range m.Spawners {
		c, err := lib.Creature(s.Creature)
		if err != nil {
			t.Fatal(err)
		}
		if c.HuntsPlayers {
			hunters[c.Name]++
		}
	}
	if hunters["wolf"] == 0 || hunters["slime"] == 0 {
		t.Errorf("arena spawners of hunting creatures: %v; want wolves and slimes", hunters)
	}
	if !slices.ContainsFunc(m.Portals, func(p Portal) bool { return p.Target == "village" }) {
		t.Error("the arena has no portal to the village")
	}
	walls := 0
	for _, w := range m.Wall {
		if w {
			walls++
		}
	}
	if walls < m.W*m.H/20 {
		t.Errorf("the arena has %d wall squares; want a maze of them", walls)
	}
}

func TestShippedItems(t *testing.T) {
	lib := Default()
	var got []string
	for _, it := range lib.Items() {
		got = append(got, fmt.Sprintf("%d %s", it.Code, it.Name))
	}
	want := []string{"1 chair", "2 table", "3 bed", "4 lamp", "5 rug", "6 chest", "7 wall_wood", "8 wall_stone",
		"9 fence", "10 door_wood", "11 floor_wood", "12 floor_stone", "13 wood", "14 stone", "15 plank", "16 berries", "17 cauldron", "18 blueprint_table",
		"19 stall", "20 sapling", "21 tree", "22 furnace", "23 brick"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Items() = %q; want %q (a shipped code never changes)", got, want)
	}
	for _, tc := range []struct {
		name   string
		placed Placement
	}{
		{"chair", Placement{Slot: SlotOccupant, Blocks: true, Look: 1}},
		{"rug", Placement{Slot: SlotOccupant, Look: 5}},
		{"chest", Placement{Slot: SlotOccupant, Blocks: true, Look: 6, Container: 16}},
		{"cauldron", Placement{Slot: SlotOccupant, Blocks: true, Look: 17, Container: 4, Station: "cauldron"}},
		{"stall", Placement{Slot: SlotOccupant, Blocks: true, Look: 19, Container: 4, Stall: true}},
		{"sapling", Placement{Slot: SlotOccupant, Blocks: true, Look: 20, Becomes: "tree", Grows: 60}},
		{"furnace", Placement{Slot: SlotOccupant, Blocks: true, Look: 22, Container: 2, Station: "furnace"}},
		{"wall_stone", Placement{Slot: SlotOccupant, Blocks: true, BlocksSight: true, Look: 8}},
		{"fence", Placement{Slot: SlotOccupant, Blocks: true, Look: 9}},
		{"door_wood", Placement{Slot: SlotOccupant, Blocks: true, BlocksSight: true, Door: true, Look: 10}},
		{"floor_wood", Placement{Slot: SlotFloor, Look: 11}},
		{"wood", Placement{}},
	} {
		it, ok := lib.Item(tc.name)
		if !ok {
			t.Fatalf("no item %q", tc.name)
		}
		if it.Placed != tc.placed {
			t.Errorf("%s.Placed = %+v; want %+v", tc.name, it.Placed, tc.placed)
		}
		if by, ok := lib.ItemByCode(it.Code); !ok || by.Name != tc.name {
			t.Errorf("ItemByCode(%d) = %q, %v; want %q", it.Code, by.Name, ok, tc.name)
		}
	}
	for _, it := range lib.Items() {
		want := []Yield{{it.Name, 1}}
		if it.Name == "tree" { // a grown tree gives wood and a sapling back
			want = []Yield{{"wood", 4}, {"sapling", 1}}
		}
		if it.Placeable() && !reflect.DeepEqual(it.Yields, want) {
			t.Errorf("%s yields %v; want %v", it.Name, it.Yields, want)
		}
	}
	for _, tc := range []struct {
		class ObjectClass
		item  string
	}{{ClassTree, "wood"}, {ClassRock, "stone"}} {
		s, ok := lib.Source(tc.class)
		if !ok || s.Class != tc.class || len(s.Yields) != 1 || s.Yields[0].Item != tc.item || s.CooldownTicks == 0 {
			t.Errorf("Source(%s) = %+v, %v; want %s on a cooldown", tc.class, s, ok, tc.item)
		}
	}
	for _, c := range []ObjectClass{ClassNone, ClassDoor, ClassSign, ClassChest, ClassPortal} {
		if s, ok := lib.Source(c); ok {
			t.Errorf("Source(%s) = %+v; want none", c, s)
		}
	}
	if it, ok := lib.Item("nope"); ok {
		t.Errorf("Item(nope) = %+v", it)
	}
	if it, ok := lib.ItemByCode(0); ok {
		t.Errorf("ItemByCode(0) = %+v", it)
	}
	// Item, Items and Source hand out copies: changing one changes nothing
	// in the library.
	chair, _ := lib.Item("chair")
	chair.Yields[0].Count = 7
	lib.Items()[0].Yields[0].Count = 7
	tree, _ := lib.Source(ClassTree)
	tree.Yields[0].Count = 7
	if again, _ := lib.Item("chair"); again.Yields[0].Count != 1 {
		t.Errorf("chair yields %v after a caller's change; want 1", again.Yields)
	}
	if again, _ := lib.Source(ClassTree); again.Yields[0].Count != 2 {
		t.Errorf("tree yields %v after a caller's change; want 2", again.Yields)
	}
}

// TestShippedRecipes: the shipped recipes keep their codes, are made at
// the cauldron, and the table's blueprint teaches the table.
func TestShippedRecipes(t *testing.T) {
	lib := Default()
	var got []string
	for _, r := range lib.Recipes() {
		line := fmt.Sprintf("%d %s@%s %v -> %v", r.Code, r.Name, r.Station, r.Inputs, r.Outputs)
		if r.Seconds > 0 {
			line += fmt.Sprintf(" %ds", r.Seconds)
		}
		got = append(got, line)
	}
	want := []string{
		"1 planks@cauldron [{wood 2}] -> [{plank 4}]",
		"2 chair@cauldron [{plank 3}] -> [{chair 1}]",
		"3 table@cauldron [{plank 4} {stone 1}] -> [{table 1}]",
		"4 stone_floor@cauldron [{stone 2}] -> [{floor_stone 4}]",
		"5 brick@furnace [{stone 2}] -> [{brick 1}] 10s",
		"6 furnace@cauldron [{plank 2} {stone 4}] -> [{furnace 1}]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Recipes() = %q; want %q (a shipped code never changes)", got, want)
	}
	bp, ok := lib.Item("blueprint_table")
	if !ok || bp.Teaches != "table" || bp.Keep || bp.Placeable() {
		t.Errorf("blueprint_table = %+v, %v; want a kind that teaches \"table\", consumed, not placeable", bp, ok)
	}
}
