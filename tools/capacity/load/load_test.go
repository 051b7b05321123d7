package load_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/leyworks/ley/internal/realmtest"
	"github.com/leyworks/ley/tools/capacity/load"
)

func TestMain(m *testing.M) { os.Exit(realmtest.Main(m)) }

func TestRunAgainstRealm(t *testing.T) {
	r := realmtest.Start(t, nil)
	tests := []struct {
		pattern load.Pattern
		intents bool
	}{
		{load.PatternWalk, true},
		{load.PatternBursty, true},
		{load.PatternIdle, false},
		{load.PatternPortal, true},
		{load.PatternBuild, true},
	}
	for i, tc := range tests {
		t.Run(string(tc.pattern), func(t *testing.T) {
			cfg := load.DefaultConfig()
			cfg.Director = r.URL()
			cfg.Players, cfg.Areas = 8, 2
			cfg.Prefix = fmt.Sprintf("t%d-%d", i, time.Now().UnixNano()%1e6)
			cfg.Pattern = tc.pattern
			cfg.Ramp, cfg.Duration = time.Second, 3*time.Second
			cfg.RaiseCap = true
			res, err := load.Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Run: %v (summary %+v)", err, res.Summary)
			}
			s := res.Summary
			if s.Connected != 8 || s.Failed != 0 {
				t.Errorf("connected %d, failed %d; want 8, 0 (errors %v)", s.Connected, s.Failed, s.Errors)
			}
			if s.Areas != 2 {
				t.Errorf("areas = %d; want 2", s.Areas)
			}
			if tc.intents && s.IntentsSent == 0 {
				t.Errorf("no intents sent")
			}
			if !tc.intents && s.IntentsSent != 0 {
				t.Errorf("idle players sent %d intents", s.IntentsSent)
			}
			if tc.pattern == load.PatternBuild {
				// Items moved every way, and the director counted them all:
				// in the store (conserved at every instant, though it may
				// not hold the run's moves yet) and in play (every player's
				// starter kit at least).
				if s.Applied == 0 || s.Items == nil || !s.Items.OK || s.Items.Characters < 8 {
					t.Errorf("build pattern: %d applied, the director's count %+v; want items counted, conserved", s.Applied, s.Items)
				}
				if s.LiveItems == nil || !s.LiveItems.OK || s.LiveItems.Stacks < 8 {
					t.Errorf("build pattern: the director's count of the items in play %+v; want every kit counted, conserved", s.LiveItems)
				}
				if s.Rejected["NOT_BUILDER"] != 0 {
					t.Errorf("build pattern in villages refused NOT_BUILDER %d times (refusals %v, areas %d)", s.Rejected["NOT_BUILDER"], s.Rejected, s.Areas)
				}
			}
			if tc.pattern == load.PatternPortal && (s.Hops == 0 || s.HopLat.Count == 0 || s.ErrorCount != 0) {
				t.Errorf("portal pattern: %d hops (latency %+v), errors %v; want some hops and no error", s.Hops, s.HopLat, s.Errors)
			}
			if s.AnswerRatio != 1.0 || s.IntentsAnswered != s.IntentsSent {
				t.Errorf("answers/intent = %v (%d of %d); want exactly 1.0", s.AnswerRatio, s.IntentsAnswered, s.IntentsSent)
			}
			if s.DuplicateAnswers != 0 || s.Lost != 0 {
				t.Errorf("duplicate answers %d, lost %d; want 0, 0", s.DuplicateAnswers, s.Lost)
			}
			if s.Gap.Count == 0 || s.Gap.P50 <= 0 || s.Gap.P99 < s.Gap.P50 || s.Gap.Max < s.Gap.P99 {
				t.Errorf("gaps not measured: %+v", s.Gap)
			}
			if s.Frames == 0 || s.Bytes == 0 || s.SteadyBytesPerClientS <= 0 || s.SteadyFramesPerClientS <= 0 {
				t.Errorf("frames %d, bytes %d, steady per client-s %.0f B in %.1f frames; want all > 0", s.Frames, s.Bytes, s.SteadyBytesPerClientS, s.SteadyFramesPerClientS)
			}
			if s.Login.Done != 8 {
				t.Errorf("logins done = %d; want 8", s.Login.Done)
			}
			if s.Driver.UserS+s.Driver.SysS <= 0 {
				t.Errorf("driver CPU not measured: %+v", s.Driver)
			}

			// The JSON summary is well formed and carries the figures.
			var buf bytes.Buffer
			if err := s.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
				t.Fatalf("summary JSON: %v\n%s", err, buf.Bytes())
			}
			for _, k := range []string{"gap", "rtt", "answer_ratio", "intents_sent", "stutters", "frames", "bytes", "login", "join", "driver", "errors"} {
				if _, ok := back[k]; !ok {
					t.Errorf("summary JSON lacks %q", k)
				}
			}
			if got := back["answer_ratio"]; got != 1.0 {
				t.Errorf("JSON answer_ratio = %v; want 1", got)
			}
			gap, _ := back["gap"].(map[string]any)
			if gap["p50_ms"] == nil || gap["p99_ms"] == nil || gap["max_ms"] == nil || gap["p90_ms"] == nil {
				t.Errorf("JSON gap = %v; want p50, p90, p99, max", gap)
			}

			// The CSV series has a header and one row a second.
			buf.Reset()
			if err := load.WriteCSV(&buf, res.Series); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(&buf).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) < 4 || len(rows[0]) != 9 {
				t.Errorf("CSV: %d rows of %d columns; want >= 4 rows of 9", len(rows), len(rows[0]))
			}
		})
	}
}

