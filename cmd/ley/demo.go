package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/scenario"
	"github.com/spf13/cobra"
)

func newDemoCmd() *cobra.Command {
	var (
		s        scenario.Scenario
		every    time.Duration
		duration time.Duration
		workers  int
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run one Area in this process: wandering bodies and simulated players under the tick clock, printing tick stats",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if duration > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, duration)
				defer cancel()
			}
			return runDemo(ctx, cmd, s, every, workers)
		},
	}
	f := cmd.Flags()
	f.IntVar(&s.W, "width", 128, "grid width in squares")
	f.IntVar(&s.H, "height", 128, "grid height in squares")
	f.IntVar(&s.Players, "players", 20, "simulated players, each sending a step intent 10 times a second")
	f.IntVar(&s.Wanderers, "wanderers", 500, "wandering bodies")
	f.IntVar(&s.WallPercent, "wall-percent", 10, "share of squares that are walls")
	f.Uint64Var(&s.Seed, "seed", 1, "seed of the map and the bodies")
	f.IntVar(&s.TickRate, "tick-rate", 20, "ticks per second")
	f.DurationVar(&every, "stats-every", 3*time.Second, "how often to print tick stats")
	f.DurationVar(&duration, "duration", 0, "stop after this long (0: run until interrupted)")
	f.IntVar(&workers, "workers", 0, "clock worker goroutines (0: GOMAXPROCS)")
	return cmd
}

func runDemo(ctx context.Context, cmd *cobra.Command, s scenario.Scenario, every time.Duration, workers int) error {
	s.Kind = ecs.KindVillage
	a, players, err := scenario.Build(s)
	if err != nil {
		return err
	}
	answers := make([]int, 16)
	a.AfterTick = func(a *ecs.Area) {
		for _, ans := range a.Outbox {
			answers[ans.Outcome]++
		}
	}
	clock, err := ecs.NewClock(ecs.ClockConfig{TickRate: s.TickRate, FrozenPollRate: 4, Workers: workers})
	if err != nil {
		return err
	}
	defer clock.Close()
	clock.Add(a)
	a.Wake()
	go func() { _ = clock.Run(ctx) }()

	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "ley demo: one %dx%d %s Area, %d players, %d wanderers, %d Hz; Ctrl-C stops\n",
		s.W, s.H, a.Rules.Kind, len(players), s.Wanderers, s.TickRate)
	rng := rand.New(rand.NewPCG(s.Seed, 2))
	seq := uint32(0)
	intents := time.NewTicker(100 * time.Millisecond)
	defer intents.Stop()
	report := time.NewTicker(every)
	defer report.Stop()
	sent := 0
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(out, "stopped after %d ticks, %d intents sent\n", a.Stats().Tick, sent)
			return nil
		case <-intents.C:
			seq++
			for _, e := range players {
				if a.Post(e, ecs.Intent{Seq: seq, Kind: ecs.IntentStep, Dir: ecs.Dir(rng.IntN(int(ecs.NumDirs)))}) {
					sent++
				}
			}
		case <-report.C:
			a.PostControl(func(a *ecs.Area) {
				st := a.Stats()
				fmt.Fprintf(out, "tick %d %s: p50 %v p95 %v p99 %v max %v late %d | entities %d players %d | answers applied %d blocked %d too-fast %d\n",
					st.Tick, st.Mode, st.P50, st.P95, st.P99, st.Max, st.Late, st.Entities, st.Players,
					answers[ecs.OutcomeApplied], answers[ecs.OutcomeBlocked], answers[ecs.OutcomeTooFast])
				for _, sy := range st.Systems {
					fmt.Fprintf(out, "    %-9s mean %v\n", sy.Name, sy.Mean)
				}
			})
		}
	}
}
