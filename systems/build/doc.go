// Package build makes an Area from the realm's content: its rules, its
// grid and static map from the template's Tiled map, its creature kinds
// and spawners, its portals, and its systems in their fixed order. The
// area host builds every Area it runs with it, and so does the browser's
// engine for prediction and offline play: one rulebook in both places.
//
// It also carries an Area's durable state to a blob and back
// ([Built.Save], [Built.Load]).
package build
