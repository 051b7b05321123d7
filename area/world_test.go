package area

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/area/areatest"
	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/internal/contenttest"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
)

// testMap draws a map (internal/contenttest).
func testMap(t testing.TB, dir, name string, rows []string) string {
	t.Helper()
	return contenttest.Map(t, dir, name, rows)
}

// testRules and testCreatures are the rule sets and creature kinds the
// tests add to the embedded ones: hunting with and without line of sight,
// a village whose maps need no plots (anyone builds anywhere), and a
// hound (hunts players, never wanders) and a statue (does nothing).
const (
	testRules = `{"rules": [
		{"name": "village", "max_players": 64, "steps_per_second": 5, "diagonal": true, "build": "anyone"},
		{"name": "hunt", "max_players": 8, "steps_per_second": 10, "diagonal": true, "creatures_hunt_players": true},
		{"name": "sight", "max_players": 8, "steps_per_second": 10, "diagonal": true, "creatures_hunt_players": true,
		 "line_of_sight": true, "sense_los": true, "pvp": true}]}`
	testCreatures = `{"creatures": [
		{"name": "hound", "hp": 30, "step_ticks": 2, "sense_radius": 8, "attack_damage": 5, "attack_ticks": 4, "hunts_players": true, "wanders": false},
		{"name": "statue", "hp": 10, "step_ticks": 20, "sense_radius": 1, "attack_damage": 0, "hunts_players": false, "wanders": false}]}`
)

