package load_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/internal/realmtest"
	"github.com/leyworks/ley/tools/capacity/ladder"
	"github.com/leyworks/ley/tools/capacity/load"
)

// TestChurnSoak plays the churn pattern against a real realm (`ley run`:
// a director and at least two area host processes) with a few hundred
// players who arrive, walk, drop and resume, drop past the grace and come
// back, take their own sessions over, hop through portals and leave. It
// asserts what a live game needs: no host exits and no Area panics; every
// intent answered and every position the server shows equal to the
// session's start plus the steps it said it applied; every kind of event
// happened and succeeded; at every inspection each Area's player bodies
// (counted in its world, read from the host) equal its bound peers plus
// the peers within their grace, with none overdue, and no account has a
// body in two Areas at once (issue 28); at the end every player
// still in is bound in the Area it thinks it is in; and after the last
// grace no body is left behind.
//
// LEY_CHURN_SOAK=30m (any duration) runs the long form with more players;
// its figures go into bench/RESULTS.md.
func TestChurnSoak(t *testing.T) {
	players, areas := 240, 12
	ramp, steady := 20*time.Second, 70*time.Second
	if d := os.Getenv("LEY_CHURN_SOAK"); d != "" {
		long, err := time.ParseDuration(d)
		if err != nil {
			t.Fatalf("LEY_CHURN_SOAK=%q: %v", d, err)
		}
		players, areas, ramp, steady = 600, 30, 60*time.Second, long
	}
	const grace = 2 * time.Second
	r := realmtest.Start(t, func(cfg *ladder.Config) {
		cfg.MaxHosts, cfg.PoolSize = 6, 5 // at least three hosts for the Areas
		cfg.RealmArgs = []string{"--min-hosts", "2", "--resume-grace", grace.String(), "--persist-every", "2s", "--area-idle-grace", "4s"}
	})
	ctx := context.Background()
	admin, err := load.AdminClient(ctx, r.URL(), "demo@ley.local", "demo-password")
	if err != nil {
		t.Fatal(err)
	}

	// The ground truth, read from the hosts every few seconds. During the
	// run a host may not answer within the director's inspection timeout
	// (5 s) on a machine this run overloads: that reading is incomplete,
	// no disagreement, and is counted; at the end every host must answer.
	inspections, incomplete, inspectErrs := 0, 0, []string{}
	check := func(when string, atEnd map[uint32]int) {
		hosts, err := admin.Inspect(ctx)
		if err != nil {
			inspectErrs = append(inspectErrs, fmt.Sprintf("%s: inspect: %v", when, err))
			return
		}
		inspections++
		silent := false
		bound := map[uint32]int{}
		// One character, one Area: an account whose bodies in two Areas
		// were both there before both Areas were read (the readings are not
		// one instant: a crossing between them is no fault).
		type seen struct {
			area        uint32
			since, read int64
		}
		bodies := map[uint64][]seen{}
		for _, h := range hosts {
			for _, a := range h.Areas {
				for i, acct := range a.Accounts {
					var since int64
					if i < len(a.SinceUS) {
						since = a.SinceUS[i]
					}
					for _, o := range bodies[acct] {
						if o.area != a.Area && max(o.since, since) < min(o.read, a.ReadUS) {
							inspectErrs = append(inspectErrs, fmt.Sprintf("%s: account %d has a body in area %d and in area %d at once", when, acct, o.area, a.Area))
						}
					}
					bodies[acct] = append(bodies[acct], seen{a.Area, since, a.ReadUS})
				}
			}
		}
		for _, h := range hosts {
			if h.Error == "no answer in time" && atEnd == nil {
				silent = true
			} else if h.Error != "" {
				inspectErrs = append(inspectErrs, fmt.Sprintf("%s: host %d: %s", when, h.Host, h.Error))
			}
			for _, a := range h.Areas {
				switch {
				case a.Error != "":
					inspectErrs = append(inspectErrs, fmt.Sprintf("%s: area %d: %s", when, a.Area, a.Error))
				case a.Players != a.Bound+a.Dropped || a.Overdue != 0:
					inspectErrs = append(inspectErrs, fmt.Sprintf("%s: area %d: %d player bodies for %d bound + %d within the grace, %d overdue", when, a.Area, a.Players, a.Bound, a.Dropped, a.Overdue))
				}
				bound[a.Area] += a.Bound
			}
		}
		if silent {
			incomplete++
		}
		if atEnd == nil {
			return
		}
		for area, n := range atEnd {
			if bound[area] != n {
				inspectErrs = append(inspectErrs, fmt.Sprintf("%s: area %d: %d players in by the driver, %d bound by the hosts", when, area, n, bound[area]))
			}
		}
		for area, n := range bound {
			if atEnd[area] == 0 && n != 0 {
				inspectErrs = append(inspectErrs, fmt.Sprintf("%s: area %d: %d bound by the hosts, none in by the driver", when, area, n))
			}
		}
	}
	stop := make(chan struct{})
	inspected := make(chan struct{})
	go func() {
		defer close(inspected)
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				check("during the run", nil)
			}
		}
	}()

	lc := load.DefaultConfig()
	lc.Director = r.URL()
	lc.Players, lc.Areas = players, areas
	lc.Prefix = fmt.Sprintf("churn-%d", time.Now().UnixNano()%1e6)
	lc.Pattern = load.PatternChurn
	lc.Ramp, lc.Duration = ramp, steady
	lc.RaiseCap = true
	lc.Admin = admin
	lc.Seed = 20261130
	lc.Churn.SessionMean, lc.Churn.AwayMean = 4*time.Second, 2*time.Second
	lc.LoginConcurrency = 4
	lc.AtEnd = func(in map[uint32]int) {
		stop <- struct{}{}
		<-inspected
		check("at the end", in)
	}
	if testing.Verbose() {
		lc.Progress = os.Stderr
	}
	res, err := load.Run(ctx, lc)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s := res.Summary
	c := s.Churn
	t.Logf("churn: %d players in %d Areas, seed %d; events %+v; ground truth %d checks, %d mismatches; gap p50 %.1f p99 %.1f max %.1f ms; answers/intent %.4f (%d/%d); crossed away %d, moved back %d, late resumes %d, hop retries %d, crossings undecided %d; inspections %d (%d with a host silent); errors %v",
		s.Players, s.Areas, c.Seed, c.Events, c.GroundTruth, c.Mismatches, s.Gap.P50, s.Gap.P99, s.Gap.Max, s.AnswerRatio, s.IntentsAnswered, s.IntentsSent, c.CrossedAway, c.MovedBack, c.LateResumes, c.HopRetries, c.CrossingsUndecided, inspections, incomplete, s.Errors)

	// After the last grace no body is left behind.
	hosts, left := bodiesLeft(t, admin, grace)

	if len(inspectErrs) > 0 {
		t.Errorf("the hosts' ground truth disagreed %d times; first: %s", len(inspectErrs), strings.Join(inspectErrs[:min(5, len(inspectErrs))], "; "))
	}
	if inspections-incomplete < 3 {
		t.Errorf("only %d inspections ran with every host answering (%d more without)", inspections-incomplete, incomplete)
	}
	if left != 0 {
		t.Errorf("%d player bodies left after the last grace; want 0", left)
	}
	if s.Connected != s.Players {
		t.Errorf("%d of %d players got in", s.Connected, s.Players)
	}
	if s.AnswerRatio != 1 || s.IntentsAnswered != s.IntentsSent || s.DuplicateAnswers != 0 || c.Unanswered != 0 {
		t.Errorf("answers/intent %v (%d/%d), %d duplicates, %d unanswered; want every intent answered once", s.AnswerRatio, s.IntentsAnswered, s.IntentsSent, s.DuplicateAnswers, c.Unanswered)
	}
	if c.GroundTruth < int64(players) || c.Mismatches != 0 {
		t.Errorf("ground truth: %d checks, %d mismatches; want at least %d checks and none failing; %q", c.GroundTruth, c.Mismatches, players, c.MismatchDetails)
	}
	for _, kind := range []string{load.EventArrive, load.EventLeave, load.EventResume, load.EventRejoin, load.EventTakeover, load.EventHop} {
		e := c.Events[kind]
		if e.Count == 0 || e.Failed != 0 {
			t.Errorf("event %s: %+v; want some, none failed", kind, e)
		}
	}
	if s.ErrorCount != 0 {
		t.Errorf("errors: %v", s.Errors)
	}
	for name, want := range map[string]float64{"ley_area_failures_total": 0, "ley_host_exits_total": 0} {
		if got := metric(t, r.MetricsURL(), name); got != want {
			t.Errorf("%s = %v; want %v", name, got, want)
		}
	}
	if hosts := len(hosts); hosts < 2 {
		t.Errorf("%d hosts ran the soak; want at least 2", hosts)
	}
}

