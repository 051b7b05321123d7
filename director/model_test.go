//go:build leytest

package director

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/leyworks/ley/area"
	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/director/transfer"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/store/sqlcore"
)

// The model test of the portal transfer protocol, run on the real code:
// the director's control-channel server (serveHost: registration,
// adoption, handle), portal handlers, joins and reconciliation, on a real
// SQLite store, and the area hosts' own Areas, crossing state machine,
// grants and persistence (area.Sim), in one process over a simulated
// control bus inside a testing/synctest bubble (see modelsim_test.go). The
// test's director knows only what the control messages tell it, as the
// real one does: it is the real one.
//
// The generator (rapid) chooses every step: which message in flight is
// delivered next (each connection keeps its order, connections
// interleave), how much time passes, what the players do (join by the
// door, say hello with a grant, walk onto a portal, place or take back
// one of the chairs they carry, drop their connection), and the faults: a host killed or restarted, a connection
// cut, the director killed between steps or at a chosen store write (just
// before it takes effect or just after it commits) and restarted on the
// same database. After every step the hosts' worlds (an ECS query per
// Area) and the store are checked: every character exists, in A or B; no
// player has bodies in two Areas; every body but a dropped one is driven
// by its player's client where the client believes it is; and the
// store's items are counted (director/census: no id twice, each kind's
// count what the ledgers made), since a crash may stop the realm at any
// step (docs/items.md). At the end the
// faults stop and the realm must settle: every player in play, in the
// Area the store says, in its live incarnation, one body each, and no
// transfer left pending after reconciliation.
//
// Replay: every choice is rapid's, and the test never ranges over a map
// for an order; a failing run shrinks and replays with -rapid.seed (or
// the fail file rapid writes). What the product does concurrently inside
// one step (two joins woken by one Area's start, a host resending several
// crossings in its map's order) can still come out in another order on a
// replay, so a few runs in a hundred do not replay step for step; rapid
// then says "flaky" and prints both failures.
//
// The fences and the mutation check: settling (area.SetSettling), the
// store's epoch check of a crossing's source (MoveCharacter's FromEpoch),
// the director's check that a portal_out comes from the source's live
// incarnation (noSourceEpoch) and a crossing's hold on its account's
// lock against joins (noAccountLock) can each be removed. Removing
// settling makes the model fail. The other three back each other up:
// removed alone, none makes it fail (each interleaving one refuses, another
// refuses too); removed in pairs (store+lock, store+source) they do. The
// scripts of modelcases_test.go show each such interleaving, and
// TestTransferScripts (run by make test) checks that it fails with its
// pair removed and holds with either one removed;
// TestTransferModelMutations checks that the random model finds each.
// The fences of items (from_seq, departures, hold_items, rejoin_evict,
// door_fence) each fail the model's count of the store's items when
// removed alone; the door fence backs up adopt_evict (a cut-off host's
// Area a character left by the door is refused at adoption by its
// epoch). By hand (each must fail):
//
//	go test -run '^TestTransferModel$' ./director/ -ley.mutate=settling -rapid.nofailfile
//	go test -run '^TestTransferModel$' ./director/ -ley.mutate=store_epoch+account_lock -rapid.checks=2000 -rapid.nofailfile
//	go test -run TestTransferModelMutations -v ./director/

var (
	modelMutation = flag.String("ley.mutate", "", "transfer model: remove fences ("+strings.Join(modelFences, ", ")+"; several joined by +); the model must then fail")
	modelLog      = flag.Bool("ley.modellog", false, "transfer model: log the director's and hosts' logs to stderr")
	modelTrace    = flag.Bool("ley.modeltrace", false, "transfer model: log each run's last steps")
)

// The generator's actions, repeated by weight. rapid draws an index
// biased towards the small ones (and shrinks towards them), so the
// common, harmless actions come first and the faults after them.
var modelActions = func() []string {
	var out []string
	for _, a := range []struct {
		name   string
		weight int
	}{
		{"deliver", 10}, {"player", 8}, {"time", 5}, {"deliver_all", 2},
		{"host_start", 2}, {"director_start", 2}, {"director_arm", 3},
		{"client_drop", 1}, {"door", 1}, {"link_reset", 1}, {"host_crash", 1}, {"director_crash", 1},
		{"deliver", 4}, // last: an index drawn past the end lands here
	} {
		for range a.weight {
			out = append(out, a.name)
		}
	}
	return out
}()

var modelDelays = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond, time.Second, 3 * time.Second, 10 * time.Second}

