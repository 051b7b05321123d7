package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/leyworks/ley/tools/capacity/load"
	"github.com/spf13/cobra"
)

func newLoadCmd() *cobra.Command {
	cfg := load.DefaultConfig()
	var pattern, jsonPath, csvPath string
	names := make([]string, len(load.Patterns))
	for i, p := range load.Patterns {
		names[i] = string(p)
	}
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Simulate players over the binary WebSocket protocol against a running realm and measure what they see",
		Long: `load provisions accounts through the director's admin API, logs them in,
joins them to their Areas, says hello over WebSocket and sends intents in a
pattern, then reports snapshot gaps, stutters, intent round trips and
answers per intent (a JSON summary and a per-second CSV series).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Pattern = load.Pattern(pattern)
			cfg.Progress = cmd.ErrOrStderr()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := load.Run(ctx, cfg)
			if res.Summary.Players == 0 && err != nil {
				return err
			}
			s := res.Summary
			fmt.Fprintf(cmd.OutOrStdout(), "players %d/%d connected in %d Areas  gap p50 %.1f p90 %.1f p99 %.1f max %.1f ms  stutters %d (%.2f%%)  rtt p50 %.1f p99 %.1f ms  answers/intent %.4f (%d/%d)  %.0f B per client-s  errors %d  driver cpu %.0f%%  seed %d\n",
				s.Connected, s.Players, s.Areas, s.Gap.P50, s.Gap.P90, s.Gap.P99, s.Gap.Max, s.Stutters, s.StutterPct,
				s.RTT.P50, s.RTT.P99, s.AnswerRatio, s.IntentsAnswered, s.IntentsSent, s.SteadyBytesPerClientS, s.ErrorCount, s.Driver.CPUPercent, s.Seed)
			if c := s.Churn; c != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "churn: ground truth %d checks, %d mismatches; %d intents unanswered at a session's end, %d void after a crossing; crossed away %d, moved back %d, late resumes %d, hop retries %d, crossings undecided %d\n",
					c.GroundTruth, c.Mismatches, c.Unanswered, c.Void, c.CrossedAway, c.MovedBack, c.LateResumes, c.HopRetries, c.CrossingsUndecided)
				for _, k := range []string{load.EventArrive, load.EventLeave, load.EventResume, load.EventRejoin, load.EventTakeover, load.EventHop, load.EventStray} {
					if e, ok := c.Events[k]; ok {
						fmt.Fprintf(cmd.OutOrStdout(), "  %-9s %6d  ok %6d  failed %d\n", k, e.Count, e.OK, e.Failed)
					}
				}
			}
			if jsonPath != "" {
				if werr := writeFile(jsonPath, func(f *os.File) error { return s.WriteJSON(f) }); werr != nil {
					return werr
				}
			}
			if csvPath != "" {
				if werr := writeFile(csvPath, func(f *os.File) error { return load.WriteCSV(f, res.Series) }); werr != nil {
					return werr
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Director, "director", cfg.Director, "the director's base URL")
	f.StringVar(&cfg.AdminEmail, "admin-email", cfg.AdminEmail, "admin account that provisions the players")
	f.StringVar(&cfg.AdminPassword, "admin-password", cfg.AdminPassword, "the admin's password")
	f.IntVar(&cfg.Players, "players", cfg.Players, "simulated players")
	f.IntVar(&cfg.Areas, "areas", cfg.Areas, "Areas the players are spread over")
	f.StringVar(&cfg.Prefix, "prefix", "", "account name prefix (default load-<unix seconds>; reuse one to reuse accounts)")
	f.StringVar(&cfg.Password, "password", cfg.Password, "the players' password")
	f.StringVar(&pattern, "pattern", string(cfg.Pattern), "what players do: "+strings.Join(names, ", "))
	f.StringVar(&cfg.Template, "template", "", "content template of the provisioned Areas, e.g. arena (default: open 64x64 floors, players only; walk, walk5, idle and bursty only)")
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "steady phase measured after the ramp")
	f.DurationVar(&cfg.Ramp, "ramp", cfg.Ramp, "players start spread over this time")
	f.DurationVar(&cfg.Drain, "drain", cfg.Drain, "wait for the last answers after intents stop")
	f.IntVar(&cfg.LoginConcurrency, "login-concurrency", cfg.LoginConcurrency, "logins in flight (the director hashes 4 at once)")
	f.IntVar(&cfg.JoinConcurrency, "join-concurrency", cfg.JoinConcurrency, "joins in flight")
	f.BoolVar(&cfg.RaiseCap, "raise-cap", false, "raise the realm's player cap (as the admin) before joining")
	f.Uint64Var(&cfg.Seed, "seed", 0, "seed of every random draw, to replay a run (0: the clock; the summary prints it)")
	f.DurationVar(&cfg.Churn.SessionMean, "churn-session", cfg.Churn.SessionMean, "churn: mean time a session walks")
	f.DurationVar(&cfg.Churn.AwayMean, "churn-away", cfg.Churn.AwayMean, "churn: mean time away after a clean leave")
	f.DurationVar(&cfg.Churn.ResumeGrace, "churn-resume-grace", 0, "churn: the realm's resume grace (0: ask the director)")
	f.IntVar(&cfg.Churn.Leave, "churn-leave", cfg.Churn.Leave, "churn: weight of sessions ending in a clean leave and a later return")
	f.IntVar(&cfg.Churn.Resume, "churn-resume", cfg.Churn.Resume, "churn: weight of sessions ending in a dropped socket resumed within the grace")
	f.IntVar(&cfg.Churn.Rejoin, "churn-rejoin", cfg.Churn.Rejoin, "churn: weight of sessions ending in a dropped socket past the grace, then a new join")
	f.IntVar(&cfg.Churn.Takeover, "churn-takeover", cfg.Churn.Takeover, "churn: weight of sessions taken over by a second login")
	f.IntVar(&cfg.Churn.Hop, "churn-hop", cfg.Churn.Hop, "churn: weight of sessions ending in a portal hop (Areas are linked in pairs)")
	f.StringVar(&jsonPath, "json", "", "write the JSON summary to this file")
	f.StringVar(&csvPath, "csv", "", "write the per-second CSV series to this file")
	return cmd
}

// writeFile creates path and writes it with fn.
func writeFile(path string, fn func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