// metric reads one unlabelled series from the director's /metrics at url
// (its metrics listener: see ladder.Realm.MetricsURL).
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// TestLoadTwiceInARow: `ley load` run again right after a run, with the
// same prefix (the same accounts come back while their old bodies still
// wait out the resume grace) and then with a new one, works every time,
// and leaves no body behind once the grace is over.
func TestLoadTwiceInARow(t *testing.T) {
	const grace = 3 * time.Second
	r := realmtest.Start(t, func(cfg *ladder.Config) { cfg.RealmArgs = []string{"--resume-grace", grace.String()} })
	ctx := context.Background()
	admin, err := load.AdminClient(ctx, r.URL(), "demo@ley.local", "demo-password")
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("twice-%d", time.Now().UnixNano()%1e6)
	for i, p := range []string{prefix, prefix, prefix + "-new"} {
		lc := load.DefaultConfig()
		lc.Director, lc.Admin = r.URL(), admin
		lc.Players, lc.Areas, lc.Prefix = 40, 4, p
		lc.Pattern = load.PatternWalk5
		lc.Ramp, lc.Duration, lc.Drain = time.Second, 3*time.Second, 3*time.Second
		lc.RaiseCap = true
		res, err := load.Run(ctx, lc)
		if err != nil {
			t.Fatalf("run %d (prefix %s): %v", i+1, p, err)
		}
		s := res.Summary
		if s.Connected != 40 || s.AnswerRatio != 1 || s.ErrorCount != 0 {
			t.Fatalf("run %d (prefix %s): connected %d/40, answers/intent %v, errors %v", i+1, p, s.Connected, s.AnswerRatio, s.Errors)
		}
	}
	hosts, _ := bodiesLeft(t, admin, grace)
	for _, h := range hosts {
		for _, a := range h.Areas {
			if a.Players != 0 || a.Overdue != 0 {
				t.Errorf("area %d: %d player bodies (%d overdue) after the last grace; want none", a.Area, a.Players, a.Overdue)
			}
		}
	}
	for name, want := range map[string]float64{"ley_area_failures_total": 0, "ley_host_exits_total": 0} {
		if got := metric(t, r.MetricsURL(), name); got != want {
			t.Errorf("%s = %v; want %v", name, got, want)
		}
	}
}

// bodiesLeft waits, polling the hosts' ground truth, until no player body
// is left in any Area once the last grace (grace) ran out, and returns the
// last inspection and the bodies it counted (none overdue either); it
// gives up 15 s past the
// grace (the bodies a test then finds are left behind).
func bodiesLeft(t *testing.T, admin *dirclient.Client, grace time.Duration) ([]dirclient.HostInspection, int) {
	t.Helper()
	deadline := time.Now().Add(grace + 15*time.Second)
	for {
		hosts, err := admin.Inspect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		left, overdue := 0, 0
		for _, h := range hosts {
			for _, a := range h.Areas {
				left, overdue = left+a.Players, overdue+a.Overdue
			}
		}
		if left+overdue == 0 || time.Now().After(deadline) {
			return hosts, left
		}
		time.Sleep(200 * time.Millisecond)
	}
}
