package director

import (
	"fmt"
	"slices"
	"strings"
)

// Bounds on an Area's size, for the empty template (a template's map has
// its own size, which the content bounds).
const (
	minAreaSide = 8
	maxAreaSide = 1024
)

// The codes of the refusals of a new Area's template (400s).
const (
	codeUnknownTemplate = "UNKNOWN_TEMPLATE"
	codeTemplateKind    = "TEMPLATE_KIND_MISMATCH"
)

// areaShape is what a new Area is made of: its kind, its template and its
// size.
type areaShape struct {
	kind, template string
	w, h           int
}

// newAreaShape applies the rules of a new Area's kind, template and size
// (POST /v1/areas and the admin provisioning): kind and template as the
// request names them ("" for absent), w and h likewise (0 for absent),
// defKind the kind when neither kind nor template names one.
//
//   - No template: the kind's default template (the template named like
//     the kind).
//   - A template of the content: it must exist (UNKNOWN_TEMPLATE), its
//     rule set names the kind (a kind given that disagrees is
//     TEMPLATE_KIND_MISMATCH), and its map gives the size (a w or h given
//     must equal the map's).
//   - EmptyTemplate: the kind (or defKind), and w and h, both required,
//     8..1024.
func (d *Director) newAreaShape(kind, template string, w, h int, defKind string) (areaShape, *apiError) {
	lib := d.cfg.Content
	if template == EmptyTemplate {
		if kind == "" {
			kind = defKind
		}
		if e := d.checkKind(kind); e != nil {
			return areaShape{}, e
		}
		if w < minAreaSide || h < minAreaSide || w > maxAreaSide || h > maxAreaSide {
			return areaShape{}, errBadRequest(fmt.Sprintf("the %q template needs w and h, each %d..%d squares", EmptyTemplate, minAreaSide, maxAreaSide))
		}
		return areaShape{kind: kind, template: EmptyTemplate, w: w, h: h}, nil
	}
	if template == "" {
		if kind == "" {
			kind = defKind
		}
		if e := d.checkKind(kind); e != nil {
			return areaShape{}, e
		}
		template = kind
	}
	t, err := lib.Template(template)
	if err != nil {
		return areaShape{}, apiErr(400, codeUnknownTemplate, fmt.Sprintf("unknown template %q (known: %s)", clip(template), d.templateNames()))
	}
	if kind != "" && kind != t.Rules.Name {
		return areaShape{}, apiErr(400, codeTemplateKind, fmt.Sprintf("template %q is of kind %q, not %q: leave kind out or give %q", template, t.Rules.Name, clip(kind), t.Rules.Name))
	}
	if (w != 0 && w != t.Map.W) || (h != 0 && h != t.Map.H) {
		return areaShape{}, errBadRequest(fmt.Sprintf("template %q's map is %dx%d squares: leave w and h out or give exactly that (any size is the %q template's)", template, t.Map.W, t.Map.H, EmptyTemplate))
	}
	return areaShape{kind: t.Rules.Name, template: template, w: t.Map.W, h: t.Map.H}, nil
}

// checkKind refuses an area kind the content does not define, listing
// the ones it does.
func (d *Director) checkKind(kind string) *apiError {
	if _, err := d.cfg.Content.Kind(kind); err != nil {
		return errBadRequest(fmt.Sprintf("unknown area kind %q (known: %s)", clip(kind), strings.Join(d.cfg.Content.Kinds(), ", ")))
	}
	return nil
}

// templateNames lists the templates a new Area may name: the content's
// and EmptyTemplate, sorted, comma-separated.
func (d *Director) templateNames() string {
	names := []string{EmptyTemplate}
	for _, t := range d.cfg.Content.Templates() {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// clip bounds a client's string echoed in a message.
func clip(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
