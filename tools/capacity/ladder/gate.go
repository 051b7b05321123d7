package ladder

import (
	"encoding/json"
	"fmt"
	"os"
)

// ReadReport reads a report written by [Report.Write] (its .json).
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("ladder report %s: %w", path, err)
	}
	return &r, nil
}

// RealmCPUPerPlayer is the realm's CPU (director and hosts) per player
// and second of the steady phase, in µs: what a player costs the server.
func (g Rung) RealmCPUPerPlayer() float64 {
	if g.Players == 0 {
		return 0
	}
	return (g.DirectorCPU + g.HostsCPU) / 100 * 1e6 / float64(g.Players)
}

// Regressions compares a ladder run with a baseline measured the same
// way (pattern, players per Area, template, pin) and lists how it fell
// behind: a rung the baseline held that breaks now, a rung whose realm
// CPU per player is more than margin (0.25: 25%) above the baseline's,
// and a last rung held lower than the baseline's. Rungs are matched by
// their Areas; rungs of only one of the two are not compared. A baseline
// measured another way is an error: its figures say nothing of this run.
func Regressions(base, now *Report, margin float64) ([]string, error) {
	if base.Pattern != now.Pattern || base.PerArea != now.PerArea || base.Template != now.Template || base.Pin != now.Pin {
		return nil, fmt.Errorf("%w: the baseline was measured another way (pattern %s, %d per Area, template %q, pin %q; this run: %s, %d, %q, %q)",
			ErrConfig, base.Pattern, base.PerArea, base.Template, base.Pin, now.Pattern, now.PerArea, now.Template, now.Pin)
	}
	if margin < 0 {
		return nil, fmt.Errorf("%w: margin %v", ErrConfig, margin)
	}
	byAreas := map[int]Rung{}
	for _, g := range base.Rungs {
		byAreas[g.Areas] = g
	}
	var out []string
	compared := 0
	for _, g := range now.Rungs {
		b, ok := byAreas[g.Areas]
		if !ok {
			continue
		}
		compared++
		if b.Held && !g.Held {
			out = append(out, fmt.Sprintf("%d players: held in the baseline, breaks now (%v)", g.Players, g.Broken))
		}
		if was, is := b.RealmCPUPerPlayer(), g.RealmCPUPerPlayer(); was > 0 && is > was*(1+margin) {
			out = append(out, fmt.Sprintf("%d players: realm CPU %.0f µs per player-second, %.0f%% above the baseline's %.0f µs (margin %.0f%%)",
				g.Players, is, (is/was-1)*100, was, margin*100))
		}
	}
	if compared == 0 {
		return nil, fmt.Errorf("%w: no rung of this run is one of the baseline's (%d Areas ...)", ErrConfig, firstAreas(base))
	}
	if base.LastHeld >= 0 && now.LastHeld >= 0 && base.Breaking >= 0 && now.Breaking >= 0 {
		// Both climbed until a rung broke: the last held ones compare.
		if was, is := base.Rungs[base.LastHeld].Players, now.Rungs[now.LastHeld].Players; is < was {
			out = append(out, fmt.Sprintf("last rung held: %d players; the baseline held %d", is, was))
		}
	}
	return out, nil
}

func firstAreas(r *Report) int {
	if len(r.Rungs) == 0 {
		return 0
	}
	return r.Rungs[0].Areas
}
