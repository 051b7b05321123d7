package creature

import (
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/spatial"
)

// Kinds of the tests: 1 wolf (hunts players and deer), 2 deer (wanders,
// hunts nothing), 3 slime (slow, hunts players, never wanders).
var testKinds = []Kind{
	{HP: 30, Period: 2, Sense: 10, Damage: 6, AttackEvery: 10, HuntsPlayers: true, Prey: []uint16{2}, Wanders: true},
	{HP: 15, Period: 3, Sense: 6, Wanders: true},
	{HP: 20, Period: 6, Sense: 5, Damage: 3, AttackEvery: 20, HuntsPlayers: true},
}

// testArea builds a w x h Area of rules r with the creature system over
// the given spawners (and the default ones before it, so that players'
// intents move them).
func testArea(t testing.TB, r ecs.Rules, w, h int, spawners []Spawner) (*ecs.Area, *System) {
	t.Helper()
	a, err := ecs.NewArea(ecs.Config{ID: 1, Rules: r, W: w, H: h, Capacity: 256})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := spatial.Attach(a, 8)
	if err != nil {
		t.Fatal(err)
	}
	sys := &System{Config: Config{Kinds: testKinds, Spawners: spawners}, Hash: hash}
	if err := a.Use(sys); err != nil {
		t.Fatal(err)
	}
	return a, sys
}

func arena() ecs.Rules { return ecs.RulesFor(ecs.KindArena) }

// creatures lists the Area's creatures with their positions and states.
type seen struct {
	e      ecs.Entity
	x, y   int32
	state  State
	kind   uint16
	target ecs.Entity
}

func creatures(a *ecs.Area) []seen {
	var out []seen
	q := ecs.NewFilter2[ecs.Position, ecs.Creature]().Query(&a.World)
	for q.Next() {
		p, c := q.Get()
		out = append(out, seen{q.Entity(), p.X, p.Y, State(c.State), c.Kind, c.Target})
	}
	return out
}

func steps(a *ecs.Area, n int) {
	for range n {
		a.Step()
	}
}

func TestSpawnersFillAndKeepTheirArea(t *testing.T) {
	a, sys := testArea(t, arena(), 40, 40, []Spawner{
		{X: 5, Y: 5, W: 4, H: 3, Kind: 2, Count: 6, Respawn: 20, Leash: 6},
		{X: 30, Y: 30, W: 1, H: 1, Kind: 3, Count: 3, Respawn: 20, Leash: 4},
	})
	a.Step()
	cs := creatures(a)
	if len(cs) != 9 || sys.Spawned != 9 {
		t.Fatalf("%d creatures after the first tick (%d spawned); want 9", len(cs), sys.Spawned)
	}
	steps(a, 400)
	for _, c := range creatures(a) {
		hx, hy, leash := int32(7), int32(6), int32(6)
		if c.kind == 3 {
			hx, hy, leash = 30, 30, 4
		}
		if cheb(c.x, c.y, hx, hy) > leash+1 {
			t.Errorf("creature %d (kind %d) at (%d,%d): %d squares from its spawner, leash %d", c.e.ID(), c.kind, c.x, c.y, cheb(c.x, c.y, hx, hy), leash)
		}
	}
	if err := a.CheckGrid(); err != nil {
		t.Fatal(err)
	}
}

func TestWolvesChaseAttackAndKillAPlayer(t *testing.T) {
	a, sys := testArea(t, arena(), 48, 48, []Spawner{{X: 10, Y: 10, W: 2, H: 2, Kind: 1, Count: 3, Respawn: 40, Leash: 30}})
	p, err := a.SpawnPlayer(1, 20, 20)
	if err != nil {
		t.Fatal(err)
	}
	died := 0
	a.OnDeath = func(a *ecs.Area, e ecs.Entity) {
		if e == p {
			died++
		}
		a.Despawn(e)
	}
	for i := 0; i < 600 && died == 0; i++ {
		a.Step()
	}
	if died != 1 {
		h, _ := a.HealthOf(p)
		t.Fatalf("the player did not die in 600 ticks (hp %d; %d attacks)", h.HP, sys.Attacks)
	}
	if sys.Kills < 1 || sys.Attacks < 100/6 {
		t.Fatalf("kills %d, attacks %d; want the kill and at least %d attacks", sys.Kills, sys.Attacks, 100/6)
	}
	a.Step()
	for _, c := range creatures(a) {
		if c.target == p {
			t.Fatalf("creature %d still targets the dead player", c.e.ID())
		}
	}
}

func TestHuntingRules(t *testing.T) {
	village := ecs.RulesFor(ecs.KindVillage) // creatures may not hunt players
	a, sys := testArea(t, village, 32, 32, []Spawner{{X: 10, Y: 10, W: 1, H: 1, Kind: 1, Count: 2, Respawn: 40, Leash: 20}})
	p, err := a.SpawnPlayer(1, 13, 10)
	if err != nil {
		t.Fatal(err)
	}
	steps(a, 200)
	if h, _ := a.HealthOf(p); h.HP != h.Max || sys.Attacks != 0 {
		t.Fatalf("player at %d/%d hp after %d attacks; where creatures may not hunt players, want none", h.HP, h.Max, sys.Attacks)
	}
	for _, c := range creatures(a) {
		if c.target == p || c.state == Chase || c.state == Attack {
			t.Fatalf("creature %d %s, target %v; want no hunt", c.e.ID(), c.state, c.target)
		}
	}
}

