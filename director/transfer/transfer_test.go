package transfer

import (
	"testing"

	"github.com/leyworks/ley/net/control"
)

// TestLeadsTo: a crossing passes only to the square one of the
// incarnation's portals leads to.
func TestLeadsTo(t *testing.T) {
	ps := []control.Portal{{X: 1, Y: 2, ToArea: 7, ToX: 3, ToY: 4}, {X: 5, Y: 5, ToArea: 8, ToX: 0, ToY: 0}}
	tests := []struct {
		name string
		m    control.PortalOut
		want bool
	}{
		{"the first portal's square", control.PortalOut{ToArea: 7, ToX: 3, ToY: 4}, true},
		{"the second portal's square", control.PortalOut{ToArea: 8}, true},
		{"another square of its Area", control.PortalOut{ToArea: 7, ToX: 4, ToY: 4}, false},
		{"that square of another Area", control.PortalOut{ToArea: 9, ToX: 3, ToY: 4}, false},
	}
	for _, tt := range tests {
		if got := leadsTo(ps, &tt.m); got != tt.want {
			t.Errorf("%s: leadsTo = %v; want %v", tt.name, got, tt.want)
		}
	}
	if leadsTo(nil, &control.PortalOut{ToArea: 7, ToX: 3, ToY: 4}) {
		t.Error("an Area without portals lets a crossing out")
	}
}