// modelWrites are the store writes a director crash can be armed on.
var modelWrites = []string{"BeginTransfer", "MoveCharacter", "RejectTransfer", "BeginIncarnation", "WriteSnapshot", "ExpireTransfers", "WriteSnapshot/between"}

// swarm draws the run's faults (swarm testing): each kind of fault is in
// or out of the run, so that a run with few kinds makes likely the long
// sequences of one kind that some interleavings need. Restarts come with
// the faults they undo.
func swarm(rt *rapid.T) []string {
	off := map[string]bool{}
	for _, f := range []string{"host_crash", "link_reset", "client_drop", "door", "director_crash", "director_arm"} {
		off[f] = !rapid.Bool().Draw(rt, "with "+f)
	}
	off["host_start"] = off["host_crash"] && off["link_reset"]
	off["director_start"] = off["director_crash"] && off["director_arm"]
	var out []string
	for _, a := range modelActions {
		if !off[a] {
			out = append(out, a)
		}
	}
	return out
}

// randomStep takes one step the generator chooses, then checks.
func (m *model) randomStep(rt *rapid.T, actions []string) {
	m.step++
	slot := func() int { return rapid.IntRange(0, len(m.hosts)-1).Draw(rt, "slot") }
	action := rapid.SampledFrom(actions).Draw(rt, "action")
	m.count(func(s *modelStats) { s.actions[action]++ })
	switch action {
	case "deliver":
		if qs := m.queues(); len(qs) > 0 {
			m.deliver(qs[rapid.IntRange(0, len(qs)-1).Draw(rt, "queue")])
		}
	case "deliver_all":
		m.drain()
	case "time":
		m.advance(rapid.SampledFrom(modelDelays).Draw(rt, "delay"))
	case "player":
		var ready []*mPlayer // the players with something to do
		for _, p := range m.players {
			if p.state != pJoining && !(p.state == pOnline && p.transit) && !(p.state == pOffline && m.dir == nil) {
				ready = append(ready, p)
			}
		}
		if len(ready) == 0 {
			break
		}
		switch p := ready[rapid.IntRange(0, len(ready)-1).Draw(rt, "player")]; p.state {
		case pOffline:
			m.startJoin(p)
		case pGranted:
			m.hello(p)
		case pOnline:
			// Walk to the portal, place or take back a chair (its
			// inventory's first slot holds them until it is empty),
			// craft planks at its cauldron, or trade a chair with a
			// player beside it (open and offer, or confirm).
			switch rapid.IntRange(0, 5).Draw(rt, "does") {
			case 0:
				m.walk(p)
			case 3:
				m.craft(p, ecs.Dir(rapid.IntRange(0, int(ecs.NumDirs)-1).Draw(rt, "dir")))
			case 4:
				m.trade(p)
			case 5:
				m.confirmTrade(p)
			default:
				m.build(p, rapid.Bool().Draw(rt, "take"), ecs.Dir(rapid.IntRange(0, int(ecs.NumDirs)-1).Draw(rt, "dir")))
			}
		}
	case "host_crash":
		if h := m.hosts[slot()]; h != nil && h.alive {
			m.crashHost(h)
		}
	case "host_start":
		switch i := slot(); {
		case m.hosts[i] == nil || !m.hosts[i].alive:
			m.startHost(i)
		case m.hosts[i].link == nil && m.dir != nil:
			m.connect(m.hosts[i])
		}
	case "client_drop":
		var online []*mPlayer
		for _, p := range m.players {
			if p.state == pOnline {
				online = append(online, p)
			}
		}
		if len(online) > 0 {
			m.drop(online[rapid.IntRange(0, len(online)-1).Draw(rt, "dropper")])
		}
	case "door":
		// An offline player (whose body may still wait for a resume where
		// it dropped) joins the other Area by the door: its body there
		// must go before it is let in.
		var offline []*mPlayer
		for _, p := range m.players {
			if p.state == pOffline && m.dir != nil {
				offline = append(offline, p)
			}
		}
		if len(offline) > 0 {
			m.startJoinElsewhere(offline[rapid.IntRange(0, len(offline)-1).Draw(rt, "walker")])
		}
	case "link_reset":
		if h := m.hosts[slot()]; h != nil && h.link != nil {
			m.tracef("the connection of %s breaks", h.name)
			m.cut(h.link)
			m.count(func(s *modelStats) { s.linkResets++ })
		}
	case "director_crash":
		if m.dir != nil {
			m.crashDirector("between steps")
		}
	case "director_arm":
		if m.dir != nil {
			op, n, after := rapid.SampledFrom(modelWrites).Draw(rt, "write"), rapid.IntRange(1, 2).Draw(rt, "nth"), rapid.Bool().Draw(rt, "after")
			m.dir.st.mu.Lock()
			m.dir.st.arm = &modelArm{op: op, n: n, after: after}
			m.dir.st.mu.Unlock()
			// Traced from the drawn values: once armed, the director's
			// writes count the arm down under st.mu, on its own goroutines.
			m.tracef("director %d will crash at its %s #%d (after=%v)", m.dir.gen, op, n, after)
		}
	case "director_start":
		if m.dir == nil {
			m.startDirector()
		}
	}
	m.check()
}

