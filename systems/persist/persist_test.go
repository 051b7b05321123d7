package persist

import (
	"bytes"
	"errors"
	"testing"

	"github.com/leyworks/ley/ecs"
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
	blob, err := Save(a)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ecs.NewArea(ecs.Config{ID: 1, W: 32, H: 24})
	if err != nil {
		t.Fatal(err)
	}
	if err := Load(b, blob); err != nil {
		t.Fatal(err)
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
	again, err := Save(b)
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
	good, _ := Save(small)
	for name, data := range map[string][]byte{
		"garbage":    {0xff, 0x00},
		"wrong size": good,
		"empty":      nil,
	} {
		if err := Load(a, data); !errors.Is(err, ErrBlob) {
			t.Errorf("%s: err = %v; want ErrBlob", name, err)
		}
	}
}

func FuzzLoad(f *testing.F) {
	small, _ := ecs.NewArea(ecs.Config{ID: 2, W: 4, H: 4})
	small.SpawnWanderer(1, 1, 5, 1, 1)
	good, _ := Save(small)
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		a, _ := ecs.NewArea(ecs.Config{ID: 2, W: 4, H: 4})
		if err := Load(a, data); err != nil {
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
