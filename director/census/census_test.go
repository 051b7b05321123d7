package census

import (
	"strings"
	"testing"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/systems/persist/blob"
)

func areaBlob(t *testing.T, placed []blob.Placed, created []blob.Tally) []byte {
	t.Helper()
	b, err := blob.Encode(&blob.Blob{Version: blob.Version, W: 8, H: 8, Placed: placed, Created: created})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func carrying(t *testing.T, stacks ...blob.Stack) []byte {
	t.Helper()
	b, err := blob.EncodeCharacter(&blob.Character{Version: blob.CharacterVersion, Inventory: stacks})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// count counts hs with a Counter.
func count(hs []store.Holding) *Census {
	var n Counter
	for _, h := range hs {
		n.Add(h)
	}
	return n.Census()
}

func TestCount(t *testing.T) {
	chair := blob.Stack{ID: 1<<32 | 1, Kind: 1, Count: 1}
	wood := blob.Stack{ID: 1<<32 | 2, Kind: 13, Count: 5}
	area := store.Holding{Area: 1, W: 8, H: 8, State: areaBlob(t, []blob.Placed{{X: 1, Y: 1, Stack: chair}}, []blob.Tally{{Kind: 1, Count: 1}, {Kind: 13, Count: 5}})}
	good := []store.Holding{area, {Account: 7, State: carrying(t, wood)}, {Account: 8}, {Area: 2, W: 8, H: 8}}
	c := count(good)
	if !c.OK() || c.Stacks != 2 || c.Areas != 1 || c.Characters != 2 || len(c.Kinds) != 2 || c.Kinds[1].Present != 5 {
		t.Fatalf("Count = %+v; want 2 stacks, conserved", c)
	}
	for _, tc := range []struct {
		name string
		hs   []store.Holding
		want string
	}{
		{"an item twice", []store.Holding{area, {Account: 7, State: carrying(t, wood, chair)}}, "twice"},
		{"an item lost", []store.Holding{area, {Account: 7}}, "kind 13: 0 present; 5 created"},
		{"a broken state", []store.Holding{area, {Account: 7, State: []byte{0xff}}}, "character 7"},
	} {
		c := count(tc.hs)
		if c.OK() || !strings.Contains(c.Err().Error(), tc.want) {
			t.Errorf("%s: Count = %+v; want a violation naming %q", tc.name, c, tc.want)
		}
	}
}
