package interest

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/view"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/spatial"
	"github.com/leyworks/ley/systems/statics"
)

var updateSequence = flag.Bool("update", false, "rewrite testdata/sequence/*.hex")

// sequenceStep is one round of the worked example: what happens before
// it, and what the client's view must hold after it.
type sequenceStep struct {
	name string
	do   func(a *ecs.Area, es map[string]ecs.Entity)
	want []string // entities in view after the frame, by name
}

// TestSnapshotSequenceGolden is the worked example of docs/protocol.md,
// produced by the real rounds: a 24x16 Area in cells of 8 (3 x 2 cells),
// interest radius 4, the player P at (4,4), a creature Q at (6,4) in the
// same cell and R at (12,4) in the next. Frame 1 is the first view; in
// frame 2 Q steps east within its cell; in frame 3 Q steps east into the
// next cell; in frame 4 P steps west, so the cells to the east leave its
// view. The frames are the golden files testdata/sequence/*.hex (go test
// ./systems/interest/ -run TestSnapshotSequenceGolden -update rewrites
// them), and applying them to a client's view (net/view) gives what each
// step says.
func TestSnapshotSequenceGolden(t *testing.T) {
	a, err := ecs.NewArea(ecs.Config{ID: 5, W: 24, H: 16})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := spatial.Attach(a, 8)
	if err != nil {
		t.Fatal(err)
	}
	es := map[string]ecs.Entity{}
	if es["P"], err = a.SpawnPlayer(100, 4, 4); err != nil {
		t.Fatal(err)
	}
	if es["Q"], err = a.SpawnCreature(6, 4, ecs.Creature{Kind: 1}, 2); err != nil {
		t.Fatal(err)
	}
	if es["R"], err = a.SpawnCreature(12, 4, ecs.Creature{Kind: 1}, 2); err != nil {
		t.Fatal(err)
	}
	s, err := New(a, hash, statics.New(a.Grid, hash), 4)
	if err != nil {
		t.Fatal(err)
	}
	var v0 View
	var frames [][]byte
	var arena []byte
	var fr Frame
	step := func(name string, d ecs.Dir) func(*ecs.Area, map[string]ecs.Entity) {
		return func(a *ecs.Area, es map[string]ecs.Entity) {
			m := ecs.NewMap[ecs.Position](&a.World)
			pos := m.Get(es[name])
			dx, dy := d.Delta()
			a.MoveBody(es[name], pos, pos.X+dx, pos.Y+dy)
		}
	}
	steps := []sequenceStep{
		{"1-first-view", func(*ecs.Area, map[string]ecs.Entity) {}, []string{"P", "Q", "R"}},
		{"2-step-within-a-cell", step("Q", ecs.East), []string{"P", "Q", "R"}},
		{"3-step-into-the-next-cell", step("Q", ecs.East), []string{"P", "Q", "R"}},
		{"4-cells-leave-the-view", step("P", ecs.West), []string{"P"}},
	}
	v := view.New()
	info := &wire.AreaInfo{Area: 5, Kind: "village", W: 24, H: 16, CellSize: 8}
	if err := v.Apply(info); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "sequence")
	var stream wire.Stream // the client's connection
	for _, st := range steps {
		st.do(a, es)
		a.Tick++
		arena = s.Round(arena[:0])
		arena = s.Build(&v0, es["P"], 0, arena, &fr)
		got := message(&fr)
		v0.Written.Store(fr.Round)
		frames = append(frames, got)
		path := filepath.Join(dir, st.name+".hex")
		m, err := stream.Decode(got)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if *updateSequence {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, sequenceHex(st.name, m.(*wire.Snapshot), got, es), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := parseSeqHex(text)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: frame %x; golden %x", st.name, got, want)
		}
		if err := v.Apply(m); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		var seen []string
		for name, e := range es {
			if _, ok := v.Entities[e.ID()]; ok {
				seen = append(seen, name)
			}
		}
		slices.Sort(seen)
		if !slices.Equal(seen, st.want) {
			t.Fatalf("%s: the view holds %v; want %v", st.name, seen, st.want)
		}
		for name, e := range es {
			if got, ok := v.Entities[e.ID()]; ok {
				pm := ecs.NewMap[ecs.Position](&a.World)
				pos := pm.Get(e)
				if got.X != pos.X || got.Y != pos.Y {
					t.Fatalf("%s: %s seen at (%d,%d); it stands on (%d,%d)", st.name, name, got.X, got.Y, pos.X, pos.Y)
				}
			}
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(string(doc)), "")
	for _, fr := range frames {
		if !strings.Contains(flat, hex.EncodeToString(fr)) {
			t.Errorf("docs/protocol.md lacks the worked example frame %x", fr)
		}
	}
}

// sequenceHex renders one golden frame: what it holds, then its bytes.
func sequenceHex(name string, s *wire.Snapshot, b []byte, es map[string]ecs.Entity) []byte {
	names := map[uint32]string{}
	for n, e := range es {
		names[e.ID()] = n
	}
	var w bytes.Buffer
	fmt.Fprintf(&w, "# %s: snapshot tick %d, ack_seq %d, flags %d, %d bytes of records:\n", name, s.Tick, s.AckSeq, s.Flags, len(s.Records))
	r := wire.RecordReader{B: s.Records}
	var rec wire.Record
	for r.Next(&rec) {
		switch rec.Op {
		case wire.OpStep:
			fmt.Fprintf(&w, "#   step %s: %s (%d)\n", dirName(rec.Dir), names[rec.ID], rec.ID)
		case wire.OpCell:
			fmt.Fprintf(&w, "#   cell %d, %d entities\n", rec.Cell, rec.N)
		case wire.OpEnter:
			e := rec.Entity
			fmt.Fprintf(&w, "#     %s (%d): kind %d, look %d, at (%d,%d) facing %s, hp %d, flags %d\n", names[e.ID], e.ID, e.Kind, e.Look, e.X, e.Y, dirName(e.Facing), e.HP, e.Flags)
		case wire.OpForget:
			fmt.Fprintf(&w, "#   forget cell %d\n", rec.Cell)
		default:
			fmt.Fprintf(&w, "#   op %#x: %+v\n", rec.Op, rec)
		}
	}
	fmt.Fprintf(&w, "# regenerate with: go test ./systems/interest/ -run TestSnapshotSequenceGolden -update\n")
	for i := 0; i < len(b); i += 16 {
		line := b[i:min(i+16, len(b))]
		for j, c := range line {
			if j > 0 {
				w.WriteByte(' ')
			}
			fmt.Fprintf(&w, "%02x", c)
		}
		w.WriteByte('\n')
	}
	return w.Bytes()
}

func dirName(d wire.Dir) string {
	if d > wire.DirNW {
		return fmt.Sprint(uint8(d))
	}
	return [...]string{"n", "ne", "e", "se", "s", "sw", "w", "nw"}[d]
}

// parseSeqHex reads hex text, ignoring whitespace and '#' comments.
func parseSeqHex(text []byte) ([]byte, error) {
	var digits strings.Builder
	for line := range strings.SplitSeq(string(text), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	return hex.DecodeString(digits.String())
}
