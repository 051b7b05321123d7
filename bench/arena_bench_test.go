package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/internal/contenttest"
	"github.com/leyworks/ley/systems/action"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/interest"
)

// The arena workload of issue 14: a 256x256 map with walls (a border and
// about 12% of wall runs and pillars), 64 players stepping about five times
// a second, and 1,000 creatures (20 wolf and 20 slime spawners of 25):
// hunting players along shared flow fields, sensing through the spatial
// hash with line of sight. The engine as the host builds it (systems/build,
// systems/interest); frames go to a counting sink instead of sockets
// (the host benchmarks have the end-to-end figures).

const (
	arenaSide     = 256
	arenaPlayers  = 64
	arenaSpawners = 40 // of arenaPerSpawner creatures each
	arenaPerSp    = 25
)

// arenaRules are the two rule sets compared: line of sight (what a player
// is sent, and creatures' sensing) on and off.
const arenaRules = `{"rules": [
	{"name": "arena-los", "max_players": 64, "steps_per_second": 6, "diagonal": true, "creatures_hunt_players": true,
	 "pvp": true, "line_of_sight": true, "sense_los": true},
	{"name": "arena-radius", "max_players": 64, "steps_per_second": 6, "diagonal": true, "creatures_hunt_players": true, "pvp": true}]}`

// arenaRows draws the arena from seed: walls, spawners and spawn points.
func arenaRows(seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 77))
	g := make([][]byte, arenaSide)
	for y := range g {
		g[y] = []byte(strings.Repeat(".", arenaSide))
		g[y][0], g[y][arenaSide-1] = '#', '#'
	}
	for x := 0; x < arenaSide; x++ {
		g[0][x], g[arenaSide-1][x] = '#', '#'
	}
	walls := 0
	for walls < arenaSide*arenaSide*12/100 {
		x, y, n := 2+rng.IntN(arenaSide-4), 2+rng.IntN(arenaSide-4), 3+rng.IntN(10)
		dx, dy := 1, 0
		if rng.IntN(2) == 0 {
			dx, dy = 0, 1
		}
		for i := 0; i < n && x < arenaSide-2 && y < arenaSide-2; i++ {
			if g[y][x] == '.' {
				g[y][x] = '#'
				walls++
			}
			x, y = x+dx, y+dy
		}
	}
	place := func(ch byte) {
		for {
			x, y := 2+rng.IntN(arenaSide-4), 2+rng.IntN(arenaSide-4)
			if g[y][x] == '.' {
				g[y][x] = ch
				return
			}
		}
	}
	for i := range arenaSpawners {
		place("WL"[i%2])
	}
	for range arenaPlayers {
		place('S')
	}
	rows := make([]string, arenaSide)
	for y := range g {
		rows[y] = string(g[y])
	}
	return rows
}

// arenaContent is the embedded content plus the arena rules and two
// templates over the same map: arena-los and arena-radius.
func arenaContent(tb testing.TB) *content.Library {
	tb.Helper()
	dir := tb.TempDir()
	rel := contenttest.MapWith(tb, dir, "arena256", arenaRows(1), arenaPerSp)
	files := map[string]string{
		content.RulesFile: arenaRules,
		content.TemplatesFile: fmt.Sprintf(`{"templates": [{"name": "arena-los", "rules": "arena-los", "map": %q},
			{"name": "arena-radius", "rules": "arena-radius", "map": %q}]}`, filepath.ToSlash(rel), filepath.ToSlash(rel)),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	lib, err := content.LoadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return lib
}

// arena is one arena built as a host builds it, with its players'
// snapshot frames going to a counting sink.
type arena struct {
	eng     *build.Built
	is      *interest.System
	players []ecs.Entity
	views   []interest.View
	rng     *rand.Rand
	seq     uint32
	arena   []byte
	frame   interest.Frame
	bytes   int64
	frames  int64
}

// newArena builds area id of template tpl with arenaPlayers players, each
// with a view; every second tick is a snapshot round to all of them.
func newArena(tb testing.TB, lib *content.Library, id uint32, tpl string) *arena {
	tb.Helper()
	eng, err := build.Area(lib, build.Spec{ID: ecs.AreaID(id), Kind: tpl, Template: tpl, TickRate: 20, CellSize: 8})
	if err != nil {
		tb.Fatal(err)
	}
	is, err := interest.New(eng.Area, eng.Hash, eng.Map, 24)
	if err != nil {
		tb.Fatal(err)
	}
	ar := &arena{eng: eng, is: is, rng: rand.New(rand.NewPCG(uint64(id), 3)), views: make([]interest.View, arenaPlayers)}
	a := eng.Area
	for i := range arenaPlayers {
		x, y, _ := eng.Map.SpawnPoint(i)
		x, y, _ = action.NearestFree(a.Grid, x, y)
		e, err := a.SpawnPlayer(uint64(id)*1000+uint64(i), x, y)
		if err != nil {
			tb.Fatal(err)
		}
		a.SetHealth(e, ecs.Health{HP: 60000, Max: 60000}) // the benchmark's players do not die
		ar.players = append(ar.players, e)
	}
	a.AfterTick = func(a *ecs.Area) {
		if a.Tick%2 == 0 {
			ar.round()
		}
	}
	a.Wake()
	return ar
}

// round is one snapshot round to every player, as a host makes it.
func (ar *arena) round() {
	ar.arena = ar.is.Round(ar.arena[:0])
	for i, e := range ar.players {
		ar.arena = ar.is.Build(&ar.views[i], e, 0, ar.arena, &ar.frame)
		if len(ar.frame.Parts) > 0 {
			ar.bytes += int64(ar.frame.Len)
			ar.frames++
			ar.views[i].Written.Store(ar.frame.Round)
		}
	}
}

// move posts a random step for about a quarter of the players (five steps
// a second each at 20 Hz).
func (ar *arena) move() {
	ar.seq++
	for _, e := range ar.players {
		if ar.rng.IntN(4) == 0 {
			ar.eng.Area.Post(e, ecs.Intent{Seq: ar.seq, Kind: ecs.IntentStep, Dir: ecs.Dir(ar.rng.IntN(8))})
		}
	}
}

// BenchmarkArena: one arena (256x256, 64 players, 1,000 creatures); one op
// is one tick (systems, and every second tick a snapshot round to the 64
// peers). Reported: the tick's p50 and p99 over 400 timed ticks, bytes per
// peer per snapshot, with line of sight and with the radius alone.
//
// go test -run '^$' -bench 'Arena$' -benchmem ./bench/
func BenchmarkArena(b *testing.B) {
	lib := arenaContent(b)
	for _, tpl := range []string{"arena-los", "arena-radius"} {
		b.Run(tpl, func(b *testing.B) {
			ar := newArena(b, lib, 1, tpl)
			for range 200 { // the creatures fill in, find players, fields are swept
				ar.move()
				ar.eng.Area.Step()
			}
			if n := ar.eng.Area.Creatures(); n != arenaSpawners*arenaPerSp {
				b.Fatalf("%d creatures; want %d", n, arenaSpawners*arenaPerSp)
			}
			ticks := make([]time.Duration, 400)
			for i := range ticks {
				ar.move()
				t0 := time.Now()
				ar.eng.Area.Step()
				ticks[i] = time.Since(t0)
			}
			slices.Sort(ticks)
			ar.bytes, ar.frames = 0, 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				ar.move()
				b.StartTimer()
				ar.eng.Area.Step()
			}
			b.ReportMetric(float64(ticks[len(ticks)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(ticks[len(ticks)*99/100].Microseconds())/1000, "p99-ms")
			if ar.frames > 0 {
				b.ReportMetric(float64(ar.bytes)/float64(ar.frames), "B/frame")
			}
		})
	}
}

// TestArenaTickAllocatesNothing: the arena's steady tick, snapshot rounds
// included, allocates nothing.
func TestArenaTickAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race; make test runs this without it")
	}
	ar := newArena(t, arenaContent(t), 1, "arena-los")
	for range 200 {
		ar.move()
		ar.eng.Area.Step()
	}
	if got := testing.AllocsPerRun(100, func() { ar.move(); ar.eng.Area.Step() }); got != 0 {
		t.Fatalf("allocs per tick = %v; want 0", got)
	}
}

