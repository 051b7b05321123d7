package content

import "math"

// area is a rectangle of squares.
type area struct{ x, y, w, h int32 }

// grid is what geometry needs to know of a map: its size in squares and
// the size of a square in pixels.
type grid struct{ w, h, tw, th int }

// footprint returns the squares an object covers. Tiled gives positions
// in pixels; ley reads them so:
//
//   - a point (or a rectangle of no size) covers the square holding it;
//   - a rectangle covers every square whose centre lies inside it, and must
//     cover at least one;
//   - a tile object (one with a gid) is anchored at its bottom-left corner,
//     so it covers the square holding the point half a square above the
//     middle of its bottom edge: the square its image stands on.
//
// The object must lie inside the map; shapes ley does not read
// (ellipses, polygons, polylines, text, rotation, templates) are refused.
func footprint(o *tmjObject, g grid) (area, error) {
	switch {
	case o.Template != "":
		return area{}, unsupportedf("object templates (%q): detach the object from its template in Tiled", o.Template)
	case o.Ellipse:
		return area{}, unsupportedf("ellipse (use a point or a rectangle)")
	case len(o.Polygon) > 0:
		return area{}, unsupportedf("polygon (use a point or a rectangle)")
	case len(o.Polyline) > 0:
		return area{}, unsupportedf("polyline (use a point or a rectangle)")
	case len(o.Text) > 0:
		return area{}, unsupportedf("text object (use a sign: class \"sign\" with property \"text\")")
	case o.Rotation != 0:
		return area{}, unsupportedf("rotation %g (objects must not be rotated)", o.Rotation)
	case o.Width < 0 || o.Height < 0:
		return area{}, invalidf("negative size %gx%g", o.Width, o.Height)
	}
	pw, ph := float64(g.w*g.tw), float64(g.h*g.th)
	tw, th := float64(g.tw), float64(g.th)
	outside := invalidf("outside the map (at %g,%g px, size %gx%g px; the map is %dx%d squares, %gx%g px)",
		o.X, o.Y, o.Width, o.Height, g.w, g.h, pw, ph)
	if o.GID != 0 {
		w := o.Width
		if w == 0 {
			w = tw
		}
		ax, ay := o.X+w/2, o.Y-th/2
		if ax < 0 || ay < 0 || ax >= pw || ay >= ph {
			return area{}, outside
		}
		return area{int32(ax / tw), int32(ay / th), 1, 1}, nil
	}
	if o.Point || (o.Width == 0 && o.Height == 0) {
		if o.X < 0 || o.Y < 0 || o.X >= pw || o.Y >= ph {
			return area{}, outside
		}
		return area{int32(o.X / tw), int32(o.Y / th), 1, 1}, nil
	}
	if o.X < 0 || o.Y < 0 || o.X+o.Width > pw || o.Y+o.Height > ph {
		return area{}, outside
	}
	// Square i's centre (i+0.5)*tw lies in [x, x+w) when
	// x/tw - 0.5 <= i < (x+w)/tw - 0.5.
	x0 := int32(math.Ceil(o.X/tw - 0.5))
	x1 := int32(math.Ceil((o.X+o.Width)/tw - 0.5))
	y0 := int32(math.Ceil(o.Y/th - 0.5))
	y1 := int32(math.Ceil((o.Y+o.Height)/th - 0.5))
	if x1 <= x0 || y1 <= y0 {
		return area{}, invalidf("rectangle %gx%g px at %g,%g covers no square's centre (make it a point, or at least one square)",
			o.Width, o.Height, o.X, o.Y)
	}
	return area{x0, y0, x1 - x0, y1 - y0}, nil
}