// testContent loads the embedded content, plus testRules and
// testCreatures, with templates of the given rule sets over maps drawn by
// testMap (name -> rule set, rows).
func testContent(t *testing.T, maps map[string]struct {
	rules string
	rows  []string
}) *content.Library {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{content.RulesFile: testRules, content.CreaturesFile: testCreatures} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var tpls []map[string]string
	for name, m := range maps {
		tpls = append(tpls, map[string]string{"name": name, "rules": m.rules, "map": filepath.ToSlash(testMap(t, dir, name, m.rows))})
	}
	b, _ := json.Marshal(map[string]any{"templates": tpls})
	if err := os.WriteFile(filepath.Join(dir, content.TemplatesFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := content.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// TestMapReachesTheClient: a player joining a templated Area gets the
// map's ground, walls and objects in static messages, the Area's creature
// kinds in area_info, and lands on the map's spawn point.
func TestMapReachesTheClient(t *testing.T) {
	lib := testContent(t, map[string]struct {
		rules string
		rows  []string
	}{"yard": {"village", []string{
		"################",
		"#S.....~~......#",
		"#......~~...T..#",
		"####D###########",
		"#..............#",
		"#.........W....#",
		"#..............#",
		"################",
	}}})
	h, d := testHost(t, func(c *Config) { c.Content = lib; c.InterestRadius = 0 })
	if err := d.SpawnTemplate(1, 0, 0, "village", "yard"); err != nil {
		t.Fatal(err)
	}
	cl := dial(t, h)
	// The grant places the character on (0, 0), a wall of this map: it
	// lands on the map's spawn point instead.
	tok, err := d.Grant(1, 100, 100, 0, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cl.hello(tok, 100)
	info := expectMsg[*wire.AreaInfo](cl, 5*time.Second)
	if info.W != 16 || info.H != 8 || len(info.Creatures) != 1 || info.Creatures[0].Name != "wolf" || info.Creatures[0].HP != 30 || info.PlayerHP != 100 {
		t.Fatalf("area_info %+v; want 16x8, the wolf (30 hp) its one creature kind, players of 100 hp", info)
	}
	var wolf wire.EntityState
	waitSnapshot(t, cl, func(*wire.Snapshot) bool {
		for _, e := range cl.v.Entities {
			if e.Kind == wire.KindCreature {
				wolf = e
			}
		}
		return len(cl.v.Statics) == 2 && wolf.ID != 0
	})
	if you := cl.you(); you.X != 1 || you.Y != 1 || you.HP != 100 {
		t.Fatalf("you %+v; want at the spawn point (1, 1) with 100 hp", you)
	}
	if wolf.Look != 1 || wolf.HP != 30 {
		t.Fatalf("the wolf %+v; want look 1 (area_info.creatures[0]) and 30 hp", wolf)
	}
	for _, sq := range []struct {
		x, y int32
		kind uint8
	}{{0, 0, wire.FloorWall}, {1, 1, wire.FloorGrass}, {7, 1, wire.FloorWater}, {8, 2, wire.FloorWater}, {4, 3, wire.FloorGrass}, {15, 7, wire.FloorWall}} {
		if k, ok := cl.v.Floor(sq.x, sq.y); !ok || k != sq.kind {
			t.Errorf("floor at (%d,%d) = %d, %v; want %d", sq.x, sq.y, k, ok, sq.kind)
		}
	}
	if o, ok := cl.v.ObjectAt(4, 3); !ok || o.Kind != wire.ObjectDoor || o.State != 0 {
		t.Errorf("object at (4,3) = %+v, %v; want a closed door", o, ok)
	}
	if o, ok := cl.v.ObjectAt(12, 2); !ok || o.Kind != wire.ObjectTree {
		t.Errorf("object at (12,2) = %+v, %v; want a tree", o, ok)
	}
}

// act sends one intent and returns its answer: the refusal's code, or
// CodeOK once a snapshot acknowledges it.
func (cl *client) act(seq uint32, kind wire.IntentKind, d wire.Dir) wire.Code {
	cl.t.Helper()
	cl.send(&wire.Intent{Seq: seq, Kind: kind, Dir: d})
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		switch m := cl.next(time.Until(deadline)).(type) {
		case *wire.IntentResult:
			if m.Seq == seq {
				return m.Code
			}
		case *wire.Snapshot:
			if wire.SeqAfter(m.AckSeq, seq-1) {
				return wire.CodeOK
			}
		}
	}
	cl.t.Fatalf("no answer to intent %d within 5 s", seq)
	return 0
}

// TestDoorOpenedByOneIsOpenForAnother: a closed door stops a step; an
// action opens it for everyone (the other player's map of the cell changes
// too), and then the step goes through.
func TestDoorOpenedByOneIsOpenForAnother(t *testing.T) {
	lib := testContent(t, map[string]struct {
		rules string
		rows  []string
	}{"hall": {"village", []string{
		"##########",
		"#S......S#",
		"####D#####",
		"#........#",
		"##########",
	}}})
	h, d := testHost(t, func(c *Config) { c.Content = lib; c.InterestRadius = 0 })
	if err := d.SpawnTemplate(1, 0, 0, "village", "hall"); err != nil {
		t.Fatal(err)
	}
	ada, bo := dial(t, h), dial(t, h)
	ada.hello(d.grant(1, 100, 100, 4, 1, time.Minute), 100)
	bo.hello(d.grant(1, 101, 101, 7, 1, time.Minute), 101)
	for _, cl := range []*client{ada, bo} {
		waitSnapshot(t, cl, func(*wire.Snapshot) bool { o, ok := cl.v.ObjectAt(4, 2); return ok && o.State == 0 })
	}
	if code := ada.act(1, wire.IntentStep, wire.DirS); code != wire.CodeBlocked {
		t.Fatalf("a step into the closed door: %s; want BLOCKED", code)
	}
	if code := ada.act(2, wire.IntentAction, wire.DirS); code != wire.CodeOK {
		t.Fatalf("opening the door: %s; want applied", code)
	}
	waitSnapshot(t, bo, func(*wire.Snapshot) bool { o, ok := bo.v.ObjectAt(4, 2); return ok && o.State == 1 })
	if code := ada.act(3, wire.IntentStep, wire.DirS); code != wire.CodeOK {
		t.Fatalf("a step into the open door: %s; want applied", code)
	}
	if code := ada.act(4, wire.IntentAction, wire.DirE); code != wire.CodeNothingThere {
		t.Fatalf("an action on a wall: %s; want NOTHING_THERE", code)
	}
	// Bo comes next to the door: an action on it while ada stands in the
	// doorway is an attack on ada, which a village does not allow; once she
	// is through, bo closes it, and she sees it closed.
	for seq := uint32(1); seq <= 2; seq++ {
		if code := bo.act(seq, wire.IntentStep, wire.DirW); code != wire.CodeOK {
			t.Fatalf("bo's step %d: %s", seq, code)
		}
	}
	if code := bo.act(3, wire.IntentAction, wire.DirSW); code != wire.CodeNotAllowed {
		t.Fatalf("bo's action on ada in the doorway: %s; want NOT_ALLOWED (no PvP here)", code)
	}
	if code := ada.act(5, wire.IntentStep, wire.DirS); code != wire.CodeOK {
		t.Fatalf("ada's step through: %s", code)
	}
	if code := bo.act(4, wire.IntentAction, wire.DirSW); code != wire.CodeOK {
		t.Fatalf("bo closing the door: %s; want applied", code)
	}
	waitSnapshot(t, ada, func(*wire.Snapshot) bool { o, ok := ada.v.ObjectAt(4, 2); return ok && o.State == 0 })
	if code := ada.act(6, wire.IntentStep, wire.DirN); code != wire.CodeBlocked {
		t.Fatalf("ada's step back into the closed door: %s; want BLOCKED", code)
	}
}

// losRows: a hound (3, 3) and, behind a wall with gaps at both ends, a
// player's square (8, 3): five squares apart, within the hound's sense.
var losRows = []string{
	"############",
	"#S.........#",
	"#.....#....#",
	"#..H..#....#",
	"#.....#....#",
	"#.....#....#",
	"#..........#",
	"############",
}

// TestCreaturesHuntWhatTheySee: where the rules ask for line of sight, a
// hound does not sense a player behind a wall (and the player is not sent
// the hound it cannot see); where they do not, the same hound goes round
// the wall and bites.
func TestCreaturesHuntWhatTheySee(t *testing.T) {
	lib := testContent(t, map[string]struct {
		rules string
		rows  []string
	}{"blind": {"hunt", losRows}, "sighted": {"sight", losRows}})
	h, d := testHost(t, func(c *Config) { c.Content = lib; c.InterestRadius = 0 })
	for i, tpl := range []struct{ name, rules string }{{"sighted", "sight"}, {"blind", "hunt"}} {
		if err := d.SpawnTemplate(uint32(i+1), 0, 0, tpl.rules, tpl.name); err != nil {
			t.Fatal(err)
		}
	}
	// Line of sight: for two seconds the hound neither comes nor is seen.
	cl := dial(t, h)
	cl.hello(d.grant(1, 100, 100, 8, 3, time.Minute), 100)
	deadline := time.Now().Add(2 * time.Second)
	snaps := 0
	for time.Now().Before(deadline) {
		if _, ok := cl.next(time.Until(deadline) + time.Second).(*wire.Snapshot); !ok {
			continue
		}
		snaps++
		for _, e := range cl.v.Entities {
			if e.Kind == wire.KindCreature {
				t.Fatalf("snapshot %d shows the hound at (%d,%d), behind the wall", snaps, e.X, e.Y)
			}
		}
		if you := cl.you(); you.HP != 100 {
			t.Fatalf("hp %d: the hound found a player it cannot see", you.HP)
		}
	}
	if snaps == 0 { // nothing new in view: the keep-alives only
		waitSnapshot(t, cl, func(*wire.Snapshot) bool { return true })
		if cl.you().HP != 100 {
			t.Fatal("the hound found a player it cannot see")
		}
	}
	// Into the hound's sight, round the north end of the wall: it is shown,
	// and it hunts.
	for seq, dir := range []wire.Dir{wire.DirN, wire.DirN, wire.DirW, wire.DirW} {
		if code := cl.act(uint32(seq+1), wire.IntentStep, dir); code != wire.CodeOK && seq < 3 {
			t.Fatalf("step %d: %s", seq+1, code) // the last may meet the hound coming
		}
	}
	waitSnapshot(t, cl, func(*wire.Snapshot) bool {
		for _, e := range cl.v.Entities {
			if e.Kind == wire.KindCreature {
				return cl.you().HP < 100
			}
		}
		return false
	})
	// No line of sight asked: the same place, and the hound comes round.
	blind := dial(t, h)
	blind.hello(d.grant(2, 200, 200, 8, 3, time.Minute), 200)
	waitSnapshot(t, blind, func(*wire.Snapshot) bool { return blind.you().HP < 100 })
}

// TestAttacksKillAndBodiesComeBack: a player's attacks take a creature's
// health until it dies, and its spawner brings a new one back; under PvP a
// player killed by another comes back at a spawn point with full health.
func TestAttacksKillAndBodiesComeBack(t *testing.T) {
	lib := testContent(t, map[string]struct {
		rules string
		rows  []string
	}{"ring": {"sight", []string{
		"##########",
		"#S.......#",
		"#..M.....#",
		"#........#",
		"##########",
	}}})
	h, d := testHost(t, func(c *Config) { c.Content = lib; c.InterestRadius = 0 })
	if err := d.SpawnTemplate(1, 0, 0, "sight", "ring"); err != nil {
		t.Fatal(err)
	}
	ada, bo := dial(t, h), dial(t, h)
	ada.hello(d.grant(1, 100, 100, 4, 2, time.Minute), 100)
	bo.hello(d.grant(1, 101, 101, 5, 2, time.Minute), 101)
	statue := func() (wire.EntityState, bool) {
		for _, e := range ada.v.Entities {
			if e.Kind == wire.KindCreature {
				return e, true
			}
		}
		return wire.EntityState{}, false
	}
	waitView(t, ada, func() bool { s, ok := statue(); return ok && s.X == 3 && s.Y == 2 && s.HP == 10 })
	seq := uint32(0)
	hit := func(cl *client, d wire.Dir) wire.Code { seq++; return cl.act(seq, wire.IntentAction, d) }
	if code := hit(ada, wire.DirW); code != wire.CodeOK {
		t.Fatalf("ada's first blow: %s", code)
	}
	waitView(t, ada, func() bool { s, ok := statue(); return ok && s.HP == 5 })
	if code := hit(ada, wire.DirW); code != wire.CodeOK {
		t.Fatalf("ada's second blow: %s", code)
	}
	waitView(t, ada, func() bool { _, ok := statue(); return !ok })
	if code := hit(ada, wire.DirW); code != wire.CodeNothingThere {
		t.Fatalf("a blow at the empty square: %s; want NOTHING_THERE", code)
	}
	waitView(t, ada, func() bool { s, ok := statue(); return ok && s.HP == 10 }) // a new one (its id may be the old one's)
	// PvP: bo strikes ada (5 a blow) until she falls: she comes back on the
	// spawn point, whole.
	for i := uint32(1); i <= 20; i++ {
		if code := bo.act(i, wire.IntentAction, wire.DirW); code != wire.CodeOK {
			t.Fatalf("bo's blow %d: %s", i, code)
		}
		if i == 10 {
			waitView(t, ada, func() bool { return ada.you().HP == 50 })
		}
	}
	waitView(t, ada, func() bool { y := ada.you(); return y.X == 1 && y.Y == 1 && y.HP == 100 })
}

// TestWorldOutlivesItsIncarnation: an Area closed and made live again from
// its last snapshot keeps its doors as they were left and its creatures
// where they stood, with the health they had.
func TestWorldOutlivesItsIncarnation(t *testing.T) {
	lib := testContent(t, map[string]struct {
		rules string
		rows  []string
	}{"keep": {"sight", []string{
		"##########",
		"#S......M#",
		"####D#####",
		"#........#",
		"##########",
	}}})
	h, d := testHost(t, func(c *Config) { c.Content = lib; c.InterestRadius = 0 })
	d.AutoAck.Store(true)
	if err := d.SpawnTemplate(1, 0, 0, "sight", "keep"); err != nil {
		t.Fatal(err)
	}
	cl := dial(t, h)
	cl.hello(d.grant(1, 100, 100, 4, 1, time.Minute), 100)
	if code := cl.act(1, wire.IntentAction, wire.DirS); code != wire.CodeOK {
		t.Fatalf("opening the door: %s", code)
	}
	for seq := uint32(2); seq <= 4; seq++ { // east, next to the statue
		if code := cl.act(seq, wire.IntentStep, wire.DirE); code != wire.CodeOK {
			t.Fatalf("step %d: %s", seq, code)
		}
	}
	if code := cl.act(5, wire.IntentAction, wire.DirE); code != wire.CodeOK {
		t.Fatalf("a blow at the statue: %s", code)
	}
	d.Send(&control.CloseArea{Area: 1, Reason: uint16(wire.CodeAreaClosing)})
	var final *control.Snapshot
	for final == nil {
		s, err := areatest.Expect[*control.Snapshot](d.Director, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if s.Area == 1 && s.Final {
			final = s
		}
	}
	if _, err := areatest.Expect[*control.AreaClosed](d.Director, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	d.Send(&control.SpawnArea{Area: 1, Epoch: 2, Kind: "sight", Template: "keep", Seq: final.Seq, Blob: final.Blob})
	if r, err := areatest.Expect[*control.AreaReady](d.Director, 10*time.Second); err != nil || r.Error != "" {
		t.Fatalf("the Area again: %+v, %v", r, err)
	}
	again := dial(t, h)
	again.hello(d.grant(1, 101, 101, 1, 1, time.Minute), 101)
	waitSnapshot(t, again, func(*wire.Snapshot) bool {
		o, ok := again.v.ObjectAt(4, 2)
		for _, e := range again.v.Entities {
			if e.Kind == wire.KindCreature {
				return ok && o.State == 1 && e.X == 8 && e.Y == 1 && e.HP == 5
			}
		}
		return false
	})
}

// TestOriginsAllowed: a browser page of an origin the host allows may open
// a player connection; a page of another site is refused 403 at the
// upgrade; a program, which sends no Origin, is always accepted.
func TestOriginsAllowed(t *testing.T) {
	h, _ := testHost(t, func(c *Config) { c.AllowedOrigins = []string{"http://play.example:8080"} })
	addr := strings.TrimSuffix(strings.TrimPrefix(h.WSURL(), "ws://"), "/ws")
	upgrade := func(origin string) string {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		req := "GET /ws HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
		if origin != "" {
			req += "Origin: " + origin + "\r\n"
		}
		if _, err := io.WriteString(c, req+"\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	for _, tt := range []struct{ origin, want string }{
		{"", " 101 "},
		{"http://play.example:8080", " 101 "},
		{"HTTP://Play.Example:8080", " 101 "},
		{"http://evil.example", " 403 "},
		{"http://play.example:8081", " 403 "},
		{"null", " 403 "},
	} {
		if got := upgrade(tt.origin); !strings.Contains(got, tt.want) {
			t.Errorf("Origin %q: %q; want%s", tt.origin, strings.TrimSpace(got), tt.want)
		}
	}
}