// BenchmarkArenasPerHost drives N arenas with the host's real Clock at 20
// Hz for LEY_ARENA_SECONDS (default 5) per rung, N = 1, 2, 3, ... until an
// Area's tick p99 passes 5 ms or slots run late, and reports the largest N
// that held (arenas-held) with its tick p99 and the host's CPU per
// Area-second.
//
// go test -run '^$' -bench ArenasPerHost -benchtime 1x ./bench/
func BenchmarkArenasPerHost(b *testing.B) {
	hold := 5 * time.Second
	if s := os.Getenv("LEY_ARENA_SECONDS"); s != "" {
		d, err := time.ParseDuration(s + "s")
		if err != nil {
			b.Fatal(err)
		}
		hold = d
	}
	lib := arenaContent(b)
	for b.Loop() {
		held, heldP99, heldCPU := 0, time.Duration(0), 0.0
		for n := 1; n <= 32; n++ {
			p99, late, cpu := arenaRung(b, lib, n, hold)
			b.Logf("%d arenas: worst tick p99 %v, %d late slots, %.0f µs CPU per Area-second", n, p99, late, cpu)
			if p99 > 5*time.Millisecond || late > 0 {
				break
			}
			held, heldP99, heldCPU = n, p99, cpu
		}
		b.ReportMetric(float64(held), "arenas-held")
		b.ReportMetric(float64(heldP99.Microseconds())/1000, "p99-ms")
		b.ReportMetric(heldCPU, "cpu-µs/area-s")
	}
}

// arenaRung runs n arenas on one Clock for hold and returns the worst
// Area's tick p99, the late slots and the process CPU per Area-second.
func arenaRung(b *testing.B, lib *content.Library, n int, hold time.Duration) (time.Duration, uint64, float64) {
	clock, err := ecs.NewClock(ecs.ClockConfig{TickRate: 20, FrozenPollRate: 4})
	if err != nil {
		b.Fatal(err)
	}
	var ars []*arena
	for i := range n {
		ar := newArena(b, lib, uint32(i+1), "arena-los")
		round := ar.eng.Area.AfterTick
		ar.eng.Area.AfterTick = func(a *ecs.Area) { round(a); ar.move() }
		ars = append(ars, ar)
		clock.Add(ar.eng.Area)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = clock.Run(ctx) }()
	time.Sleep(2 * time.Second) // warm: creatures placed, fields swept
	late0 := clock.LateSlots()
	cpu0 := processCPU()
	time.Sleep(hold)
	cpu := processCPU() - cpu0
	late := clock.LateSlots() - late0
	cancel()
	<-done
	clock.Close()
	var worst time.Duration
	for _, ar := range ars {
		worst = max(worst, ar.eng.Area.Stats().P99)
	}
	return worst, late, float64(cpu.Microseconds()) / (float64(n) * hold.Seconds())
}

// processCPU is this process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
