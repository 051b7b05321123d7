package content_test

import (
	"fmt"

	"github.com/leyworks/ley/content"
)

// The director checks an area kind a client names, and finds its default
// template.
func ExampleLibrary_Kind() {
	lib := content.Default()
	rules, err := lib.Kind("arena")
	if err != nil {
		panic(err)
	}
	fmt.Println(rules.MaxPlayers, rules.PvP, rules.LineOfSight)
	tp, _ := lib.Template("arena")
	fmt.Println(tp.Map.Path, tp.Map.W, tp.Map.H)

	_, err = lib.Kind("castle")
	fmt.Println(err)
	// Output:
	// 64 true true
	// maps/arena.tmj 96 96
	// content: unknown area kind "castle" (known: arena, home, offline, village)
}

// The area host builds its grid from a map: walkable squares, walls,
// static objects.
func ExampleMap() {
	tp, _ := content.Default().Template("home")
	m := tp.Map
	walkable := 0
	for y := range m.H {
		for x := range m.W {
			if m.Walkable(x, y) {
				walkable++
			}
		}
	}
	fmt.Printf("%s: %dx%d, %d walkable squares, %d objects, %d spawn squares\n",
		m.Path, m.W, m.H, walkable, len(m.Objects), len(m.Spawns))
	for _, o := range m.Objects {
		if o.Class == content.ClassDoor {
			fmt.Printf("%s %q at (%d, %d): open %v, blocks %v\n", o.Class, o.Name, o.X, o.Y, o.Open, o.Blocks())
		}
	}
	// Output:
	// maps/home.tmj: 24x16, 303 walkable squares, 14 objects, 9 spawn squares
	// door "front door" at (6, 10): open true, blocks false
	// door "bedroom door" at (11, 5): open false, blocks true
}

// The area host turns an item code from the protocol into its kind, and
// finds what gathering a tree gives.
func ExampleLibrary_ItemByCode() {
	lib := content.Default()
	door, ok := lib.ItemByCode(10)
	fmt.Println(door.Name, ok, door.Placed.Slot, door.Placed.Door, door.Yields)
	if _, ok := lib.ItemByCode(0); !ok {
		fmt.Println("code 0 is no item")
	}
	tree, _ := lib.Source(content.ClassTree)
	fmt.Println(tree.Yields, tree.CooldownTicks)
	// Output:
	// door_wood true occupant true [{door_wood 1}]
	// code 0 is no item
	// [{wood 2}] 40
}