func TestWolvesHuntDeerAndDeerRespawn(t *testing.T) {
	a, sys := testArea(t, arena(), 32, 32, []Spawner{
		{X: 10, Y: 10, W: 1, H: 1, Kind: 1, Count: 1, Respawn: 10, Leash: 20},
		{X: 14, Y: 10, W: 1, H: 1, Kind: 2, Count: 1, Respawn: 30, Leash: 20},
	})
	deaths := 0
	a.OnDeath = func(a *ecs.Area, e ecs.Entity) { deaths++; a.Despawn(e) }
	for i := 0; i < 800 && deaths < 2; i++ {
		a.Step()
	}
	if deaths < 2 {
		t.Fatalf("%d deer killed in 800 ticks; want 2 (the second a respawned one)", deaths)
	}
	if sys.Spawned < 3 {
		t.Fatalf("%d spawned; want the wolf, the deer and its respawn", sys.Spawned)
	}
}

func TestSenseNeedsLineOfSightWhereTheRulesSaySo(t *testing.T) {
	for _, los := range []bool{true, false} {
		r := arena()
		r.SenseLOS = los
		a, _ := testArea(t, r, 32, 32, []Spawner{{X: 10, Y: 10, W: 1, H: 1, Kind: 1, Count: 1, Respawn: 40, Leash: 20}})
		for y := int32(0); y < 32; y++ {
			if y != 0 { // a wall with one far gap: sensed through it only without LOS
				a.Grid.SetWall(a.Grid.Cell(13, y))
			}
		}
		p, err := a.SpawnPlayer(1, 16, 10)
		if err != nil {
			t.Fatal(err)
		}
		chased := false
		for range 60 {
			a.Step()
			for _, c := range creatures(a) {
				chased = chased || c.target == p
			}
		}
		if chased == los {
			t.Errorf("SenseLOS %v: the wolf chased a player behind a wall: %v", los, chased)
		}
	}
}

func TestReturnsPastItsLeash(t *testing.T) {
	a, _ := testArea(t, arena(), 48, 48, []Spawner{{X: 5, Y: 5, W: 1, H: 1, Kind: 3, Count: 1, Respawn: 40, Leash: 3}})
	a.Step()
	c := creatures(a)[0]
	pm := ecs.NewMap[ecs.Position](&a.World)
	a.MoveBody(c.e, pm.Get(c.e), 30, 30) // carried far away
	steps(a, 400)
	c = creatures(a)[0]
	if cheb(c.x, c.y, 5, 5) > 3 || c.state == Return {
		t.Fatalf("creature at (%d,%d) %s; want back within 3 of (5,5)", c.x, c.y, c.state)
	}
}

func TestNeverTwoBodiesOnASquare(t *testing.T) {
	a, _ := testArea(t, arena(), 40, 40, []Spawner{
		{X: 2, Y: 2, W: 6, H: 6, Kind: 1, Count: 20, Respawn: 5, Leash: 40},
		{X: 30, Y: 30, W: 6, H: 6, Kind: 2, Count: 20, Respawn: 5, Leash: 40},
		{X: 2, Y: 30, W: 6, H: 6, Kind: 3, Count: 20, Respawn: 5, Leash: 40},
	})
	a.OnDeath = func(a *ecs.Area, e ecs.Entity) { a.Despawn(e) }
	for i := range 4 {
		if _, err := a.SpawnPlayer(uint64(i+1), int32(15+i), 20); err != nil {
			t.Fatal(err)
		}
	}
	for range 300 {
		a.Step()
		if err := a.CheckGrid(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSteadyStateTickAllocs(t *testing.T) {
	a, sys := testArea(t, arena(), 64, 64, []Spawner{
		{X: 2, Y: 2, W: 8, H: 8, Kind: 1, Count: 40, Respawn: 5, Leash: 64},
		{X: 50, Y: 50, W: 8, H: 8, Kind: 2, Count: 40, Respawn: 5, Leash: 64},
		{X: 2, Y: 50, W: 8, H: 8, Kind: 3, Count: 40, Respawn: 5, Leash: 64},
	})
	hp := ecs.Health{HP: 60000, Max: 60000} // players that do not die
	var players []ecs.Entity
	for i, sq := range [][2]int32{{12, 12}, {14, 14}, {12, 52}, {14, 50}} { // near the wolves and the slimes
		p, err := a.SpawnPlayer(uint64(i+1), sq[0], sq[1])
		if err != nil {
			t.Fatal(err)
		}
		a.SetHealth(p, hp)
		players = append(players, p)
	}
	a.OnDeath = func(a *ecs.Area, e ecs.Entity) { a.Despawn(e) }
	steps(a, 300)
	states := map[State]int{}
	for _, c := range creatures(a) {
		states[c.state]++
	}
	if states[Chase]+states[Attack] == 0 {
		t.Fatalf("states %v; want some chasing or attacking", states)
	}
	tick := func() {
		for _, p := range players {
			a.SetHealth(p, hp)
		}
		a.Step()
	}
	if got := testing.AllocsPerRun(200, tick); got != 0 {
		t.Fatalf("allocs per steady-state tick = %v; want 0", got)
	}
	if sys.Fields().Sweeps() == 0 {
		t.Fatal("no flow field was swept")
	}
}
