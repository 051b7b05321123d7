package content

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// propType is the type a ley property must have in Tiled.
type propType uint8

const (
	propString propType = iota
	propInt
	propFloat // an "int" property is accepted too
	propBool
)

var propTypeNames = [...]string{propString: "string", propInt: "int", propFloat: "float", propBool: "bool"}

// propSpec declares one property a class accepts.
type propSpec struct {
	name     string
	typ      propType
	required bool
}

// propValue is a property's value; the field its type names is set.
type propValue struct {
	s string
	i int64
	f float64
	b bool
}

// readProps checks a Tiled property list against specs: every property
// known, of the right type, none twice, every required one present. It
// returns the values by name.
func readProps(list []tmjProperty, specs []propSpec) (map[string]propValue, error) {
	vals := make(map[string]propValue, len(list))
	for _, p := range list {
		spec, ok := findSpec(specs, p.Name)
		if !ok {
			return nil, invalidf("unknown property %q%s", p.Name, knownProps(specs))
		}
		if _, dup := vals[p.Name]; dup {
			return nil, invalidf("property %q given twice", p.Name)
		}
		v, err := propVal(p, spec)
		if err != nil {
			return nil, err
		}
		vals[p.Name] = v
	}
	for _, s := range specs {
		if _, ok := vals[s.name]; s.required && !ok {
			return nil, invalidf("missing property %q (%s, required)", s.name, propTypeNames[s.typ])
		}
	}
	return vals, nil
}

func findSpec(specs []propSpec, name string) (propSpec, bool) {
	for _, s := range specs {
		if s.name == name {
			return s, true
		}
	}
	return propSpec{}, false
}

func knownProps(specs []propSpec) string {
	if len(specs) == 0 {
		return " (no properties are allowed here)"
	}
	s := " (known:"
	for i, sp := range specs {
		if i > 0 {
			s += ","
		}
		s += " " + sp.name
	}
	return s + ")"
}

// propVal checks one property's declared type and decodes its value.
func propVal(p tmjProperty, spec propSpec) (propValue, error) {
	typ := p.Type
	if typ == "" {
		typ = "string" // Tiled's default
	}
	want := propTypeNames[spec.typ]
	if typ != want && (spec.typ != propFloat || typ != "int") {
		return propValue{}, invalidf("property %q is %s, want %s", p.Name, article(typ), want)
	}
	raw := bytes.TrimSpace(p.Value)
	var v propValue
	var err error
	switch spec.typ {
	case propString:
		err = json.Unmarshal(raw, &v.s)
	case propBool:
		err = json.Unmarshal(raw, &v.b)
	case propInt:
		v.i, err = strconv.ParseInt(string(raw), 10, 64)
	case propFloat:
		if len(raw) > 0 && raw[0] == '"' {
			err = strconv.ErrSyntax // a JSON number, not a string holding one
		} else {
			err = json.Unmarshal(raw, &v.f)
		}
	}
	if err != nil || len(raw) == 0 {
		return propValue{}, invalidf("property %q: value %s is not %s", p.Name, short(raw), article(want))
	}
	return v, nil
}

// article puts "a" or "an" before a type's name.
func article(typ string) string {
	if typ == "int" {
		return "an int"
	}
	return "a " + typ
}

// short quotes at most 40 bytes of a value for an error message.
func short(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	if len(b) == 0 {
		return "(none)"
	}
	return string(b)
}
