package blob

import (
	"errors"
	"reflect"
	"testing"

	"github.com/leyworks/ley/ecs"
)

// TestConstantsFollowTheEngine: the bounds and the wall value the blob
// checks with are the engine's, without the blob importing it.
func TestConstantsFollowTheEngine(t *testing.T) {
	if maxSide != ecs.MaxGridSide || wallFloor != ecs.FloorWall {
		t.Fatalf("maxSide %d, wallFloor %d; the engine's are %d and %d", maxSide, wallFloor, ecs.MaxGridSide, ecs.FloorWall)
	}
	if maxInventory != ecs.InventorySlots || maxStash != ecs.MaxStash {
		t.Fatalf("maxInventory %d, maxStash %d; the engine's are %d and %d", maxInventory, maxStash, ecs.InventorySlots, ecs.MaxStash)
	}
}

// TestCharacterState: a state with a stash and recipes comes back as it
// went, version 1 and 2 states (before stashes, before recipes) still
// read, and every broken one is refused with ErrBlob.
func TestCharacterState(t *testing.T) {
	c := &Character{Version: CharacterVersion, Inventory: []Stack{{ID: 1<<32 | 1, Kind: 13, Count: 5}, {}},
		Stash: []Stack{{ID: 1<<32 | 2, Kind: 6, Count: 1}}, Recipes: []uint16{1, 3, 40000}}
	b, err := EncodeCharacter(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeCharacter(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("DecodeCharacter = %+v; want %+v", got, c)
	}
	v1, err := EncodeCharacter(&Character{Version: 1, Inventory: c.Inventory})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeCharacter(v1); err != nil || len(got.Inventory) != 2 || got.Stash != nil {
		t.Errorf("DecodeCharacter(version 1) = %+v, %v; want its inventory and no stash", got, err)
	}
	v2, err := EncodeCharacter(&Character{Version: 2, Inventory: c.Inventory, Stash: c.Stash})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeCharacter(v2); err != nil || len(got.Stash) != 1 || got.Recipes != nil {
		t.Errorf("DecodeCharacter(version 2) = %+v, %v; want its stash and no recipes", got, err)
	}
	for name, bad := range map[string]*Character{
		"version 4":              {Version: 4},
		"version 0":              {Version: 0, Inventory: c.Inventory},
		"recipes in version 2":   {Version: 2, Recipes: []uint16{1}},
		"recipe 0":               {Version: CharacterVersion, Recipes: []uint16{0, 1}},
		"recipes out of order":   {Version: CharacterVersion, Recipes: []uint16{3, 1}},
		"recipe twice":           {Version: CharacterVersion, Recipes: []uint16{2, 2}},
		"too many recipes":       {Version: CharacterVersion, Recipes: make([]uint16, maxRecipes+1)},
		"stash in version 1":     {Version: 1, Stash: c.Stash},
		"empty stack in a stash": {Version: CharacterVersion, Stash: []Stack{{}}},
		"id in both":             {Version: CharacterVersion, Inventory: c.Inventory, Stash: []Stack{{ID: 1<<32 | 1, Kind: 13, Count: 1}}},
		"stash too long":         {Version: CharacterVersion, Stash: make([]Stack, maxStash+1)},
	} {
		if name == "too many recipes" {
			for i := range bad.Recipes {
				bad.Recipes[i] = uint16(i + 1)
			}
		}
		if name == "stash too long" {
			for i := range bad.Stash {
				bad.Stash[i] = Stack{ID: uint64(i + 1), Kind: 1, Count: 1}
			}
		}
		b, err := EncodeCharacter(bad)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeCharacter(b); !errors.Is(err, ErrBlob) {
			t.Errorf("%s: DecodeCharacter = %v; want ErrBlob", name, err)
		}
	}
}
