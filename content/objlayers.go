package content

import (
	"fmt"
	"time"
)

// Bounds on spawner properties.
const (
	maxSpawnCount = 1000
	maxRespawn    = 24 * time.Hour
)

// Defaults of spawner properties.
const (
	// DefaultRespawn is a spawner's "respawn" when the map gives none.
	DefaultRespawn = 10 * time.Second
	// DefaultLeash is a spawner's "leash", in squares, when the map gives none.
	DefaultLeash = 12
)

// classOf returns an object's class: its own, or for a tile object with
// none, its tile's (as Tiled shows it).
func (l *mapLoader) classOf(o *tmjObject) (string, error) {
	c, err := oneClass(o.Type, o.Class)
	if err != nil {
		return "", err
	}
	if o.GID != 0 {
		ts, local, ok := lookup(l.sets, o.GID&gidMask)
		if !ok {
			return "", invalidf("gid %d is in no tileset", o.GID&gidMask)
		}
		if c == "" {
			c = ts.classes[local]
		}
	}
	return c, nil
}

// wantClass checks that an object of a one-class layer has that class.
func (l *mapLoader) wantClass(o *tmjObject, want string) error {
	c, err := l.classOf(o)
	if err != nil {
		return err
	}
	switch c {
	case want:
		return nil
	case "":
		return invalidf("no class (want %q)", want)
	}
	return invalidf("unknown class %q (want %q)", c, want)
}

// square returns the one square an object covers.
func (l *mapLoader) square(o *tmjObject, what string) (x, y int32, err error) {
	a, err := footprint(o, l.g)
	if err != nil {
		return 0, 0, err
	}
	if a.w != 1 || a.h != 1 {
		return 0, 0, invalidf("covers %dx%d squares from (%d, %d); a %s stands on one square (use a point or a one-square rectangle)", a.w, a.h, a.x, a.y, what)
	}
	return a.x, a.y, nil
}

func (l *mapLoader) idx(x, y int32) int { return int(y)*l.g.w + int(x) }

// ground explains why a square is not walkable terrain, or returns nil.
func (l *mapLoader) ground(x, y int32) error {
	i := l.idx(x, y)
	switch {
	case l.m.Wall[i]:
		return invalidf("square (%d, %d) is a wall", x, y)
	case !l.m.Floor[i].Walkable():
		return invalidf("square (%d, %d) is %s (not walkable)", x, y, l.m.Floor[i])
	}
	return nil
}

// occupied explains what already stands on a square, or returns nil.
func (l *mapLoader) occupied(x, y int32, blockingOnly bool) error {
	i := l.idx(x, y)
	if j := l.m.objAt[i]; j != 0 {
		if o := l.m.Objects[j-1]; !blockingOnly || o.Blocks() {
			return invalidf("square (%d, %d) holds %s (a %s)", x, y, objRef("object", o.ID, o.Name), o.Class)
		}
	}
	if j := l.portalAt[i]; j != 0 {
		p := l.m.Portals[j-1]
		return invalidf("square (%d, %d) holds %s", x, y, objRef("portal", p.ID, p.Name))
	}
	return nil
}

var objectProps = map[ObjectClass][]propSpec{
	ClassDoor: {{name: "open", typ: propBool}},
	ClassSign: {{name: "text", typ: propString, required: true}},
}

// object reads one object of the "objects" layer.
func (l *mapLoader) object(o *tmjObject) error {
	name, err := l.classOf(o)
	if err != nil {
		return err
	}
	if name == "" {
		return invalidf("no class (want one of %s)", objectClassList())
	}
	class, err := ParseObjectClass(name)
	if err != nil {
		return err
	}
	props, err := readProps(o.Properties, objectProps[class])
	if err != nil {
		return err
	}
	x, y, err := l.square(o, class.String())
	if err != nil {
		return err
	}
	obj := Object{ID: o.ID, Name: o.Name, X: x, Y: y, Class: class, Open: props["open"].b, Text: props["text"].s}
	if class == ClassSign {
		if obj.Text == "" {
			return invalidf("property \"text\" is empty")
		}
		if len(obj.Text) > MaxSignText {
			return tooLargef("property \"text\" is %d bytes (at most %d)", len(obj.Text), MaxSignText)
		}
	}
	i := l.idx(x, y)
	switch {
	case l.m.Wall[i]:
		return invalidf("square (%d, %d) is a wall", x, y)
	case l.m.Floor[i] == FloorVoid:
		return invalidf("square (%d, %d) has no floor", x, y)
	}
	if err := l.occupied(x, y, false); err != nil {
		return err
	}
	l.m.Objects = append(l.m.Objects, obj)
	l.m.objAt[i] = int32(len(l.m.Objects))
	return nil
}

var portalProps = []propSpec{
	{name: "target", typ: propString, required: true},
	{name: "to_x", typ: propInt},
	{name: "to_y", typ: propInt},
}

