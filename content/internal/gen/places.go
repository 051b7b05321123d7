package main

// home is a small house in a garden: a living room where players appear,
// a bedroom behind a closed door with a chest, a path to the gate, a pond.
func home() *builder {
	b := newBuilder("home.tmj", 24, 16, tGrass)
	b.fill(17, 11, 6, 5, tSand)
	b.disc(20, 13.5, 2.6, 1.8, tWater)
	b.house("front door", 2, 1, 16, 10, 6, 10, true)
	b.walls(11, 2, 1, 8) // between the living room and the bedroom
	b.door("bedroom door", 11, 5, false)
	b.fill(6, 11, 2, 5, tDirt) // the path to the gate
	b.reserve(6, 11, 2, 5)
	b.spawn(rect{name: "living room", x: 5, y: 5, w: 3, h: 3})
	b.chest("blanket chest", 15, 3)
	b.sign(8, 12, "Home. Wipe your feet.")
	for _, t := range [][2]int{{1, 13}, {3, 14}, {12, 13}, {14, 14}, {19, 1}, {21, 4}, {20, 8}, {22, 10}, {0, 1}} {
		b.put(object{x: t[0], y: t[1], tile: tTree})
	}
	b.put(object{x: 10, y: 14, tile: tRock})
	return b
}

// village is a crossroads village: a paved square where players appear,
// roads to the four edges, six houses (some locked), a pond, a wood on the
// west edge, meadows with deer, and the road east ending in the portal to
// the arena.
func village() *builder {
	b := newBuilder("village.tmj", 64, 48, tGrass)
	b.fill(0, 22, 64, 3, tDirt)    // the east-west road
	b.fill(30, 0, 3, 48, tDirt)    // the north-south road
	b.fill(25, 17, 13, 13, tStone) // the village square
	b.reserve(0, 21, 64, 5)
	b.reserve(29, 0, 5, 48)
	b.reserve(25, 17, 13, 13)
	b.spawn(rect{name: "village square", x: 29, y: 21, w: 5, h: 5})

	b.disc(50, 6, 9.5, 5.5, tSand) // the pond
	b.disc(50, 6, 8, 4, tWater)

	type house struct {
		name               string
		x, y, w, h, dx, dy int
		open               bool
	}
	for _, h := range []house{
		{"miller's door", 6, 14, 10, 7, 10, 20, true},
		{"weaver's door", 18, 14, 7, 7, 21, 20, true},
		{"smith's door", 37, 13, 9, 8, 41, 20, false},
		{"inn door", 48, 14, 10, 7, 52, 20, true},
		{"baker's door", 8, 27, 10, 7, 12, 27, true},
		{"elder's door", 38, 27, 10, 8, 42, 27, false},
	} {
		b.house(h.name, h.x, h.y, h.w, h.h, h.dx, h.dy, h.open)
		// a path from the door to the road
		if h.dy < 22 {
			b.fill(h.dx, h.dy+1, 1, 22-h.dy-1, tDirt)
		} else {
			b.fill(h.dx, 25, 1, h.dy-25, tDirt)
		}
	}
	b.chest("miller's chest", 14, 15)
	b.chest("inn chest", 56, 15)
	b.chest("baker's chest", 16, 32)
	b.chest("elder's chest", 46, 33)

	b.sign(26, 18, "Welcome to the village. The arena lies east, along the road.")
	b.sign(61, 21, "East: the arena. Wolves and slimes. Bring friends.")
	b.sign(41, 12, "Do not feed the ducks.")
	b.sign(33, 16, "The Inn: east of the square.")

	b.portal(portal{name: "to the arena", x: 62, y: 23, target: "arena"})

	// a wood along the west edge, trees and rocks in the meadows
	b.scatter(1, tTree, tGrass, 450, func(x, y int) bool { return x < 3 })
	b.scatter(2, tTree, tGrass, 45, nil)
	b.scatter(3, tRock, tGrass, 15, nil)
	b.scatter(4, tRock, tSand, 60, nil)

	b.spawners = append(b.spawners, []spawner{
		{rect{"north meadow deer", 6, 2, 12, 9}, "deer", 3, 30, 10},
		{rect{"south-west meadow deer", 4, 37, 16, 9}, "deer", 3, 30, 10},
		{rect{"south-east meadow deer", 48, 37, 13, 8}, "deer", 2, 30, 10},
	}...)

	// plots, where anyone may build (the village's rules build on plots
	// only): open ground north of the houses, between the southern
	// houses, and in the south-east meadow
	b.plots = append(b.plots, []rect{
		{"north field", 22, 6, 10, 5},
		{"south green", 26, 28, 10, 6},
		{"east field", 52, 31, 9, 5},
	}...)
	return b
}

