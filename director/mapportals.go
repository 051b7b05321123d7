package director

import (
	"context"
	"errors"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// maxMapPortals bounds the portals an Area takes from its map (the
// content bounds a map's objects far higher than a spawn message should
// carry).
const maxMapPortals = 256

// spawnPortals returns the portals an Area is spawned with: the ones an
// owner set through the API (its stored rules), then its template's map
// portals, each resolved to an Area (mapPortals). An owner's portal wins
// on a square both hold. A failure to read either part is logged and
// leaves that part out: the Area starts anyway.
func (d *Director) spawnPortals(ctx context.Context, area store.Area) []control.Portal {
	rules, err := parseRules(area.Rules)
	if err != nil {
		d.log.Warn("area rules unreadable; starting it without its owner's portals", "area", area.ID, "err", err)
	}
	out := rules.controlPortals()
	taken := make(map[[2]int32]bool, len(out))
	for _, p := range out {
		taken[[2]int32{p.X, p.Y}] = true
	}
	for _, p := range d.mapPortals(ctx, area) {
		if !taken[[2]int32{p.X, p.Y}] {
			out = append(out, p)
		}
	}
	return out
}

// mapPortals resolves the portals of area's template map: each leads to
// the oldest Area (the lowest id) of its target template, on its arrival
// square, or, without one, on the target map's first spawn point. A
// portal whose target template has no Area yet, or only area itself, is
// left out (no Area is ever created for it), with a warning logged once
// per template and target.
func (d *Director) mapPortals(ctx context.Context, area store.Area) []control.Portal {
	if area.Template == EmptyTemplate {
		return nil
	}
	t, err := d.cfg.Content.Template(area.Template)
	if err != nil {
		d.warned.once(d.log, "template:"+area.Template, "an area's template is not in the content: it starts without map portals",
			"area", area.ID, "template", area.Template, "err", err)
		return nil
	}
	targets := map[string]portalTarget{}
	var out []control.Portal
	for _, p := range t.Map.Portals {
		if len(out) == maxMapPortals {
			d.warned.once(d.log, "many:"+area.Template, "a template's map has more portals than an area takes; the rest are left out",
				"template", area.Template, "portals", len(t.Map.Portals), "max", maxMapPortals)
			break
		}
		to, seen := targets[p.Target]
		if !seen {
			to = d.resolveTarget(ctx, area, p.Target)
			targets[p.Target] = to
		}
		if !to.ok {
			continue
		}
		x, y := to.spot.X, to.spot.Y
		if p.HasTo {
			x, y = p.ToX, p.ToY
		}
		out = append(out, control.Portal{X: p.X, Y: p.Y, ToArea: uint32(to.id), ToX: x, ToY: y})
	}
	return out
}

// portalTarget is where map portals to one template lead: the Area and
// the template map's first spawn point, when ok.
type portalTarget struct {
	id   store.AreaID
	spot content.Point
	ok   bool
}

// resolveTarget finds the Area a map portal of area to template target
// leads to, and the target map's first spawn point.
func (d *Director) resolveTarget(ctx context.Context, area store.Area, target string) (t portalTarget) {
	tt, err := d.cfg.Content.Template(target)
	if err != nil || len(tt.Map.Spawns) == 0 { // the content's check makes both impossible
		d.warned.once(d.log, "target:"+area.Template+">"+target, "a map portal leads to a template the content lacks; it is left out",
			"area", area.ID, "template", area.Template, "target", target, "err", err)
		return t
	}
	to, err := d.store.FirstAreaOf(ctx, target)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.warned.once(d.log, "none:"+area.Template+">"+target, "a map portal leads to a template no area is made from yet; it is left out until one is",
			"area", area.ID, "template", area.Template, "target", target)
		return t
	case err != nil:
		d.log.Warn("a map portal's target area unreadable; it is left out", "area", area.ID, "target", target, "err", err)
		return t
	case to.ID == area.ID:
		d.warned.once(d.log, "self:"+area.Template+">"+target, "a map portal would lead an area to itself; it is left out",
			"area", area.ID, "template", area.Template, "target", target)
		return t
	}
	t.id, t.spot, t.ok = to.ID, tt.Map.Spawns[0], true
	return t
}

// areaSize is the size an Area runs at: its template's map's for a map
// template (an Area stored before templates keeps the size it was made
// with in the store, but its host builds the map), else the stored one.
func (d *Director) areaSize(area store.Area) (int, int) {
	if area.Template != EmptyTemplate {
		if t, err := d.cfg.Content.Template(area.Template); err == nil {
			return t.Map.W, t.Map.H
		}
	}
	return area.W, area.H
}
