package persist

import (
	"bytes"
	"errors"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/persist/blob"
	"github.com/leyworks/ley/systems/scenario"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	a, _, err := scenario.Build(scenario.Scenario{ID: 1, W: 32, H: 24, Players: 2, Wanderers: 30, WallPercent: 15, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		a.Step()
	}
	doors := []Door{{ID: 7, Open: true}, {ID: 9}}
	blob, err := Save(a, doors, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ecs.NewArea(ecs.Config{ID: 1, W: 32, H: 24})
	if err != nil {
		t.Fatal(err)
	}
	copy(b.Grid.Layer(ecs.LayerFloor), a.Grid.Layer(ecs.LayerFloor)) // the map, as the host's template lays it
	st, err := Load(b, blob, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Doors) != 2 || st.Doors[0] != doors[0] || st.Doors[1] != doors[1] {
		t.Fatalf("doors = %v; want %v", st.Doors, doors)
	}
	if err := b.CheckGrid(); err != nil {
		t.Fatal(err)
	}
	if b.Tick != a.Tick {
		t.Fatalf("tick = %d; want %d", b.Tick, a.Tick)
	}
	if got, want := b.World.Stats().Entities.Used, 30; got != want {
		t.Fatalf("%d entities restored; want %d wanderers (players are not in the blob)", got, want)
	}
	again, err := Save(b, st.Doors, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, blob) {
		t.Fatal("a restored Area saves to other bytes")
	}
}

func TestLoadRefusesBadBlobs(t *testing.T) {
	a, _ := ecs.NewArea(ecs.Config{ID: 1, W: 8, H: 8})
	small, _ := ecs.NewArea(ecs.Config{ID: 2, W: 4, H: 4})
	good, _ := Save(small, nil, nil)
	for name, data := range map[string][]byte{
		"garbage":    {0xff, 0x00},
		"wrong size": good,
		"empty":      nil,
	} {
		if _, err := Load(a, data, nil); !errors.Is(err, ErrBlob) {
			t.Errorf("%s: err = %v; want ErrBlob", name, err)
		}
	}
}

// TestCheckAgreesWithLoad: Check refuses exactly the blobs Load refuses
// for a fresh Area of that size, without building one.
func TestCheckAgreesWithLoad(t *testing.T) {
	src, _ := ecs.NewArea(ecs.Config{ID: 2, W: 4, H: 4})
	src.SpawnWanderer(1, 1, 5, 1, 1)
	cr, _ := src.SpawnCreature(3, 3, ecs.Creature{Kind: 2, Spawner: 1, Seed: 9}, 2)
	src.SetHealth(cr, ecs.Health{HP: 12, Max: 15})
	good, _ := Save(src, []Door{{ID: 4, Open: true}}, nil)
	edit := func(f func(b *blob.Blob)) []byte {
		b, err := blob.Decode(good, 4, 4)
		if err != nil {
			t.Fatal(err)
		}
		f(b)
		out, err := blob.Encode(b)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tests := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"a saved blob", good, true},
		{"garbage", []byte{0xff, 0x00}, false},
		{"empty", nil, false},
		{"over MaxBlob", make([]byte, MaxBlob+1), false},
		{"another version", edit(func(b *blob.Blob) { b.Version = Version + 1 }), false},
		{"another size", edit(func(b *blob.Blob) { b.W, b.H = 8, 2 }), false},
		{"a floor in a version 2 blob", edit(func(b *blob.Blob) { b.Floor = openFloor(16) }), false},
		{"a version 1 blob", edit(func(b *blob.Blob) { b.Version, b.Floor, b.Creatures, b.Doors = 1, openFloor(16), nil, nil }), true},
		{"a version 1 blob with a short floor", edit(func(b *blob.Blob) { b.Version, b.Floor, b.Creatures, b.Doors = 1, openFloor(3), nil, nil }), false},
		{"a version 1 blob with creatures", edit(func(b *blob.Blob) { b.Version, b.Floor, b.Doors = 1, openFloor(16), nil }), false},
		{"a creature off the grid", edit(func(b *blob.Blob) { b.Creatures[0].X = 4 }), false},
		{"a creature on a wanderer", edit(func(b *blob.Blob) { b.Creatures[0].X, b.Creatures[0].Y = 1, 1 }), false},
		{"a creature with no health", edit(func(b *blob.Blob) { b.Creatures[0].HP = 0 }), false},
		{"a door twice", edit(func(b *blob.Blob) { b.Doors = append(b.Doors, b.Doors[0]) }), false},
		{"a wanderer off the grid", edit(func(b *blob.Blob) { b.Wanderers[0].X = 777 }), false},
		{"a wanderer at a negative square", edit(func(b *blob.Blob) { b.Wanderers[0].Y = -1 }), false},
		{"a wanderer in a wall of a version 1 blob", edit(func(b *blob.Blob) {
			b.Version, b.Floor, b.Creatures, b.Doors = 1, openFloor(16), nil, nil
			b.Floor[1*4+1] = ecs.FloorWall
		}), false},
		{"two wanderers on one square", edit(func(b *blob.Blob) { b.Wanderers = append(b.Wanderers, b.Wanderers[0]) }), false},
		{"two wanderers on two squares", edit(func(b *blob.Blob) { b.Wanderers = append(b.Wanderers, blob.Wanderer{X: 2, Y: 3}) }), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.data, 4, 4)
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrBlob)) {
				t.Fatalf("Check: err = %v; want ok %v (or ErrBlob)", err, tt.ok)
			}
			a, _ := ecs.NewArea(ecs.Config{ID: 2, W: 4, H: 4})
			if _, lerr := Load(a, tt.data, nil); (lerr == nil) != (err == nil) {
				t.Fatalf("Load: err = %v, Check: err = %v; want them to agree", lerr, err)
			}
		})
	}
}

func FuzzLoad(f *testing.F) {
	small, _ := ecs.NewArea(ecs.Config{ID: 2, W: 4, H: 4})
	small.SpawnWanderer(1, 1, 5, 1, 1)
	cr, _ := small.SpawnCreature(2, 2, ecs.Creature{Kind: 1, Seed: 3}, 2)
	small.SetHealth(cr, ecs.Health{HP: 5, Max: 5})
	good, _ := Save(small, []Door{{ID: 1}}, nil)
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		a, _ := ecs.NewArea(ecs.Config{ID: 2, W: 4, H: 4})
		_, err := Load(a, data, nil)
		if cerr := Check(data, 4, 4); (cerr == nil) != (err == nil) {
			t.Fatalf("Check: %v, Load: %v; want them to agree", cerr, err)
		}
		if err != nil {
			if !errors.Is(err, ErrBlob) {
				t.Fatalf("error %v is not ErrBlob", err)
			}
			return
		}
		if err := a.CheckGrid(); err != nil {
			t.Fatal(err)
		}
	})
}

// openFloor is a version 1 floor of n open squares.
func openFloor(n int) []int32 {
	f := make([]int32, n)
	for i := range f {
		f[i] = ecs.FloorOpen
	}
	return f
}