// TestRunInTemplateAreas: players walk Areas made from a content template
// (the arena: walls, creatures, a map portal they may not use), provisioned
// by the run itself, and every intent is answered without an error.
func TestRunInTemplateAreas(t *testing.T) {
	r := realmtest.Start(t, nil)
	admin, err := load.AdminClient(context.Background(), r.URL(), "demo@ley.local", "demo-password")
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("arena-%d", time.Now().UnixNano()%1e6)
	roster, err := load.Provision(context.Background(), admin, prefix, "load-password-1", 6, 1, "arena", false)
	if err != nil {
		t.Fatal(err)
	}
	a, err := admin.Area(context.Background(), roster[0].Area)
	if err != nil {
		t.Fatal(err)
	}
	if a.Template != "arena" || a.Kind != "arena" || a.W != 96 || a.H != 96 {
		t.Fatalf("provisioned Area %+v; want the arena template's 96x96 arena", a)
	}
	cfg := load.DefaultConfig()
	cfg.Director, cfg.Admin, cfg.RaiseCap = r.URL(), admin, true
	cfg.Players, cfg.Areas, cfg.Prefix, cfg.Template = 6, 1, prefix, "arena" // the same accounts and Area again
	cfg.Pattern = load.PatternWalk5
	cfg.Ramp, cfg.Duration = time.Second, 3*time.Second
	res, err := load.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v (summary %+v)", err, res.Summary)
	}
	s := res.Summary
	if s.Connected != 6 || s.ErrorCount != 0 || s.AnswerRatio != 1.0 || s.IntentsSent == 0 {
		t.Errorf("connected %d, errors %v, answers/intent %v (%d/%d); want 6, none, 1.0", s.Connected, s.Errors, s.AnswerRatio, s.IntentsAnswered, s.IntentsSent)
	}
	if s.SteadyBytesPerClientS <= 0 {
		t.Errorf("steady bytes per client-s %.0f; want > 0", s.SteadyBytesPerClientS)
	}
}

func TestRunReusesRosterAndSessions(t *testing.T) {
	r := realmtest.Start(t, nil)
	admin, err := load.AdminClient(context.Background(), r.URL(), "demo@ley.local", "demo-password")
	if err != nil {
		t.Fatal(err)
	}
	if err := load.RaiseCap(context.Background(), admin); err != nil {
		t.Fatal(err)
	}
	roster, err := load.Provision(context.Background(), admin, "reuse", "load-password-1", 4, 1, "", false)
	if err != nil {
		t.Fatal(err)
	}
	sessions := load.NewSessions()
	for round := range 2 {
		cfg := load.DefaultConfig()
		cfg.Director, cfg.Roster, cfg.Sessions = r.URL(), roster, sessions
		cfg.Pattern = load.PatternWalk5
		cfg.Ramp, cfg.Duration = 500*time.Millisecond, 2*time.Second
		res, err := load.Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		s := res.Summary
		if s.Connected != 4 || s.AnswerRatio != 1.0 {
			t.Errorf("round %d: connected %d, answers/intent %v (%d/%d), errors %v; want 4, 1.0",
				round, s.Connected, s.AnswerRatio, s.IntentsAnswered, s.IntentsSent, s.Errors)
		}
		wantLogins, wantCached := 4, 0
		if round == 1 {
			wantLogins, wantCached = 0, 4
		}
		if s.Login.Done != wantLogins || s.Login.Cached != wantCached {
			t.Errorf("round %d: logins %d, cached %d; want %d, %d", round, s.Login.Done, s.Login.Cached, wantLogins, wantCached)
		}
	}
}

