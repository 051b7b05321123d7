package main

import (
	"fmt"
	"math"
)

// builder draws one map square by square. Its methods panic on a
// conflict (an object on a wall, two on one square): a bug in this
// program, caught the moment it runs.
type builder struct {
	file     string
	w, h     int
	floor    []int // tile ID, -1 for void
	wall     []bool
	taken    []bool // an object, a portal or a reserved square: no scattering here
	objects  []object
	portals  []portal
	spawns   []rect
	spawners []spawner
	plots    []rect
}

type object struct {
	x, y  int
	tile  int
	name  string
	props []prop
}

type portal struct {
	x, y     int
	name     string
	target   string
	toX, toY int
	hasTo    bool
}

type rect struct {
	name       string
	x, y, w, h int
}

type spawner struct {
	rect
	creature string
	count    int
	respawn  float64
	leash    int
}

func newBuilder(file string, w, h, ground int) *builder {
	b := &builder{file: file, w: w, h: h, floor: make([]int, w*h), wall: make([]bool, w*h), taken: make([]bool, w*h)}
	for i := range b.floor {
		b.floor[i] = ground
	}
	return b
}

func (b *builder) in(x, y int) bool { return x >= 0 && y >= 0 && x < b.w && y < b.h }

func (b *builder) at(x, y int) int {
	if !b.in(x, y) {
		panic(fmt.Sprintf("%s: (%d, %d) is off the %dx%d map", b.file, x, y, b.w, b.h))
	}
	return y*b.w + x
}

// fill sets the floor of a rectangle.
func (b *builder) fill(x0, y0, w, h, tile int) {
	for y := y0; y < y0+h; y++ {
		for x := x0; x < x0+w; x++ {
			b.floor[b.at(x, y)] = tile
		}
	}
}

// disc sets the floor of every square whose centre lies within the
// ellipse of radii rx, ry around (cx, cy).
func (b *builder) disc(cx, cy, rx, ry float64, tile int) {
	for y := range b.h {
		for x := range b.w {
			dx, dy := (float64(x)+0.5-cx)/rx, (float64(y)+0.5-cy)/ry
			if math.Hypot(dx, dy) <= 1 {
				b.floor[b.at(x, y)] = tile
			}
		}
	}
}

// walls puts a wall on every square of a rectangle.
func (b *builder) walls(x0, y0, w, h int) {
	for y := y0; y < y0+h; y++ {
		for x := x0; x < x0+w; x++ {
			b.wall[b.at(x, y)] = true
		}
	}
}

// house draws a building: walls around, floorboards inside, a door on
// (dx, dy) of its outline.
func (b *builder) house(name string, x0, y0, w, h, dx, dy int, open bool) {
	b.fill(x0, y0, w, h, tWood)
	b.walls(x0, y0, w, 1)
	b.walls(x0, y0+h-1, w, 1)
	b.walls(x0, y0, 1, h)
	b.walls(x0+w-1, y0, 1, h)
	for y := y0 - 1; y <= y0+h; y++ { // keep trees and rocks off its walls
		for x := x0 - 1; x <= x0+w; x++ {
			if b.in(x, y) {
				b.taken[b.at(x, y)] = true
			}
		}
	}
	b.door(name, dx, dy, open)
}

// door opens a doorway in a wall and hangs a door in it.
func (b *builder) door(name string, x, y int, open bool) {
	b.wall[b.at(x, y)] = false
	tile := tDoor
	if open {
		tile = tDoorOpen
	}
	b.put(object{x: x, y: y, tile: tile, name: name, props: []prop{{"open", "bool", open}}})
}

// put places a static object.
func (b *builder) put(o object) {
	i := b.at(o.x, o.y)
	for _, p := range b.objects {
		if p.x == o.x && p.y == o.y {
			panic(fmt.Sprintf("%s: two objects on (%d, %d)", b.file, o.x, o.y))
		}
	}
	if b.wall[i] || b.floor[i] < 0 {
		panic(fmt.Sprintf("%s: %s on a wall or void at (%d, %d)", b.file, tileClass[o.tile], o.x, o.y))
	}
	b.taken[i] = true
	b.objects = append(b.objects, o)
}

func (b *builder) sign(x, y int, text string) {
	b.put(object{x: x, y: y, tile: tSign, props: []prop{{"text", "string", text}}})
}

func (b *builder) chest(name string, x, y int) { b.put(object{x: x, y: y, tile: tChest, name: name}) }

// reserve keeps scattered trees and rocks off a rectangle.
func (b *builder) reserve(x0, y0, w, h int) {
	for y := y0; y < y0+h; y++ {
		for x := x0; x < x0+w; x++ {
			b.taken[b.at(x, y)] = true
		}
	}
}

func (b *builder) portal(p portal) {
	b.taken[b.at(p.x, p.y)] = true
	b.portals = append(b.portals, p)
}

func (b *builder) spawn(r rect) {
	b.reserve(r.x, r.y, r.w, r.h)
	b.spawns = append(b.spawns, r)
}

// scatter puts an object of tile on each free square of ground where
// hash(seed, x, y) falls below permille/1000 and ok agrees.
func (b *builder) scatter(seed, tile, ground, permille int, ok func(x, y int) bool) {
	for y := range b.h {
		for x := range b.w {
			i := b.at(x, y)
			if b.floor[i] != ground || b.wall[i] || b.taken[i] || int(hash(seed, x, y)%1000) >= permille {
				continue
			}
			if ok != nil && !ok(x, y) {
				continue
			}
			b.put(object{x: x, y: y, tile: tile})
		}
	}
}
