package ladder

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Write writes the report into dir as <name>.md, <name>.json and the
// charts <name>-gap.svg, <name>-cpu.svg and <name>-rss.svg. It returns
// the paths written.
func (r *Report) Write(dir, name string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, name)
	var paths []string
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(base+".json", append(js, '\n'), 0o644); err != nil {
		return nil, err
	}
	paths = append(paths, base+".json")
	charts, err := r.charts(base)
	paths = append(paths, charts...)
	if err != nil {
		return paths, err
	}
	if err := os.WriteFile(base+".md", []byte(r.markdown(name)), 0o644); err != nil {
		return paths, err
	}
	return append(paths, base+".md"), nil
}

func (r *Report) markdown(name string) string {
	var b strings.Builder
	noun := "players"
	if r.PerArea == 1 {
		noun = "player"
	}
	fmt.Fprintf(&b, "# Capacity ladder: %d %s per Area, pattern %s\n\n", r.PerArea, noun, r.Pattern)
	if r.Template != "" {
		fmt.Fprintf(&b, "Areas from the content template %q.\n\n", r.Template)
	}
	fmt.Fprintf(&b, "Command: `%s`\n\n", r.Command)
	fmt.Fprintf(&b, "Run %s on %s, %.0f s in all; each rung: %.0f s ramp, %.0f s measured hold. Director %s.\n\n",
		r.Started.UTC().Format("2006-01-02 15:04 UTC"), r.Machine, r.WallS, r.RampS, r.HoldS, r.Director)
	rtt := ""
	if r.SLO.RTTP99 > 0 {
		rtt = fmt.Sprintf(", intent round trip p99 <= %v", r.SLO.RTTP99)
	}
	fmt.Fprintf(&b, "SLO: median snapshot gap <= %v, p99 <= %v, stutters (gaps > 250 ms) <= %.1f%%%s, every intent answered, every player connected, no errors.\n\n",
		r.SLO.GapP50, r.SLO.GapP99, r.SLO.StutterPct, rtt)
	if r.Pin != "" {
		realm, driver, _ := strings.Cut(r.Pin, ":")
		fmt.Fprintf(&b, "Pinned: the realm (director and hosts) on CPU %s, the load driver on CPU %s: the CPU figures are of those cores.\n\n", realm, driver)
	}
	switch {
	case r.LastHeld >= 0:
		h := r.Rungs[r.LastHeld]
		fmt.Fprintf(&b, "**Last rung held: %d Areas x %d = %d players.** ", h.Areas, h.PerArea, h.Players)
	default:
		b.WriteString("**No rung held.** ")
	}
	if r.Breaking >= 0 {
		x := r.Rungs[r.Breaking]
		fmt.Fprintf(&b, "**Breaking rung: %d Areas x %d = %d players** (%s).\n\n", x.Areas, x.PerArea, x.Players, strings.Join(x.Broken, "; "))
	} else {
		b.WriteString("No rung broke: the ladder ran out of rungs before the server did.\n\n")
	}
	b.WriteString("| Areas | players | connected | gap p50 | p90 | p99 | max (ms) | stutters | answers/intent | rtt p50 / p99 (ms) | B per client-s | director CPU | hosts CPU | driver CPU | director RSS | hosts RSS (MiB) | hosts | tick p99 (ms) | verdict |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, g := range r.Rungs {
		s := g.Load
		v := "held"
		if !g.Held {
			v = "broke: " + strings.Join(g.Broken, "; ")
		}
		fmt.Fprintf(&b, "| %d | %d | %d | %.1f | %.1f | %.1f | %.1f | %.2f%% | %.4f | %.1f / %.1f | %.0f | %.0f%% | %.0f%% | %.0f%% | %.0f | %.0f | %d | %.1f | %s |\n",
			g.Areas, g.Players, s.Connected, s.Gap.P50, s.Gap.P90, s.Gap.P99, s.Gap.Max, s.StutterPct, s.AnswerRatio,
			s.RTT.P50, s.RTT.P99, s.SteadyBytesPerClientS, g.DirectorCPU, g.HostsCPU, g.DriverCPU,
			float64(g.DirectorRSSKiB)/1024, float64(g.HostsRSSKiB)/1024, g.Hosts, float64(g.TickP99us)/1000, v)
	}
	b.WriteString("\nCPU is % of one core over the steady phase (the driver's over its whole run, logins included); RSS at the end of the hold. ")
	if r.Pin != "" {
		b.WriteString("The load driver shares the machine with the realm, on a core of its own (Pinned, above).\n\n")
	} else {
		b.WriteString("The load driver shares the machine with the realm.\n\n")
	}
	fmt.Fprintf(&b, "![gap percentiles](%s-gap.svg)\n![CPU](%s-cpu.svg)\n![RSS](%s-rss.svg)\n", name, name, name)
	return b.String()
}

// series is one line of a chart.
type series struct {
	name string
	y    func(Rung) float64
}

func (r *Report) charts(base string) ([]string, error) {
	charts := []struct {
		file, title, ylabel string
		lines               []series
		slo                 []float64
	}{
		{"-gap.svg", "Snapshot gap per rung", "gap (ms)", []series{
			{"p50", func(g Rung) float64 { return g.Load.Gap.P50 }},
			{"p90", func(g Rung) float64 { return g.Load.Gap.P90 }},
			{"p99", func(g Rung) float64 { return g.Load.Gap.P99 }},
		}, []float64{float64(r.SLO.GapP50.Milliseconds()), float64(r.SLO.GapP99.Milliseconds())}},
		{"-cpu.svg", "CPU per rung", "CPU (% of one core)", []series{
			{"director", func(g Rung) float64 { return g.DirectorCPU }},
			{"hosts", func(g Rung) float64 { return g.HostsCPU }},
			{"load driver", func(g Rung) float64 { return g.DriverCPU }},
		}, nil},
		{"-rss.svg", "Resident memory per rung", "RSS (MiB)", []series{
			{"director", func(g Rung) float64 { return float64(g.DirectorRSSKiB) / 1024 }},
			{"hosts", func(g Rung) float64 { return float64(g.HostsRSSKiB) / 1024 }},
		}, nil},
	}
	palette := []color.Color{
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	}
	var paths []string
	for _, c := range charts {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s (%d per Area, %s)", c.title, r.PerArea, r.Pattern)
		p.X.Label.Text = "players"
		p.Y.Label.Text = c.ylabel
		p.Y.Min = 0
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
		for i, l := range c.lines {
			xy := make(plotter.XYs, len(r.Rungs))
			for j, g := range r.Rungs {
				xy[j].X, xy[j].Y = float64(g.Players), l.y(g)
			}
			line, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return paths, err
			}
			line.Color, pts.Color = palette[i%len(palette)], palette[i%len(palette)]
			p.Add(line, pts)
			p.Legend.Add(l.name, line, pts)
		}
		for _, y := range c.slo {
			if len(r.Rungs) == 0 {
				break
			}
			xy := plotter.XYs{{X: float64(r.Rungs[0].Players), Y: y}, {X: float64(r.Rungs[len(r.Rungs)-1].Players), Y: y}}
			line, err := plotter.NewLine(xy)
			if err != nil {
				return paths, err
			}
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
			line.Color = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
			p.Add(line)
			p.Legend.Add(fmt.Sprintf("SLO %.0f ms", y), line)
		}
		path := base + c.file
		if err := p.Save(16*vg.Centimeter, 10*vg.Centimeter, path); err != nil {
			return paths, fmt.Errorf("ladder: chart %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