func TestConfigRefusals(t *testing.T) {
	cfg := load.DefaultConfig()
	cfg.Pattern, cfg.Areas = load.PatternPortal, 3
	if _, err := load.Run(context.Background(), cfg); err == nil {
		t.Errorf("portal pattern over an odd number of Areas: no error")
	}
	cfg = load.DefaultConfig()
	cfg.Areas = cfg.Players + 1
	if _, err := load.Run(context.Background(), cfg); err == nil {
		t.Errorf("more Areas than players: no error")
	}
	for _, p := range []load.Pattern{load.PatternChurn, load.PatternPortal} {
		cfg = load.DefaultConfig()
		cfg.Pattern, cfg.Areas, cfg.Template = p, 2, "arena"
		if _, err := load.Run(context.Background(), cfg); !errors.Is(err, load.ErrConfig) {
			t.Errorf("pattern %s with a template: %v; want ErrConfig", p, err)
		}
	}
}

// TestPlayersJoinAgainWhenTheirHostStops stops every area host of a realm
// (SIGTERM, as a rollout does) in the middle of a run of walking and of
// idle players: each is told area_closing and rehello AREA_CLOSING, and
// joins its Area again through the director once it is back on a host
// the director spawned, with no error counted and every intent answered.
func TestPlayersJoinAgainWhenTheirHostStops(t *testing.T) {
	r := realmtest.Start(t, nil)
	admin, err := load.AdminClient(context.Background(), r.URL(), "demo@ley.local", "demo-password")
	if err != nil {
		t.Fatal(err)
	}
	for i, pattern := range []load.Pattern{load.PatternWalk, load.PatternIdle} {
		t.Run(string(pattern), func(t *testing.T) {
			cfg := load.DefaultConfig()
			cfg.Director = r.URL()
			cfg.Players, cfg.Areas = 8, 2
			cfg.Prefix = fmt.Sprintf("stop%d-%d", i, time.Now().UnixNano()%1e6)
			cfg.Pattern = pattern
			// The players are back about a second after the stop (2 s
			// into the steady phase): 10 s more is room for a busy machine.
			cfg.Ramp, cfg.Duration = time.Second, 13*time.Second
			cfg.RaiseCap = true
			cfg.Admin = admin // one session an account: the run's own login would end this one
			stopped := make(chan []int, 1)
			cfg.OnSteady = func(on bool) {
				if !on {
					return
				}
				go func() {
					time.Sleep(2 * time.Second)
					// The hosts the director knows, by the PIDs they gave it.
					hosts, err := admin.Inspect(context.Background())
					if err != nil {
						t.Error(err)
					}
					var pids []int
					for _, h := range hosts {
						if h.PID <= 0 { // kill(0) would signal this test's own group
							t.Errorf("host %d told no pid (%q)", h.Host, h.Error)
							continue
						}
						if err := syscall.Kill(h.PID, syscall.SIGTERM); err != nil {
							t.Errorf("stop host %d (pid %d): %v", h.Host, h.PID, err)
						}
						pids = append(pids, h.PID)
					}
					stopped <- pids
				}()
			}
			res, err := load.Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Run: %v (summary %+v)", err, res.Summary)
			}
			if pids := <-stopped; len(pids) == 0 {
				t.Fatal("the realm had no area host to stop")
			}
			s := res.Summary
			if s.ErrorCount != 0 {
				t.Errorf("errors %v; want none: a closing Area is not an error, and every player joined again", s.Errors)
			}
			if s.AreaClosings < 8 || s.Rejoins < 8 {
				t.Errorf("%d area_closing told, %d rejoins; want at least 8 of each (every player's Area closed)", s.AreaClosings, s.Rejoins)
			}
			var last load.Point
			var connected []int64
			for _, p := range res.Series {
				if p.Phase == "steady" {
					last = p
					connected = append(connected, p.Connected)
				}
			}
			t.Logf("players connected, second by second of the steady phase: %v", connected)
			if last.Connected != 8 {
				t.Errorf("%d players connected at the end of the steady phase; want 8", last.Connected)
			}
			if s.AnswerRatio != 1.0 || s.DuplicateAnswers != 0 {
				t.Errorf("answers/intent = %v (%d of %d), %d duplicates; want exactly 1.0 and none", s.AnswerRatio, s.IntentsAnswered, s.IntentsSent, s.DuplicateAnswers)
			}
		})
	}
}
