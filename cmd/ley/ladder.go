package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/leyworks/ley/tools/capacity/ladder"
	"github.com/leyworks/ley/tools/capacity/load"
	"github.com/spf13/cobra"
)

func newLadderCmd() *cobra.Command {
	def := ladder.DefaultConfig()
	var (
		quick        bool
		outDir, name string
		pattern      string
		flagsCfg     = def
		rungs        []int
		pin          string
		baseline     string
		margin       float64
	)
	cmd := &cobra.Command{
		Use:   "ladder",
		Short: "Climb rungs of Areas x players against a realm until the snapshot SLO breaks; write a report and charts",
		Long: `ladder starts a realm (ley run, on free loopback ports with a temporary data
directory) or targets a running one (--director), raises its player cap,
and runs the load driver on rungs of Areas x players, holding each for a
measured steady phase. It stops at the first rung that breaks the SLO
(median snapshot gap over 105 ms, p99 over 150 ms, more than 1% stutters,
an intent round trip p99 over 200 ms, an unanswered intent, a player that
could not connect, or errors) and writes <out>/<name>.md, .json and
-gap/-cpu/-rss.svg charts.
--quick (2 and 4 Areas x 5 players, 5 s holds) finishes in well under 45 s.
--pin 0:1 runs the realm it starts on CPU 0 and the load driver on CPU 1
(taskset lists: 0-1:2-3), so that a rung measures players per core.
--baseline <report.json> makes it a regression gate (make ladder-gate):
it fails when a rung the baseline held breaks, a rung's realm CPU per
player is more than --regress-margin above the baseline's, or the last
rung held is lower.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := flagsCfg
			if quick {
				q := ladder.QuickConfig()
				f := cmd.Flags()
				if !f.Changed("rungs") {
					rungs = q.Rungs
				}
				if !f.Changed("per-area") {
					cfg.PerArea = q.PerArea
				}
				if !f.Changed("ramp") {
					cfg.Ramp = q.Ramp
				}
				if !f.Changed("hold") {
					cfg.Hold = q.Hold
				}
				if !f.Changed("max-hosts") {
					cfg.MaxHosts = q.MaxHosts
				}
				if !f.Changed("name") {
					name = "ladder-quick"
				}
			}
			if !cmd.Flags().Changed("name") && !quick {
				name = "ladder-village"
				if cfg.PerArea == 1 {
					name = "ladder-homes"
				}
			}
			var base *ladder.Report
			if baseline != "" { // read first: a bad baseline fails before the climb
				var err error
				if base, err = ladder.ReadReport(baseline); err != nil {
					return err
				}
			}
			if pin != "" {
				p, err := ladder.ParsePin(pin)
				if err != nil {
					return err
				}
				cfg.Pin = p
			}
			cfg.Rungs = rungs
			cfg.Pattern = load.Pattern(pattern)
			cfg.Progress = cmd.ErrOrStderr()
			cfg.Command = "ley " + strings.Join(os.Args[1:], " ")
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := ladder.Run(ctx, cfg)
			if rep == nil {
				return err
			}
			paths, werr := rep.Write(outDir, name)
			for _, p := range paths {
				fmt.Fprintln(cmd.OutOrStdout(), "wrote", p)
			}
			if rep.LastHeld >= 0 {
				h := rep.Rungs[rep.LastHeld]
				fmt.Fprintf(cmd.OutOrStdout(), "last rung held: %d Areas x %d = %d players\n", h.Areas, h.PerArea, h.Players)
			} else {
				fmt.Fprintln(cmd.OutOrStdout(), "no rung held")
			}
			if rep.Breaking >= 0 {
				x := rep.Rungs[rep.Breaking]
				fmt.Fprintf(cmd.OutOrStdout(), "breaking rung: %d Areas x %d = %d players: %s\n", x.Areas, x.PerArea, x.Players, strings.Join(x.Broken, "; "))
			}
			if err != nil {
				return err
			}
			if werr != nil {
				return werr
			}
			if base == nil {
				return nil
			}
			regressed, err := ladder.Regressions(base, rep, margin)
			if err != nil {
				return err
			}
			if len(regressed) > 0 {
				for _, r := range regressed {
					fmt.Fprintln(cmd.OutOrStdout(), "regression:", r)
				}
				return fmt.Errorf("ladder: %d regressions against %s", len(regressed), baseline)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "no regression against %s (margin %.0f%%)\n", baseline, margin*100)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&quick, "quick", false, "a check that finishes in well under 45 s: rungs of 2 and 4 Areas x 5 players, 2 s ramps, 5 s holds")
	f.StringVar(&flagsCfg.Director, "director", "", "climb this running realm (http://host:port) instead of starting one")
	f.IntVar(&flagsCfg.DirectorPID, "director-pid", 0, "the running realm's director pid, for CPU and RSS sampling (with --director)")
	f.StringVar(&flagsCfg.Binary, "binary", "", "ley binary that runs the realm (default: this executable)")
	f.StringVar(&flagsCfg.AdminEmail, "admin-email", def.AdminEmail, "admin of the realm")
	f.StringVar(&flagsCfg.AdminPassword, "admin-password", def.AdminPassword, "the admin's password")
	f.IntSliceVar(&rungs, "rungs", def.Rungs, "Areas of each rung, climbing")
	f.IntVar(&flagsCfg.PerArea, "per-area", def.PerArea, "players in each Area (1: homes, 20: villages)")
	f.StringVar(&pattern, "pattern", string(def.Pattern), "what players do: walk, walk5, idle, bursty, build")
	f.StringVar(&flagsCfg.Template, "template", "", "content template of the rungs' Areas, e.g. arena (default: open 64x64 floors, players only)")
	f.StringVar(&flagsCfg.Content, "realm-content", "", "folder of content laid over the embedded content of the realm the ladder starts (its ley run --content)")
	f.StringSliceVar(&flagsCfg.RealmArgs, "realm-args", nil, "more flags for the realm the ladder starts (its ley run command line, comma-separated), e.g. --host-writev to measure the hosts writing with writev")
	f.DurationVar(&flagsCfg.Ramp, "ramp", def.Ramp, "each rung's ramp")
	f.DurationVar(&flagsCfg.Hold, "hold", def.Hold, "each rung's measured steady phase")
	f.IntVar(&flagsCfg.MaxHosts, "max-hosts", def.MaxHosts, "area host processes the started realm may spawn")
	f.IntVar(&flagsCfg.PoolSize, "pool-size", def.PoolSize, "Areas per area host of the started realm (0: the director sizes pools by capacity)")
	f.StringVar(&pin, "pin", "", "REALM:DRIVER CPU lists (e.g. 0:1): the started realm (director and hosts) on the first, the load driver on the second (with --director, the driver only)")
	f.StringVar(&baseline, "baseline", "", "a ladder report (.json) measured the same way: fail if a rung it held breaks, its realm CPU per player rose past --regress-margin, or the last rung held is lower")
	f.Float64Var(&margin, "regress-margin", 0.25, "with --baseline, how much more realm CPU per player a rung may take (0.25: 25%)")
	f.StringVar(&outDir, "out", "bench", "directory of the report and charts")
	f.StringVar(&name, "name", "", "file name stem of the report and charts (default ladder-quick, ladder-homes for 1 per Area, else ladder-village)")
	return cmd
}