// arena is a walled ruin: a sand ring in the middle where players appear,
// a portal back to the village, and around it a field of pillars joined
// by broken walls (every wall keeps a gap, so no part is sealed off), with
// wolves in the corners and slimes along the sides.
func arena() *builder {
	const n = 96
	b := newBuilder("arena.tmj", n, n, tStone)
	b.walls(0, 0, n, 1)
	b.walls(0, n-1, n, 1)
	b.walls(0, 0, 1, n)
	b.walls(n-1, 0, 1, n)
	b.disc(48, 48, 13, 13, tSand)
	central := func(x, y int) bool {
		dx, dy := float64(x)-47.5, float64(y)-47.5
		return dx*dx+dy*dy < 15*15
	}
	for j := range 12 {
		for i := range 12 {
			px, py := 8*i+3, 8*j+3
			if central(px, py) {
				continue
			}
			b.walls(px, py, 2, 2) // a pillar
			// a wall east to the next pillar, and one south, each with a
			// two-square gap somewhere along it
			if i < 11 && hash(10, i, j)%100 < 60 && !central(px+8, py) {
				gap := int(hash(11, i, j) % 5)
				for k := range 6 {
					if k != gap && k != gap+1 {
						b.walls(px+2+k, py, 1, 1)
					}
				}
			}
			if j < 11 && hash(12, i, j)%100 < 60 && !central(px, py+8) {
				gap := int(hash(13, i, j) % 5)
				for k := range 6 {
					if k != gap && k != gap+1 {
						b.walls(px, py+2+k, 1, 1)
					}
				}
			}
		}
	}
	for _, c := range [][2]float64{{24, 72}, {72, 24}, {72, 72}, {24, 24}} {
		b.disc(c[0], c[1], 3.2, 2.4, tSand)
		b.disc(c[0], c[1], 2, 1.3, tWater)
	}
	b.spawn(rect{name: "the ring", x: 46, y: 46, w: 4, h: 4})
	b.portal(portal{name: "to the village", x: 47, y: 39, target: "village", toX: 60, toY: 23, hasTo: true})
	b.sign(49, 39, "West, through this portal: the village.")
	b.scatter(20, tRock, tSand, 30, nil)
	b.scatter(21, tRock, tStone, 6, nil)
	b.spawners = append(b.spawners, []spawner{
		{rect{"north-west wolves", 6, 6, 10, 10}, "wolf", 3, 20, 16},
		{rect{"north-east wolves", 80, 6, 10, 10}, "wolf", 3, 20, 16},
		{rect{"south-west wolves", 6, 80, 10, 10}, "wolf", 3, 20, 16},
		{rect{"south-east wolves", 80, 80, 10, 10}, "wolf", 3, 20, 16},
		{rect{"north slimes", 43, 5, 10, 8}, "slime", 4, 15, 8},
		{rect{"south slimes", 43, 83, 10, 8}, "slime", 4, 15, 8},
		{rect{"west slimes", 5, 43, 8, 10}, "slime", 4, 15, 8},
		{rect{"east slimes", 83, 43, 8, 10}, "slime", 4, 15, 8},
	}...)
	return b
}
