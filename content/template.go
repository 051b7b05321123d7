package content

import "io/fs"

// Template is what an Area is made from: a rule set and a map. The
// templates are listed in templates.json:
//
//	{"templates": [
//	  {"name": "village", "rules": "village", "map": "maps/village.tmj"}
//	]}
//
// Every field is required. map is a slash-separated path in the content
// folder. A template named like a rule set is that area kind's default and
// must use that rule set.
type Template struct {
	// Name names the template; portals and the director refer to it.
	Name string
	// Rules is its rule set.
	Rules RuleSet
	// Map is its map, shared with every other template on the same file:
	// read it, never write it.
	Map *Map
}

type rawTemplate struct {
	Name  string `json:"name"`
	Rules string `json:"rules"`
	Map   string `json:"map"`
}

// check checks a templates.json entry on its own.
func (r rawTemplate) check() error {
	if err := checkName("template", r.Name); err != nil {
		return err
	}
	if err := checkName("rules", r.Rules); err != nil {
		return err
	}
	if r.Map == "" {
		return invalidf("missing \"map\"")
	}
	if !fs.ValidPath(r.Map) {
		return invalidf("map %q: not a path in the content folder (slash-separated, relative, no ..)", r.Map)
	}
	return nil
}