// setMutation removes one fence (or none, for ""), before any director or
// host of the run starts.
func setMutation(mutation string) {
	transfer.NoSourceEpoch = mutated(mutation, mutSourceEpoch)
	transfer.NoAccountLock = mutated(mutation, mutAccountLock)
	transfer.NoFromSeq = mutated(mutation, mutFromSeq)
	noJoinRecheck = mutated(mutation, mutJoinRecheck)
	registry.NoAdoptEvict = mutated(mutation, mutAdoptEvict)
	registry.NoJoinEvict = mutated(mutation, mutJoinEvict)
	registry.NoCrossingEvict = mutated(mutation, mutCrossEvict)
	registry.NoAdoptLock = mutated(mutation, mutAdoptLock)
	area.SetSettling(!mutated(mutation, mutSettling))
	area.SetDepartures(!mutated(mutation, mutDepartures))
	area.SetHoldItems(!mutated(mutation, mutHoldItems))
	noRejoinEvict = mutated(mutation, mutRejoinEvict)
	noDoorFence = mutated(mutation, mutDoorFence)
	sqlcore.NoSnapshotAreaCheck = mutated(mutation, mutAreaCheck)
	sqlcore.SplitSnapshot = nil
	if mutated(mutation, mutSnapshotTx) {
		sqlcore.SplitSnapshot = between
	}
}

// modelRun prepares one run of the model: a database folder of its own
// and the mutation's fences removed. cleanup puts the fences back and
// removes the folder.
func modelRun(t *testing.T, prefix, mutation string) (dir string, cleanup func()) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	setMutation(mutation)
	return dir, func() {
		setMutation("")
		os.RemoveAll(dir)
	}
}

// runModel is one run of the model: its steps drawn by rt, then
// quiescence and the final checks.
func runModel(t *testing.T, rt *rapid.T, template string, slots int, mutation string, agg *modelStats) {
	dir, cleanup := modelRun(t, "ley-model", mutation)
	defer cleanup()
	inBubble(t, func() {
		m := newModel(rt, dir, mutation)
		m.hosts = make([]*mHost, slots)
		defer m.close()
		m.start(template)
		actions := swarm(rt)
		steps := rapid.IntRange(40, 400).Draw(rt, "steps")
		for range steps {
			m.randomStep(rt, actions)
		}
		m.quiesce()
		m.count(func(s *modelStats) { s.runs++; s.steps += m.step })
		if *modelTrace {
			t.Logf("run of %d steps:\n  %s", m.step, strings.Join(m.trace, "\n  "))
		}
		agg.add(m.stats)
	})
}

func TestTransferModel(t *testing.T) {
	if *modelMutation != "" {
		for _, f := range strings.Split(*modelMutation, "+") {
			if !slices.Contains(modelFences, f) {
				t.Fatalf("-ley.mutate=%q: %q is none of %v", *modelMutation, f, modelFences)
			}
		}
	}
	template := modelTemplate(t)
	var agg modelStats
	rapid.Check(t, func(rt *rapid.T) { runModel(t, rt, template, modelHostSlots, *modelMutation, &agg) })
	t.Logf("transfer model: %v", &agg)
	// The model is only as good as what it makes happen: crossings that
	// complete. Pending transfers a crash left behind, which
	// reconciliation rolls back, are rarer: a random run set may draw none
	// (100 runs under load drew none once), so the scripted cases
	// (TestTransferScripts: "recovered late", "expiry") are what prove
	// that path, each asserting its rollback; here it is only reported.
	if agg.crossings == 0 || agg.arrivals == 0 {
		t.Errorf("no crossing completed in %d runs", agg.runs)
	}
	// And what the crossings carry: chairs placed in an Area and stored,
	// and planks crafted (each craft attempt of a run succeeds unless its
	// square is taken: dozens succeed in 50 runs).
	if agg.runs >= 50 && agg.placed == 0 {
		t.Errorf("no placed item reached the store in %d runs", agg.runs)
	}
	if agg.runs >= 50 && agg.crafted == 0 {
		t.Errorf("no crafted plank reached the store in %d runs", agg.runs)
	}
	// And trades: both players of one confirming, the swap due at the
	// next tick (about one run in five draws it).
	if agg.runs >= 50 && agg.tradesConfirmed == 0 {
		t.Errorf("no trade was confirmed by both its players in %d runs", agg.runs)
	}
}

