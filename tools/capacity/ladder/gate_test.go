package ladder_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/leyworks/ley/tools/capacity/ladder"
)

// report is a ladder run of village rungs: each rung's Areas, hosts CPU
// (% of a core) and whether it held.
func report(rungs ...ladder.Rung) *ladder.Report {
	r := &ladder.Report{Pattern: "walk5", PerArea: 20, Pin: "0:1", LastHeld: -1, Breaking: -1}
	for i, g := range rungs {
		g.PerArea, g.Players = 20, g.Areas*20
		r.Rungs = append(r.Rungs, g)
		if g.Held {
			r.LastHeld = i
		} else if r.Breaking < 0 {
			r.Breaking = i
		}
	}
	return r
}

func TestRegressions(t *testing.T) {
	base := report(ladder.Rung{Areas: 100, HostsCPU: 38, DirectorCPU: 1, Held: true},
		ladder.Rung{Areas: 150, HostsCPU: 55, DirectorCPU: 1, Held: true},
		ladder.Rung{Areas: 200, HostsCPU: 72, DirectorCPU: 1, Broken: []string{"rtt"}})
	if got := base.Rungs[0].RealmCPUPerPlayer(); got != 195 {
		t.Errorf("realm CPU per player of 39%% for 2,000 players = %v µs; want 195", got)
	}
	tests := []struct {
		name string
		now  *ladder.Report
		want []string // a part of each regression, in order
	}{
		{"the same figures", report(ladder.Rung{Areas: 100, HostsCPU: 38, DirectorCPU: 1, Held: true}), nil},
		{"within the margin", report(ladder.Rung{Areas: 100, HostsCPU: 47, DirectorCPU: 1, Held: true}), nil},
		{"cheaper", report(ladder.Rung{Areas: 100, HostsCPU: 20, DirectorCPU: 1, Held: true}), nil},
		{"CPU past the margin", report(ladder.Rung{Areas: 100, HostsCPU: 50, DirectorCPU: 1, Held: true}), []string{"2000 players: realm CPU 255 µs"}},
		{"a held rung breaks", report(ladder.Rung{Areas: 100, HostsCPU: 38, DirectorCPU: 1, Broken: []string{"gap p99"}}), []string{"2000 players: held in the baseline, breaks now"}},
		{"a lower last rung held", report(ladder.Rung{Areas: 100, HostsCPU: 38, DirectorCPU: 1, Held: true},
			ladder.Rung{Areas: 150, HostsCPU: 55, DirectorCPU: 1, Broken: []string{"rtt"}}),
			[]string{"3000 players: held in the baseline, breaks now", "last rung held: 2000 players; the baseline held 3000"}},
		{"a rung the baseline broke on, broken again", report(ladder.Rung{Areas: 200, HostsCPU: 72, DirectorCPU: 1, Broken: []string{"rtt"}}), nil},
	}
	for _, tt := range tests {
		got, err := ladder.Regressions(base, tt.now, 0.25)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: %q; want %d regressions", tt.name, got, len(tt.want))
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tt.want[i]) {
				t.Errorf("%s: regression %d is %q; want it to say %q", tt.name, i, got[i], tt.want[i])
			}
		}
	}

	other := report(ladder.Rung{Areas: 100, HostsCPU: 38, Held: true})
	other.Pin = ""
	if _, err := ladder.Regressions(base, other, 0.25); !errors.Is(err, ladder.ErrConfig) {
		t.Errorf("a baseline pinned, a run not: %v; want ErrConfig", err)
	}
	if _, err := ladder.Regressions(base, report(ladder.Rung{Areas: 7, Held: true}), 0.25); !errors.Is(err, ladder.ErrConfig) {
		t.Errorf("no rung in common: %v; want ErrConfig", err)
	}
}