// portal reads one object of the "portals" layer.
func (l *mapLoader) portal(o *tmjObject) error {
	if err := l.wantClass(o, "portal"); err != nil {
		return err
	}
	props, err := readProps(o.Properties, portalProps)
	if err != nil {
		return err
	}
	x, y, err := l.square(o, "portal")
	if err != nil {
		return err
	}
	p := Portal{ID: o.ID, Name: o.Name, X: x, Y: y, Target: props["target"].s}
	if err := checkName("target", p.Target); err != nil {
		return err
	}
	tx, hasX := props["to_x"]
	ty, hasY := props["to_y"]
	if hasX != hasY {
		return invalidf("give both \"to_x\" and \"to_y\", or neither")
	}
	if hasX {
		if tx.i < 0 || ty.i < 0 || tx.i >= MaxSide || ty.i >= MaxSide {
			return invalidf("arrival square (%d, %d) is off any map", tx.i, ty.i)
		}
		p.ToX, p.ToY, p.HasTo = int32(tx.i), int32(ty.i), true
	}
	if err := l.ground(x, y); err != nil {
		return err
	}
	if err := l.occupied(x, y, false); err != nil {
		return err
	}
	l.m.Portals = append(l.m.Portals, p)
	l.portalAt[l.idx(x, y)] = int32(len(l.m.Portals))
	return nil
}

// spawn reads one object of the "spawns" layer.
func (l *mapLoader) spawn(o *tmjObject) error {
	if err := l.wantClass(o, "spawn"); err != nil {
		return err
	}
	if _, err := readProps(o.Properties, nil); err != nil {
		return err
	}
	a, err := footprint(o, l.g)
	if err != nil {
		return err
	}
	for y := a.y; y < a.y+a.h; y++ {
		for x := a.x; x < a.x+a.w; x++ {
			if err := l.ground(x, y); err != nil {
				return err
			}
			if err := l.occupied(x, y, true); err != nil {
				return err
			}
			i := l.idx(x, y)
			if l.spawnAt[i] {
				return invalidf("square (%d, %d) is a spawn point twice", x, y)
			}
			l.spawnAt[i] = true
			l.m.Spawns = append(l.m.Spawns, Point{x, y})
		}
	}
	return nil
}

var spawnerProps = []propSpec{
	{name: "creature", typ: propString, required: true},
	{name: "count", typ: propInt, required: true},
	{name: "respawn", typ: propFloat},
	{name: "leash", typ: propInt},
}

// spawner reads one object of the "spawners" layer.
func (l *mapLoader) spawner(o *tmjObject) error {
	if err := l.wantClass(o, "spawner"); err != nil {
		return err
	}
	props, err := readProps(o.Properties, spawnerProps)
	if err != nil {
		return err
	}
	a, err := footprint(o, l.g)
	if err != nil {
		return err
	}
	s := Spawner{ID: o.ID, Name: o.Name, X: a.x, Y: a.y, W: a.w, H: a.h, Creature: props["creature"].s, Respawn: DefaultRespawn, Leash: DefaultLeash}
	if err := checkName("creature", s.Creature); err != nil {
		return err
	}
	count := props["count"].i
	if count < 1 || count > maxSpawnCount {
		return invalidf("property \"count\" is %d (1..%d)", count, maxSpawnCount)
	}
	s.Count = int(count)
	if v, ok := props["respawn"]; ok {
		if v.f < 0 || v.f > maxRespawn.Seconds() {
			return invalidf("property \"respawn\" is %g seconds (0..%g)", v.f, maxRespawn.Seconds())
		}
		s.Respawn = time.Duration(v.f * float64(time.Second))
	}
	if v, ok := props["leash"]; ok {
		if v.i < 1 || v.i > MaxSide {
			return invalidf("property \"leash\" is %d squares (1..%d)", v.i, MaxSide)
		}
		s.Leash = int32(v.i)
	}
	free := false
	for y := a.y; y < a.y+a.h && !free; y++ {
		for x := a.x; x < a.x+a.w && !free; x++ {
			free = l.ground(x, y) == nil && l.occupied(x, y, false) == nil
		}
	}
	if !free {
		return invalidf("no free square in its area %dx%d at (%d, %d): each is a wall, water, void, an object or a portal", a.w, a.h, a.x, a.y)
	}
	l.m.Spawners = append(l.m.Spawners, s)
	return nil
}

// plot reads one object of the "plots" layer.
func (l *mapLoader) plot(o *tmjObject) error {
	if err := l.wantClass(o, "plot"); err != nil {
		return err
	}
	a, err := footprint(o, l.g)
	if err != nil {
		return err
	}
	ground := false
	for y := a.y; y < a.y+a.h && !ground; y++ {
		for x := a.x; x < a.x+a.w && !ground; x++ {
			ground = l.ground(x, y) == nil
		}
	}
	if !ground {
		return invalidf("no ground in its area %dx%d at (%d, %d): each square is a wall, water or void", a.w, a.h, a.x, a.y)
	}
	l.m.Plots = append(l.m.Plots, Plot{ID: o.ID, Name: o.Name, X: a.x, Y: a.y, W: a.w, H: a.h})
	return nil
}

// objRef names an object in a message: `object 12 "north door"`, or
// `object 12` when it has no name.
func objRef(what string, id int, name string) string {
	if name == "" {
		return fmt.Sprintf("%s %d", what, id)
	}
	return fmt.Sprintf("%s %d %q", what, id, name)
}