// failRecorder is a rapid.TB that records a failure instead of failing
// the test: the mutation check expects one.
type failRecorder struct {
	*testing.T
	mu     sync.Mutex
	failed bool
	msg    strings.Builder
}

func (r *failRecorder) fail(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	if r.msg.Len() < 20000 {
		r.msg.WriteString(s + "\n")
	}
}

func (r *failRecorder) Logf(string, ...any)            {}
func (r *failRecorder) Log(...any)                     {}
func (r *failRecorder) Errorf(format string, a ...any) { r.fail(fmt.Sprintf(format, a...)) }
func (r *failRecorder) Error(a ...any)                 { r.fail(fmt.Sprint(a...)) }
func (r *failRecorder) Fatalf(format string, a ...any) { r.fail(fmt.Sprintf(format, a...)) }
func (r *failRecorder) Fatal(a ...any)                 { r.fail(fmt.Sprint(a...)) }
func (r *failRecorder) FailNow()                       { r.fail("FailNow") }
func (r *failRecorder) Fail()                          { r.fail("Fail") }
func (r *failRecorder) Failed() bool                   { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }

// modelMutationChecks are the fences TestTransferModelMutations removes,
// and with how many host slots the random model runs for each. A third
// host lets an Area be made live again elsewhere while its old host,
// cut off, still runs it: the zombie incarnation the director's source
// check and the store's epoch check both refuse. (Two slots are the
// default because with one Area per host, placement never has to choose
// between two empty hosts, so runs replay.)
var modelMutationChecks = []struct {
	mutation string
	slots    int
}{
	{mutSettling, 2},
	{mutJoinEvict, 2},
	// The door fence ends the incarnation of an Area a character left by
	// the door while its host was away, so that host's Area is refused at
	// adoption by its epoch: each backs the adoption's eviction up.
	{mutAdoptEvict + "+" + mutDoorFence, 2},
	{mutStoreEpoch + "+" + mutAccountLock + "+" + mutJoinRecheck, 2},
	{mutStoreEpoch + "+" + mutSourceEpoch, 3},
	// The fences of items: each alone, found by the count of the store's
	// items after every step.
	{mutFromSeq, 2},
	{mutDepartures, 2},
	{mutHoldItems, 2},
	{mutRejoinEvict, 2},
	{mutDoorFence, 2},
	{mutSnapshotTx, 2},
}

// TestTransferModelMutations removes fences of the protocol and expects
// the random model to fail: a fence whose removal the model cannot tell
// is one it does not test. It runs up to LEY_MUTATION_CHECKS runs per
// mutation (default 5000), stopping at the first failure; each is found
// within a few hundred runs (seconds). It needs thousands of runs, so it
// runs without the race detector (make test runs the suite with it:
// TestTransferScripts is the same check there, by script):
//
//	go test -run TestTransferModelMutations -v ./director/
//
// Each fence alone: removing settling makes the model fail. Removing the
// store's epoch check, the director's source check, the account lock or
// the join's second read of the character alone does not: each of the
// interleavings it refuses is refused by another fence too (see the
// fence scripts in modelcases_test.go, which show each pair or triple),
// so the check removes them together.
func TestTransferModelMutations(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the mutation check runs the model thousands of times: run it without -race or -short")
	}
	checks := "5000"
	if s := os.Getenv("LEY_MUTATION_CHECKS"); s != "" {
		checks = s
	}
	for name, v := range map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "1ms", "rapid.checks": checks} {
		old := flag.Lookup(name).Value.String()
		if err := flag.Set(name, v); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = flag.Set(name, old) })
	}
	template := modelTemplate(t)
	for _, mc := range modelMutationChecks {
		mut := mc.mutation
		t.Run(mut, func(t *testing.T) {
			rec := &failRecorder{T: t}
			var agg modelStats
			rapid.Check(rec, func(rt *rapid.T) { runModel(t, rt, template, mc.slots, mc.mutation, &agg) })
			if !rec.failed {
				t.Errorf("with the %s fence removed, the model still passes (%v)", mut, &agg)
				return
			}
			msg := rec.msg.String()
			if i := strings.Index(msg, "MODEL: "); i >= 0 {
				msg = msg[i:]
			}
			if i := strings.Index(msg, "\nstate:"); i >= 0 {
				msg = msg[:i]
			}
			t.Logf("as expected, the model fails without %s after %d runs: %s", mut, agg.runs+1, msg)
		})
	}
}
