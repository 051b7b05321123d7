//go:build leytest

package director

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leyworks/ley/area"
	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/director/census"
	"github.com/leyworks/ley/director/transfer"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlite"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/persist/blob"
)

// The simulated realm the transfer model tests run (model_test.go): the
// real director (its control-channel server, portal handlers, joins and
// reconciliation, on a real SQLite store) and real area hosts (area.Sim:
// the hosts' own Areas, crossing state machine, grants and persistence),
// in one process, inside a testing/synctest bubble so that every clock is
// fake and "everything has settled" (synctest.Wait) is well defined. They
// talk over net.Pipe control connections whose frames the test holds in a
// bus: one FIFO queue per direction of each connection, delivered one
// message at a time in the order the test chooses (a connection keeps its
// order, as TCP does; different connections interleave freely), and lost
// when the connection ends. Crashes are real losses of memory: a crashed
// host's Areas are gone, a crashed director is replaced by a fresh
// Director on the same database, and what the dead one still tries to
// write or send goes nowhere.

const (
	modelHostKey         = "model-host-key"
	modelHostSlots       = 2 // host processes (one Area each: placement is forced)
	modelPlayers         = 3
	modelChairs          = 4               // each character's chairs at the start: it places and takes them back
	modelCauldronSlot    = 1               // the inventory slot of each character's cauldron at the start
	modelWoodSlot        = 2               // and of its wood (4: two crafts of planks)
	modelTransferTimeout = 6 * time.Second // the hosts' crossing timeout (the director's window is 2 s shorter)
	modelGrantTTL        = 20 * time.Second
	modelJoinTimeout     = 5 * time.Second
	modelPersistEvery    = 10 * time.Second
	modelResumeGrace     = 8 * time.Second
	modelTraceLen        = 300
)

// The fences the model test's mutation check removes (alone, or several
// joined by "+"): with them gone, the model must fail.
const (
	mutStoreEpoch  = "store_epoch"  // the store's epoch check of a crossing's source (MoveCharacter's FromEpoch)
	mutSourceEpoch = "source_epoch" // the director's epoch check of a portal_out's sender (noSourceEpoch)
	mutAccountLock = "account_lock" // a crossing holding its account's lock against joins (noAccountLock)
	mutJoinRecheck = "join_recheck" // a join reading the character again after its evictions (noJoinRecheck)
	mutAdoptEvict  = "adopt_evict"  // a re-registering host letting go of the bodies of characters the store has elsewhere (noAdoptEvict)
	mutJoinEvict   = "join_evict"   // a join evicting the character's bodies elsewhere first (noJoinEvict)
	mutCrossEvict  = "cross_evict"  // an adoption evicting even a crossing body of a character the store has elsewhere (noCrossingEvict)
	mutAdoptLock   = "adopt_lock"   // an adoption holding the account locks of the bodies it adopts (noAdoptLock)
	mutSettling    = "settling"     // the hosts' asking on after a crossing timed out (area.SetSettling)
	mutFromSeq     = "from_seq"     // a crossing's move only once the source's snapshot at the portal is stored (transfer.NoFromSeq, MoveCharacter's FromSeq)
	// The fences of items (docs/items.md): what the store holds is counted
	// after every step, so removing one makes an item appear twice or go.
	mutDepartures  = "departures"   // a departed body's final state in every snapshot until one holding it is acked (area.SetDepartures)
	mutHoldItems   = "hold_items"   // a body whose crossing is settling changes no items (area.SetHoldItems)
	mutRejoinEvict = "rejoin_evict" // a join into the character's own Area evicts its body there first (noRejoinEvict)
	mutDoorFence   = "door_fence"   // a move by the door out of an Area no host runs ends that incarnation (noDoorFence)
	mutSnapshotTx  = "snapshot_tx"  // a snapshot's blob and characters in one transaction (sqlcore.SplitSnapshot)
	mutAreaCheck   = "area_check"   // a snapshot writes a character only where its row names the Area (sqlcore.NoSnapshotAreaCheck)
)

var modelFences = []string{mutStoreEpoch, mutSourceEpoch, mutAccountLock, mutSettling, mutJoinRecheck, mutAdoptEvict, mutJoinEvict, mutCrossEvict, mutAdoptLock, mutFromSeq,
	mutDepartures, mutHoldItems, mutRejoinEvict, mutDoorFence, mutSnapshotTx, mutAreaCheck}

// mutated reports whether mutation removes fence.
func mutated(mutation, fence string) bool {
	return slices.Contains(strings.Split(mutation, "+"), fence)
}

// The portals of the model's two Areas (A is areas[0], B areas[1]): a
// square of each leads next to the other's portal.
var modelPortals = [2]PortalRule{{X: 5, Y: 5, ToX: 2, ToY: 3}, {X: 2, Y: 2, ToX: 5, ToY: 4}}

// errModelCrash is what a crashed director's store calls return.
var errModelCrash = errors.New("model: the director crashed")

// modelStats counts what the model runs did, over every run of a test.
type modelStats struct {
	mu                  sync.Mutex
	runs, steps         int
	crossings           int // players moved out through a portal (portal_moved)
	arrivals            int // of those, players that said hello in the destination
	restored            int // crossings that ended with the body back on its from-square
	results             map[string]int
	hostCrashes         int
	linkResets          int
	directorCrashes     map[string]int // by crash point
	expired             int            // pending transfers rolled back by reconciliation
	rejectedLate        int            // pending transfers found past their window and rejected
	joins, joinFailures int
	maxBus              int
	actions             map[string]int
	placed              int   // item stacks the store held placed in an Area, the most at one check
	crafted             int64 // planks the store's ledgers record made: a run's most at one check, summed over runs
	tradeConfirms       int   // confirmations of open trades
	tradesConfirmed     int   // confirm actions in which both players of a trade confirmed: swaps due at the next tick
	counted             int   // store item counts checked
}

func (s *modelStats) add(o *modelStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	s.runs += o.runs
	s.steps += o.steps
	s.crossings += o.crossings
	s.arrivals += o.arrivals
	s.restored += o.restored
	s.hostCrashes += o.hostCrashes
	s.linkResets += o.linkResets
	s.expired += o.expired
	s.rejectedLate += o.rejectedLate
	s.joins += o.joins
	s.joinFailures += o.joinFailures
	s.maxBus = max(s.maxBus, o.maxBus)
	s.placed = max(s.placed, o.placed)
	s.crafted += o.crafted
	s.tradesConfirmed += o.tradesConfirmed
	s.tradeConfirms += o.tradeConfirms
	s.counted += o.counted
	if s.results == nil {
		s.results, s.directorCrashes, s.actions = map[string]int{}, map[string]int{}, map[string]int{}
	}
	for k, v := range o.actions {
		s.actions[k] += v
	}
	for k, v := range o.results {
		s.results[k] += v
	}
	for k, v := range o.directorCrashes {
		s.directorCrashes[k] += v
	}
}

func (s *modelStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := func(m map[string]int) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		var b strings.Builder
		for _, k := range ks {
			fmt.Fprintf(&b, " %s=%d", k, m[k])
		}
		return b.String()
	}
	return fmt.Sprintf("runs=%d steps=%d crossings=%d arrivals=%d restored=%d joins=%d (failed %d) host_crashes=%d link_resets=%d "+
		"expired_by_reconcile=%d rejected_past_window=%d max_queue=%d item_counts=%d most_placed=%d planks_crafted=%d trade_confirms=%d (both: %d)\n  portal results:%s\n  director crashes:%s\n  actions:%s",
		s.runs, s.steps, s.crossings, s.arrivals, s.restored, s.joins, s.joinFailures, s.hostCrashes, s.linkResets,
		s.expired, s.rejectedLate, s.maxBus, s.counted, s.placed, s.crafted, s.tradeConfirms, s.tradesConfirmed, keys(s.results), keys(s.directorCrashes), keys(s.actions))
}

// modelArm is a director crash armed on a store write: at the n-th call
// of op, just before it takes effect or just after.
type modelArm struct {
	op    string
	n     int
	after bool
}

// modelStore is a director incarnation's view of the database: the real
// store, whose writes fail once the incarnation crashed (armed on a write,
// or killed between steps), so that nothing the dead director still runs
// changes anything.
type modelStore struct {
	store.Store
	m    *model
	dead atomic.Bool
	mu   sync.Mutex // guards arm
	arm  *modelArm
}

func (s *modelStore) write(op string, do func() error) error {
	if s.dead.Load() {
		return errModelCrash
	}
	s.mu.Lock()
	crash, after := false, false
	if a := s.arm; a != nil && a.op == op {
		if a.n--; a.n == 0 {
			crash, after = true, a.after
			s.arm = nil
		}
	}
	s.mu.Unlock()
	if crash && !after {
		s.die(op + "/before")
		return errModelCrash
	}
	err := do()
	if crash {
		s.die(op + "/after")
		return errModelCrash
	}
	return err
}

func (s *modelStore) die(point string) {
	if s.dead.CompareAndSwap(false, true) {
		s.m.died.Store(&point)
	}
}

func (s *modelStore) Close() error { return nil } // the database outlives its directors

func (s *modelStore) BeginTransfer(ctx context.Context, t store.Transfer) (out store.Transfer, err error) {
	err = s.write("BeginTransfer", func() (err error) { out, err = s.Store.BeginTransfer(ctx, t); return err })
	return out, err
}

func (s *modelStore) MoveCharacter(ctx context.Context, t store.Transfer, now time.Time) (out store.Transfer, err error) {
	if mutated(s.m.mutation, mutStoreEpoch) {
		t.FromEpoch = 0 // the fence removed: the move ignores the source's incarnation
	}
	if mutated(s.m.mutation, mutFromSeq) {
		t.FromSeq = 0 // the fence removed: the move ignores whether the source's snapshot at the portal is stored
	}
	err = s.write("MoveCharacter", func() (err error) { out, err = s.Store.MoveCharacter(ctx, t, now); return err })
	return out, err
}

func (s *modelStore) RejectTransfer(ctx context.Context, id store.TransferID, r store.TransferResult) (out store.Transfer, err error) {
	err = s.write("RejectTransfer", func() (err error) {
		before, _ := s.Store.Transfer(ctx, id)
		out, err = s.Store.RejectTransfer(ctx, id, r)
		if err == nil && before.Status == store.TransferPending && r == store.ResultTimeout {
			s.m.count(func(st *modelStats) { st.rejectedLate++ })
		}
		return err
	})
	return out, err
}

func (s *modelStore) BeginIncarnation(ctx context.Context, a store.AreaID, placement store.TokenHash) (out store.Epoch, err error) {
	err = s.write("BeginIncarnation", func() (err error) { out, err = s.Store.BeginIncarnation(ctx, a, placement); return err })
	return out, err
}

func (s *modelStore) WriteSnapshot(ctx context.Context, snap store.Snapshot) (out store.SnapshotResult, err error) {
	ctx = context.WithValue(ctx, modelStoreKey{}, s) // for the split snapshot's crash point (between)
	err = s.write("WriteSnapshot", func() (err error) { out, err = s.Store.WriteSnapshot(ctx, snap); return err })
	return out, err
}

// WriteSnapshots is a group commit of snapshots: armed as a WriteSnapshot
// (the director dies before it, or after its commit), one write for all.
func (s *modelStore) WriteSnapshots(ctx context.Context, snaps []store.Snapshot) (out []store.SnapshotWrite, err error) {
	ctx = context.WithValue(ctx, modelStoreKey{}, s)
	err = s.write("WriteSnapshot", func() (err error) { out, err = s.Store.WriteSnapshots(ctx, snaps); return err })
	return out, err
}

// modelStoreKey keys the modelStore a WriteSnapshot's context carries.
type modelStoreKey struct{}

// between is the crash point of a snapshot written in two transactions
// (the snapshot_tx mutation, sqlcore.SplitSnapshot): the director dies
// there when armed on "WriteSnapshot/between", its Area's blob stored and
// its characters' states not.
func between(ctx context.Context) error {
	s, _ := ctx.Value(modelStoreKey{}).(*modelStore)
	if s == nil {
		return nil
	}
	if s.dead.Load() {
		return errModelCrash
	}
	s.mu.Lock()
	crash := false
	if a := s.arm; a != nil && a.op == "WriteSnapshot/between" {
		if a.n--; a.n == 0 {
			crash, s.arm = true, nil
		}
	}
	s.mu.Unlock()
	if crash {
		s.die("WriteSnapshot/between")
		return errModelCrash
	}
	return nil
}

func (s *modelStore) EnsureCharacter(ctx context.Context, a store.AccountID, home store.AreaID, now time.Time) (c store.Character, created bool, err error) {
	err = s.write("EnsureCharacter", func() (err error) { c, created, err = s.Store.EnsureCharacter(ctx, a, home, now); return err })
	return c, created, err
}

func (s *modelStore) ExpireTransfers(ctx context.Context, now time.Time) (out []store.Transfer, err error) {
	err = s.write("ExpireTransfers", func() (err error) {
		out, err = s.Store.ExpireTransfers(ctx, now)
		s.m.count(func(st *modelStats) { st.expired += len(out) })
		return err
	})
	return out, err
}

func (s *modelStore) PruneTransfers(ctx context.Context, olderThan time.Time) (n int, err error) {
	err = s.write("PruneTransfers", func() (err error) { n, err = s.Store.PruneTransfers(ctx, olderThan); return err })
	return n, err
}

// mDirector is one director incarnation.
type mDirector struct {
	gen    int
	d      *Director
	st     *modelStore
	ctx    context.Context
	cancel context.CancelFunc
}

// mHost is one host process (an incarnation of a host slot).
type mHost struct {
	slot, gen int
	name, url string
	sim       *area.Sim
	alive     bool   // guarded by model.mu
	link      *mLink // guarded by model.mu
	stop      context.CancelFunc
}

// mLink is one control connection between a host and a director, with
// the messages in flight each way.
type mLink struct {
	id     int
	host   *mHost
	dir    *mDirector
	nc     net.Conn      // the host's end of the pipe
	conn   *control.Conn // over nc: the host's messages are written here
	up     bool          // guarded by model.mu
	toDir  []control.Message
	toHost []control.Message // guarded by model.mu, as toDir
}

// player states, as the client sees itself.
type pState int

const (
	pOffline pState = iota // no body it knows of: it joins by the door
	pJoining               // a join in flight at the director
	pGranted               // holding a grant (a join's or portal_moved's) to say hello with
	pOnline                // driving its body in host's Area area
)

var pStateNames = [...]string{"offline", "joining", "granted", "online"}

type joinResult struct {
	ans *JoinAnswer
	err *apiError
}

// mPlayer is a simulated client.
type mPlayer struct {
	acct    store.AccountID
	state   pState
	host    *mHost // online: where its body is
	area    uint32 // online or granted: the Area
	url     string // granted: the host to say hello to
	grant   string
	joinID  uint64
	join    chan joinResult
	transit bool // its body was in transit at the last look
	portal  bool // granted: the grant came with portal_moved
}

func (p *mPlayer) String() string {
	s := fmt.Sprintf("player %d %s", p.acct, pStateNames[p.state])
	switch p.state {
	case pOnline:
		s += fmt.Sprintf(" in area %d on %s", p.area, p.host.name)
	case pGranted:
		s += fmt.Sprintf(" with a grant for area %d at %s", p.area, p.url)
	}
	return s
}

// modelTB fails a model run: a *rapid.T, or a test's *testing.T.
type modelTB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// model is one simulated realm.
type model struct {
	tb       modelTB
	ctx      context.Context
	db       store.Store
	log      *slog.Logger
	mutation string
	dbPath   string
	stats    *modelStats

	areas   [2]store.AreaID
	players []*mPlayer
	hosts   []*mHost // by slot
	hostGen int
	dir     *mDirector // nil while no director runs
	dirGen  int
	links   []*mLink
	died    atomic.Pointer[string] // set by a dying modelStore: its crash point

	mu     sync.Mutex // guards the links' queues and up, hosts' alive and link
	lastOK map[uint64]*control.PortalResult
	trace  []string
	step   int
	checks int // step checks done
}

// modelTemplate builds, once per test, a migrated database holding the
// realm the models start from: Areas A and B (8x8, open floor) linked by
// portals, and modelPlayers players, members of both, their characters in
// A, each carrying modelChairs chairs (seedItems). Each run copies it.
func modelTemplate(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "template.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC) // before the bubble's clock starts
	owner, err := st.CreateAccount(ctx, store.NewAccount{Email: "owner@model.ley", Name: "owner", Created: at})
	if err != nil {
		t.Fatal(err)
	}
	var ids [2]store.AreaID
	for i := range ids {
		a, err := st.CreateArea(ctx, store.NewArea{Owner: owner.ID, Kind: "village", Template: EmptyTemplate, Name: fmt.Sprint("AB"[i : i+1]), W: 8, H: 8, Created: at})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = a.ID
	}
	for i, id := range ids {
		p := modelPortals[i]
		p.ToArea = uint32(ids[1-i])
		b, _ := json.Marshal(Rules{Portals: []PortalRule{p}})
		if err := st.SetAreaRules(ctx, id, b); err != nil {
			t.Fatal(err)
		}
	}
	var players []store.AccountID
	for i := 0; i < modelPlayers; i++ {
		p, err := st.CreateAccount(ctx, store.NewAccount{Email: fmt.Sprintf("p%d@model.ley", i), Name: fmt.Sprintf("p%d", i), Created: at})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if err := st.AddMember(ctx, id, p.ID, store.RoleMember, at); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := st.EnsureCharacter(ctx, p.ID, ids[0], at); err != nil {
			t.Fatal(err)
		}
		players = append(players, p.ID)
	}
	seedItems(t, st, ids[0], players, at)
	return path
}

// seedItems gives each of players modelChairs chairs, minted in Area a as
// the real host mints them: a's first snapshot stores its ledger (every
// chair created there) with the characters' states in one write, so the
// census finds every item once from the start.
func seedItems(t testing.TB, st store.Store, a store.AreaID, players []store.AccountID, at time.Time) {
	t.Helper()
	ctx := context.Background()
	p := modelPortals[0]
	b, err := build.Area(content.Default(), build.Spec{ID: ecs.AreaID(a), Kind: "village", Template: build.TemplateEmpty, W: 8, H: 8,
		TickRate: 20, CellSize: 8, Portals: []build.Square{{X: p.X, Y: p.Y}}})
	if err != nil {
		t.Fatal(err)
	}
	var chars []store.CharacterState
	for i, acct := range players {
		x, y := int32(1+i), int32(6)
		e, err := b.Area.SpawnPlayer(uint64(acct), x, y)
		if err != nil {
			t.Fatal(err)
		}
		// Slot 0 its chairs, modelCauldronSlot a cauldron and
		// modelWoodSlot wood for two crafts.
		if !b.Items.Give(b.Area, e, []content.Yield{{Item: "chair", Count: modelChairs}, {Item: "cauldron", Count: 1}, {Item: "wood", Count: 4}}) {
			t.Fatal("seedItems: the chairs, cauldron and wood do not fit")
		}
		state, err := b.Items.SaveCharacter(e)
		if err != nil {
			t.Fatal(err)
		}
		chars = append(chars, store.CharacterState{Account: acct, X: x, Y: y, State: state})
	}
	blob, err := b.Save()
	if err != nil {
		t.Fatal(err)
	}
	epoch, err := st.BeginIncarnation(ctx, a, store.TokenHash{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.WriteSnapshot(ctx, store.Snapshot{Area: a, Epoch: epoch, Seq: 1, Blob: blob, Characters: chars, At: at})
	if err != nil || !res.Applied || res.Characters != len(chars) {
		t.Fatalf("seedItems: the first snapshot: %+v, %v", res, err)
	}
}

// inBubble runs f in a synctest bubble and re-raises, outside it, a panic
// f raised (a rapid.T's failure is one): rapid sees its own failure, and
// the bubble's goroutines were all stopped first (f's deferred cleanup).
//
// The first failure of each test is also logged with where it was
// raised: rapid tells a failure it could replay from one it could not by
// the place of the panic, which for every failure is here, so when a
// run does not replay (its goroutines' order is not the one drawn), what
// rapid reports is the replay's failure, not the one found.
func inBubble(t *testing.T, f func()) {
	var p any
	var stack []byte
	failed := false
	synctest.Test(t, func(*testing.T) {
		defer func() {
			if r := recover(); r != nil {
				p, failed, stack = r, true, debug.Stack()
			}
		}()
		f()
	})
	if failed {
		if _, logged := firstFailure.LoadOrStore(t, true); !logged && !strings.HasPrefix(fmt.Sprintf("%T", p), "rapid.invalidData") {
			t.Logf("first failure found (rapid may report a different one if the run does not replay): %v\n%s", p, stack)
		}
		panic(p)
	}
}

// firstFailure holds the tests whose first failure inBubble logged.
var firstFailure sync.Map

// newModel returns a model that has not started (see start): its
// deferred close stops whatever start got to.
func newModel(tb modelTB, dir, mutation string) *model {
	logger := slog.New(slog.DiscardHandler)
	if modelLog != nil && *modelLog {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	m := &model{tb: tb, ctx: context.Background(), log: logger, mutation: mutation, dbPath: filepath.Join(dir, "model.db"),
		stats: &modelStats{results: map[string]int{}, directorCrashes: map[string]int{}, actions: map[string]int{}}, lastOK: map[uint64]*control.PortalResult{}}
	for i := range m.areas {
		m.areas[i] = store.AreaID(i + 1)
	}
	for i := 0; i < modelPlayers; i++ {
		m.players = append(m.players, &mPlayer{acct: store.AccountID(i + 2)})
	}
	m.hosts = make([]*mHost, modelHostSlots)
	return m
}

// start opens a copy of the template database and starts a director and
// the hosts: A is made live on host 0 (before host 1 registers, so the
// placement is forced) with player 0 in it.
func (m *model) start(template string) {
	b, err := os.ReadFile(template)
	if err != nil {
		m.tb.Fatal(err)
	}
	if err := os.WriteFile(m.dbPath, b, 0o600); err != nil {
		m.tb.Fatal(err)
	}
	if m.db, err = sqlite.Open(m.ctx, m.dbPath); err != nil {
		m.tb.Fatal(err)
	}
	m.startDirector()
	m.startHost(0)
	m.startJoin(m.players[0])
	m.settleJoins()
	m.startHost(1)
	m.settle()
	m.check()
}

func (m *model) fatalf(format string, args ...any) {
	m.mu.Lock()
	tail := m.trace
	m.mu.Unlock()
	var b strings.Builder
	for _, p := range m.players {
		fmt.Fprintf(&b, "  %v\n", p)
	}
	for _, h := range m.hosts {
		if h != nil && h.alive {
			for _, a := range h.sim.Areas() {
				fmt.Fprintf(&b, "  %s: area %d epoch %d closing=%v crossings=%d settling=%d bodies=%v\n", h.name, a.ID, a.Epoch, a.Closing, a.Crossings, a.Settling, a.Bodies)
			}
		}
	}
	for _, p := range m.players {
		if ch, err := m.db.Character(m.ctx, p.acct); err == nil {
			fmt.Fprintf(&b, "  store: player %d in area %d\n", p.acct, ch.Area)
		}
	}
	m.tb.Fatalf("MODEL: "+format+"\nstate:\n%s\nlast steps (of %d):\n  %s", append(args, b.String(), m.step, strings.Join(tail, "\n  "))...)
}

func (m *model) tracef(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.trace = append(m.trace, fmt.Sprintf("%4d ", m.step)+fmt.Sprintf(format, args...))
	if len(m.trace) > modelTraceLen {
		m.trace = m.trace[len(m.trace)-modelTraceLen:]
	}
}

func (m *model) count(f func(*modelStats)) {
	m.stats.mu.Lock()
	f(m.stats)
	m.stats.mu.Unlock()
}

func (m *model) directorConfig() Config {
	cfg := DefaultConfig()
	cfg.HTTP, cfg.Control, cfg.Metrics = "", "", ""
	cfg.HostKey = modelHostKey
	cfg.ControlInsecure = true // net.Pipe is not a local address
	cfg.Spawn.MinHosts, cfg.Spawn.MaxHosts = 0, 0
	cfg.Spawn.TransferTimeout = modelTransferTimeout
	cfg.GrantTTL = modelGrantTTL
	cfg.JoinTimeout = modelJoinTimeout
	cfg.MaxPendingGrants, cfg.JoinsPerMinute = 0, 0
	// The model's hosts (area.Sim) keep no lease, so the registry waiting
	// out a cut-off host's lease would only delay re-homing its Areas:
	// leases are off. The lease's fence is tested over real hosts (area's
	// TestSessionsEndPastTheLease, this package's
	// TestHostsInNetworkNamespaces).
	cfg.HostLease = 0
	cfg.Logger = m.log
	return cfg
}

// startDirector starts a director incarnation on the database: it leads
// at once and runs its reconciliation loop; hosts connect to it by
// connect.
func (m *model) startDirector() {
	m.dirGen++
	st := &modelStore{Store: m.db, m: m}
	d, err := New(m.directorConfig(), st)
	if err != nil {
		m.tb.Fatal(err)
	}
	d.leading.Store(true)
	// Its spawner, as Run would make it: with a rail of 0 hosts it starts
	// none, and a join that finds no room is refused at once.
	d.registry.SetStarter(d.newSpawner())
	ctx, cancel := context.WithCancel(context.Background())
	m.dir = &mDirector{gen: m.dirGen, d: d, st: st, ctx: ctx, cancel: cancel}
	go d.transfers.Reconcile(ctx)
	m.tracef("director %d starts", m.dirGen)
	synctest.Wait()
}

// crashDirector kills the running director: its store fails from now on,
// its connections end, and what was in flight on them is lost.
func (m *model) crashDirector(point string) {
	D := m.dir
	D.st.dead.Store(true)
	D.cancel()
	for _, l := range m.links {
		if l.dir == D && l.up {
			m.cut(l)
		}
	}
	m.dir = nil
	m.count(func(s *modelStats) { s.directorCrashes[point]++ })
	m.tracef("director %d crashes (%s)", D.gen, point)
	synctest.Wait()
}

// startHost starts a new host process in slot and connects it to the
// director, if one runs.
func (m *model) startHost(slot int) {
	m.hostGen++
	name := fmt.Sprintf("host%d.%d", slot, m.hostGen)
	cfg := area.DefaultConfig()
	cfg.HostKey = modelHostKey
	cfg.Director = "model"
	cfg.Name = name
	cfg.PublicURL = "ws://" + name + "/ws"
	cfg.PoolSize = 1
	cfg.TransferTimeout = modelTransferTimeout
	cfg.PersistEvery = modelPersistEvery
	cfg.ResumeGrace = modelResumeGrace
	cfg.Logger = m.log
	sim, err := area.NewSim(cfg)
	if err != nil {
		m.tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &mHost{slot: slot, gen: m.hostGen, name: name, url: cfg.PublicURL, sim: sim, alive: true, stop: cancel}
	m.hosts[slot] = h
	go sim.Run(ctx)
	go func() { // the link's writer: what the host sends goes on its connection's queue
		for {
			select {
			case msg := <-sim.Outbox():
				m.mu.Lock()
				if l := h.link; l != nil && l.up && h.alive {
					l.toDir = append(l.toDir, msg)
				}
				m.mu.Unlock()
			case <-ctx.Done():
				return
			}
		}
	}()
	m.tracef("%s starts", name)
	if m.dir != nil {
		m.connect(h)
	}
	synctest.Wait()
}

// crashHost kills a host process: its Areas and bodies are gone, its
// connection ends, and what was in flight on it is lost.
func (m *model) crashHost(h *mHost) {
	m.stopHost(h)
	m.count(func(s *modelStats) { s.hostCrashes++ })
	m.tracef("%s crashes", h.name)
	synctest.Wait()
	m.observe() // its players learn it at once: their connections broke
}

// stopHost ends a host process: its connection is cut (what was in
// flight on it is lost) and its Areas stop.
func (m *model) stopHost(h *mHost) {
	m.mu.Lock()
	h.alive = false
	l := h.link
	m.mu.Unlock()
	if l != nil {
		m.cut(l)
	}
	h.stop()
}

// connect opens a control connection from h to the running director and
// registers h on it, as the host's link does.
func (m *model) connect(h *mHost) {
	D := m.dir
	dirEnd, hostEnd := net.Pipe()
	l := &mLink{id: len(m.links), host: h, dir: D, nc: hostEnd, conn: control.NewConn(hostEnd), up: true}
	m.links = append(m.links, l)
	m.mu.Lock()
	h.link = l
	m.mu.Unlock()
	go D.d.registry.ServeConn(D.ctx, dirEnd)
	go func() { // the link's reader
		for {
			msg, err := l.conn.Recv()
			if err != nil {
				return
			}
			m.mu.Lock()
			if l.up && !D.st.dead.Load() { // a dead director sends nothing
				l.toHost = append(l.toHost, msg)
			}
			m.mu.Unlock()
		}
	}()
	if err := l.conn.Send(h.sim.Register()); err != nil {
		m.fatalf("%s: register: %v", h.name, err)
	}
	synctest.Wait()
	m.mu.Lock()
	var first control.Message
	if len(l.toHost) > 0 {
		first, l.toHost = l.toHost[0], l.toHost[1:]
	}
	m.mu.Unlock()
	if first == nil && D.st.dead.Load() {
		// The director died during the registration (its armed crash
		// fired at a store call): no answer; the host dials the next one.
		m.tracef("%s: director %d died before answering its registration", h.name, D.gen)
		m.cut(l)
		return
	}
	reg, ok := first.(*control.Registered)
	if !ok || reg.Error != "" {
		m.fatalf("%s: registration answered %#v", h.name, first)
	}
	h.sim.Linked(reg)
	m.tracef("%s connects to director %d (link %d, host id %d)", h.name, D.gen, l.id, reg.HostID)
	synctest.Wait()
}

// cut ends a connection: both ends see it closed, and what was in flight
// is lost.
func (m *model) cut(l *mLink) {
	m.mu.Lock()
	l.up = false
	l.toDir, l.toHost = nil, nil
	h := l.host
	if h.link == l {
		h.link = nil
	}
	alive := h.alive
	m.mu.Unlock()
	if alive {
		h.sim.Unlinked()
	}
	l.nc.Close()
}

// queues lists the non-empty queues, in link order: (link, to the
// director?).
func (m *model) queues() []mQueue {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []mQueue
	n := 0
	for _, l := range m.links {
		if !l.up {
			continue
		}
		if len(l.toDir) > 0 {
			out = append(out, mQueue{l, true})
		}
		if len(l.toHost) > 0 {
			out = append(out, mQueue{l, false})
		}
		n += len(l.toDir) + len(l.toHost)
	}
	if n > m.stats.maxBus {
		m.count(func(s *modelStats) { s.maxBus = max(s.maxBus, n) })
	}
	return out
}

type mQueue struct {
	l     *mLink
	toDir bool
}

// deliver hands the message at the head of q to its receiver.
func (m *model) deliver(q mQueue) {
	l := q.l
	m.mu.Lock()
	var msg control.Message
	if q.toDir {
		msg, l.toDir = l.toDir[0], l.toDir[1:]
	} else {
		msg, l.toHost = l.toHost[0], l.toHost[1:]
	}
	m.mu.Unlock()
	m.tracef("deliver %s %s -> %s: %s", map[bool]string{true: "host", false: "director"}[q.toDir], l.host.name,
		map[bool]string{true: fmt.Sprintf("director %d", l.dir.gen), false: "host"}[q.toDir], describe(msg))
	if q.toDir {
		if err := l.conn.Send(msg); err != nil {
			m.tracef("  lost: %v", err)
		}
	} else {
		if r, ok := msg.(*control.PortalResult); ok {
			key := "ok"
			if !r.OK {
				key = wire.Code(r.Code).String()
			}
			m.count(func(s *modelStats) { s.results[key]++ })
			if r.OK {
				m.lastOK[r.Account] = r
			}
		}
		l.host.sim.Deliver(msg)
	}
	synctest.Wait()
}

func describe(msg control.Message) string {
	switch m := msg.(type) {
	case *control.PortalOut:
		return fmt.Sprintf("portal_out{%.6s account %d from %d@%d to %d}", m.Transfer, m.Account, m.Area, m.Epoch, m.ToArea)
	case *control.PortalResult:
		return fmt.Sprintf("portal_result{%.6s account %d ok=%v code=%v}", m.Transfer, m.Account, m.OK, wire.Code(m.Code))
	case *control.Snapshot:
		return fmt.Sprintf("snapshot{area %d@%d seq %d chars %d}", m.Area, m.Epoch, m.Seq, len(m.Characters))
	case *control.SnapshotAck:
		return fmt.Sprintf("snapshot_ack{area %d seq %d %s}", m.Area, m.Seq, m.Error)
	case *control.SpawnArea:
		return fmt.Sprintf("spawn_area{area %d@%d}", m.Area, m.Epoch)
	case *control.AreaReady:
		return fmt.Sprintf("area_ready{area %d@%d %s}", m.Area, m.Epoch, m.Error)
	case *control.Grant:
		return fmt.Sprintf("grant{area %d account %d portal=%v}", m.Area, m.Character.Account, m.Portal)
	case *control.GrantAck:
		return fmt.Sprintf("grant_ack{area %d %s}", m.Area, m.Error)
	case *control.Presence:
		return fmt.Sprintf("presence{area %d}", m.Area)
	case *control.CloseArea:
		return fmt.Sprintf("close_area{area %d}", m.Area)
	case *control.AreaClosed:
		return fmt.Sprintf("area_closed{area %d@%d}", m.Area, m.Epoch)
	}
	return msg.Type().String()
}

// advance lets d of fake time pass: Areas tick, timers fire.
func (m *model) advance(d time.Duration) {
	m.tracef("advance %v", d)
	time.Sleep(d)
	synctest.Wait()
}

// hostByURL returns the live host serving url, or nil.
func (m *model) hostByURL(url string) *mHost {
	for _, h := range m.hosts {
		if h != nil && h.alive && h.url == url {
			return h
		}
	}
	return nil
}

// startJoin has an offline player join by the door: it asks where its
// character is (as GET /v1/me answers) and joins that Area.
func (m *model) startJoin(p *mPlayer) {
	D := m.dir
	if D == nil || p.state != pOffline {
		return
	}
	ch, err := m.db.Character(m.ctx, p.acct)
	if err != nil {
		m.fatalf("player %d: character: %v", p.acct, err)
	}
	acct, err := m.db.Account(m.ctx, p.acct)
	if err != nil {
		m.fatalf("player %d: account: %v", p.acct, err)
	}
	res := make(chan joinResult, 1)
	p.state, p.join = pJoining, res
	m.tracef("player %d joins area %d by the door", p.acct, ch.Area)
	m.count(func(s *modelStats) { s.joins++ })
	go func() {
		ans, e := D.d.join(D.ctx, acct, ch.Area)
		res <- joinResult{ans, e}
	}()
	synctest.Wait()
}

// hello has a player holding a grant say hello with it.
func (m *model) hello(p *mPlayer) {
	if p.state != pGranted {
		return
	}
	h := m.hostByURL(p.url)
	if h == nil {
		m.tracef("player %d: the host of its grant is gone", p.acct)
		p.state = pOffline
		return
	}
	code := h.sim.Hello(p.grant, p.joinID)
	m.tracef("player %d says hello in area %d on %s: %v", p.acct, p.area, h.name, code)
	if code != wire.CodeOK {
		p.state = pOffline
		return
	}
	if p.portal {
		m.count(func(s *modelStats) { s.arrivals++ })
	}
	p.state, p.host, p.transit = pOnline, h, false
	synctest.Wait()
}

// walk has an online player walk onto its Area's portal.
func (m *model) walk(p *mPlayer) {
	if p.state != pOnline || p.transit {
		return
	}
	i := slices.Index(m.areas[:], store.AreaID(p.area))
	if i < 0 {
		m.fatalf("player %d online in unknown area %d", p.acct, p.area)
	}
	m.tracef("player %d walks onto the portal of area %d", p.acct, p.area)
	p.host.sim.MoveTo(uint64(p.acct), modelPortals[i].X, modelPortals[i].Y)
	synctest.Wait()
}

// build has an online player place one of the chairs it carries on a
// square next to its body, or take back the one standing there: the items
// the crossings then carry, or leave behind, change.
func (m *model) build(p *mPlayer, take bool, dir ecs.Dir) {
	if p.state != pOnline || p.transit {
		return
	}
	kind, what := ecs.IntentPlace, "places a chair"
	if take {
		kind, what = ecs.IntentTake, "takes back a chair"
	}
	m.tracef("player %d %s to the %v in area %d", p.acct, what, dir, p.area)
	p.host.sim.Item(uint64(p.acct), ecs.Intent{Kind: kind, Dir: dir})
	synctest.Wait()
}

// craft has an online player place its cauldron on the square to dir,
// put two of its wood in it and craft: planks, when all three apply (the
// square was free, the player still had its cauldron and wood), the
// cauldron's wood destroyed and its planks minted in one step. Each of
// the three is refused, changing nothing, when it cannot apply.
func (m *model) craft(p *mPlayer, dir ecs.Dir) {
	if p.state != pOnline || p.transit {
		return
	}
	m.tracef("player %d crafts at a cauldron to the %v in area %d", p.acct, dir, p.area)
	acct := uint64(p.acct)
	p.host.sim.Item(acct, ecs.Intent{Kind: ecs.IntentPlace, Dir: dir, From: modelCauldronSlot})
	p.host.sim.Item(acct, ecs.Intent{Kind: ecs.IntentMoveItem, Dir: dir, From: modelWoodSlot, To: ecs.ContainerSlot, Count: 2})
	p.host.sim.Item(acct, ecs.Intent{Kind: ecs.IntentCraft, Dir: dir})
	synctest.Wait()
}

// trade has an online player open a trade with another online player
// standing beside it, if one does, and offer one of its chairs (refused,
// changing nothing, when the player has no chair left or is in a trade).
func (m *model) trade(p *mPlayer) {
	if p.state != pOnline || p.transit {
		return
	}
	for _, q := range m.players {
		if q == p || q.state != pOnline || q.transit || q.host != p.host {
			continue
		}
		dir, ok := p.host.sim.DirTo(uint64(p.acct), uint64(q.acct))
		if !ok {
			continue
		}
		m.tracef("player %d opens a trade with player %d, to its %v in area %d", p.acct, q.acct, dir, p.area)
		acct := uint64(p.acct)
		p.host.sim.Item(acct, ecs.Intent{Kind: ecs.IntentTrade, Dir: dir})
		p.host.sim.Item(acct, ecs.Intent{Kind: ecs.IntentOffer, From: 0, Count: 1})
		synctest.Wait()
		return
	}
}

// confirmTrade has the online players in open trades on p's host
// confirm them as they stand now, as their two clients would at once:
// where both players of a trade confirm, the chairs change hands at the
// Area's next tick, unless a crossing, a drop or a crash ends the trade
// first.
func (m *model) confirmTrade(p *mPlayer) {
	if p.state != pOnline || p.transit {
		return
	}
	n := 0
	for _, q := range m.players {
		if q.state != pOnline || q.transit || q.host != p.host {
			continue
		}
		rev, open, _ := q.host.sim.TradeRev(uint64(q.acct))
		if !open {
			continue
		}
		m.tracef("player %d confirms its trade at revision %d in area %d", q.acct, rev, q.area)
		q.host.sim.Item(uint64(q.acct), ecs.Intent{Kind: ecs.IntentConfirm, Count: rev})
		n++
	}
	if n > 0 {
		m.count(func(s *modelStats) {
			s.tradeConfirms += n
			if n >= 2 {
				s.tradesConfirmed++
			}
		})
	}
	synctest.Wait()
}

// startJoinElsewhere is startJoin to the Area the store does not have p's
// character in: a move by the door.
func (m *model) startJoinElsewhere(p *mPlayer) {
	D := m.dir
	if D == nil || p.state != pOffline {
		return
	}
	ch, err := m.db.Character(m.ctx, p.acct)
	if err != nil {
		m.fatalf("player %d: character: %v", p.acct, err)
	}
	to := m.areas[0]
	if ch.Area == to {
		to = m.areas[1]
	}
	acct, err := m.db.Account(m.ctx, p.acct)
	if err != nil {
		m.fatalf("player %d: account: %v", p.acct, err)
	}
	res := make(chan joinResult, 1)
	p.state, p.join = pJoining, res
	m.tracef("player %d joins area %d by the door, its character being in area %d", p.acct, to, ch.Area)
	m.count(func(s *modelStats) { s.joins++ })
	go func() {
		ans, e := D.d.join(D.ctx, acct, to)
		res <- joinResult{ans, e}
	}()
	synctest.Wait()
}

// drop ends an online player's connection: its body stays for a resume
// (which the model's clients never use: they join again by the door).
func (m *model) drop(p *mPlayer) {
	if p.state != pOnline {
		return
	}
	m.tracef("player %d's connection to %s drops", p.acct, p.host.name)
	p.host.sim.Drop(uint64(p.acct))
	p.state = pOffline
	synctest.Wait()
}

// observe brings the clients up to date with what happened to them: an
// answered join, a body moved out (portal_moved, with the result's grant)
// or lost (its host died or the Area closed), a crossing restored. It
// reads the bodies from the hosts' worlds and returns them by account.
// reapDirector takes a director whose armed crash fired (its store died
// under it) out of the realm, as its process's death would.
func (m *model) reapDirector() {
	if point := m.died.Swap(nil); point != nil && m.dir != nil && m.dir.st.dead.Load() {
		m.crashDirector(*point)
	}
}

func (m *model) observe() map[uint64][]bodyAt {
	m.reapDirector()
	bodies := map[uint64][]bodyAt{}
	for _, h := range m.hosts {
		if h == nil || !h.alive {
			continue
		}
		for _, a := range h.sim.Areas() {
			for _, b := range a.Bodies {
				bodies[b.Account] = append(bodies[b.Account], bodyAt{h: h, area: a.ID, epoch: a.Epoch, b: b})
			}
		}
	}
	for _, p := range m.players {
		switch p.state {
		case pJoining:
			select {
			case r := <-p.join:
				if r.err != nil {
					m.tracef("player %d: join refused: %s %s", p.acct, r.err.Code, r.err.Message)
					m.count(func(s *modelStats) { s.joinFailures++ })
					p.state = pOffline
					break
				}
				p.state, p.area, p.url, p.grant, p.joinID, p.portal = pGranted, r.ans.Area, r.ans.WSURL, r.ans.Grant, r.ans.JoinID, false
				m.tracef("player %d: join granted in area %d at %s", p.acct, p.area, p.url)
			default:
			}
		case pOnline:
			var mine *bodyAt
			for i, b := range bodies[uint64(p.acct)] {
				if b.h == p.host && b.area == p.area {
					mine = &bodies[uint64(p.acct)][i]
				}
			}
			if mine != nil {
				if p.transit && !mine.b.Transit {
					m.count(func(s *modelStats) { s.restored++ })
					m.tracef("player %d: its crossing ended with its body back in area %d", p.acct, p.area)
				}
				p.transit = mine.b.Transit
				break
			}
			r := m.lastOK[uint64(p.acct)]
			switch {
			case !p.host.alive:
				m.tracef("player %d: its host %s died", p.acct, p.host.name)
				p.state = pOffline
			case r != nil && r.Area == p.area && r.Grant != "":
				m.count(func(s *modelStats) { s.crossings++ })
				m.tracef("player %d: portal_moved to area %d", p.acct, r.ToArea)
				p.state, p.area, p.url, p.grant, p.joinID, p.portal = pGranted, r.ToArea, r.WSURL, r.Grant, r.JoinID, true
			default:
				m.tracef("player %d: its body is gone from area %d", p.acct, p.area)
				p.state = pOffline
			}
		}
	}
	clear(m.lastOK)
	return bodies
}

type bodyAt struct {
	h     *mHost
	area  uint32
	epoch uint64
	b     area.SimBody
}

// check holds after every step: every character is in A or B; no player
// has bodies in two Areas (or two in one), read from the hosts' worlds;
// and every body is one its player's client drives, where the client
// believes it is.
func (m *model) check() {
	bodies := m.observe()
	m.checks++
	for _, p := range m.players {
		ch, err := m.db.Character(m.ctx, p.acct)
		if err != nil {
			m.fatalf("player %d's character is missing: %v", p.acct, err)
		}
		if ch.Area != m.areas[0] && ch.Area != m.areas[1] {
			m.fatalf("player %d's character is in area %d, neither A nor B", p.acct, ch.Area)
		}
		// One character, one Area: a body of the Area's current incarnation
		// (the store's epoch), dropped or driven, is the character's only
		// one. (A body in an older incarnation, a zombie on a host cut off
		// while the Area was made live elsewhere, can never write: the
		// store fences it, and it is told to close when it comes back.)
		var held []bodyAt
		for _, b := range bodies[uint64(p.acct)] {
			a, err := m.db.Area(m.ctx, store.AreaID(b.area))
			if err != nil {
				m.fatalf("area %d: %v", b.area, err)
			}
			// A dropped body on a host cut off from the director cannot be
			// resumed (the host refuses), and goes when the host registers
			// again: it binds no one.
			linked := b.h.link != nil && b.h.link.up
			if uint64(a.Epoch) == b.epoch && (!b.b.Dropped || linked) {
				held = append(held, b)
			}
		}
		if len(held) > 1 {
			var where []string
			for _, b := range held {
				where = append(where, fmt.Sprintf("area %d@%d on %s", b.area, b.epoch, b.h.name))
			}
			m.fatalf("player %d has bodies in %d Areas: %s", p.acct, len(held), strings.Join(where, ", "))
		}
		if len(held) == 1 && !held[0].b.Dropped && (p.state != pOnline || held[0].h != p.host || held[0].area != p.area) {
			m.fatalf("player %d has a body in area %d on %s that its client does not drive (%v)", p.acct, held[0].area, held[0].h.name, p)
		}
	}
	m.countItems()
}

// countItems counts every item the store holds (director/census): no id
// twice, and each kind's count what the Areas' ledgers made of it. A
// crash may stop the realm at any instant, so this holds after every
// step, whatever is in flight.
func (m *model) countItems() {
	var n census.Counter
	placed := 0
	err := m.db.Holdings(m.ctx, func(h store.Holding) error {
		n.Add(h)
		if h.Area != 0 && len(h.State) > 0 {
			if b, err := blob.Decode(h.State, h.W, h.H); err == nil {
				placed += len(b.Placed)
			}
		}
		return nil
	})
	if err != nil {
		m.fatalf("items: reading the store: %v", err)
	}
	c := n.Census()
	crafted := int64(0)
	if plank, ok := content.Default().Item("plank"); ok {
		for _, k := range c.Kinds {
			if k.Kind == plank.Code {
				crafted = k.Created
			}
		}
	}
	m.count(func(s *modelStats) {
		s.counted++
		s.placed = max(s.placed, placed)
		s.crafted = max(s.crafted, crafted)
	})
	if !c.OK() {
		m.fatalf("items: the store holds %d stacks, with %d violations: %s", c.Stacks, c.Violations, strings.Join(c.Problems, "; "))
	}
}

// settleJoins delivers every message in order and lets time pass until no
// join is in flight, then has the granted players say hello.
func (m *model) settleJoins() {
	for range 100 {
		m.drain()
		m.observe()
		busy := false
		for _, p := range m.players {
			busy = busy || p.state == pJoining
		}
		if !busy {
			break
		}
		m.advance(100 * time.Millisecond)
	}
	for _, p := range m.players {
		m.hello(p)
	}
}

// drain delivers every message in flight, each connection in order, until
// none is left.
func (m *model) drain() {
	for range 10000 {
		qs := m.queues()
		if len(qs) == 0 {
			return
		}
		m.deliver(qs[0])
	}
	m.fatalf("the bus never drained")
}

// run delivers messages in flight, each connection in order, until every
// queue is empty or held: a queue whose head hold returns true for stays
// as it is (and so does everything behind that head).
func (m *model) run(hold func(l *mLink, toDir bool, head control.Message) bool) {
	for range 10000 {
		var next *mQueue
		for _, q := range m.queues() {
			m.mu.Lock()
			head := q.l.toHost
			if q.toDir {
				head = q.l.toDir
			}
			held := hold != nil && hold(q.l, q.toDir, head[0])
			m.mu.Unlock()
			if !held {
				next = &q
				break
			}
		}
		if next == nil {
			m.observe()
			return
		}
		m.deliver(*next)
	}
	m.fatalf("the bus never drained")
}

// settle delivers what is in flight and lets a little time pass.
func (m *model) settle() {
	m.drain()
	m.advance(100 * time.Millisecond)
	m.drain()
}

// quiesce stops the faults and runs the realm until everything has
// settled: a director and every host up and connected, every message
// delivered, every player back in play, no crossing waiting or settling,
// and reconciliation past every pending transfer's expiry. Then every
// body must be where the store says its player is, the only body of its
// player, in the Area's live incarnation, and no transfer pending.
func (m *model) quiesce() {
	m.tracef("quiesce")
	if m.dir != nil {
		m.dir.st.mu.Lock()
		m.dir.st.arm = nil
		m.dir.st.mu.Unlock()
	} else {
		m.startDirector()
	}
	settled := false
	for round := 0; round < 300 && !settled; round++ {
		m.reapDirector() // an armed crash may have fired just before: a dead director answers no host
		if m.dir == nil {
			m.startDirector()
		}
		for slot, h := range m.hosts {
			switch {
			case h == nil || !h.alive:
				m.startHost(slot)
			case h.link == nil && m.dir != nil:
				m.connect(h)
			}
		}
		m.drain()
		m.check()
		settled = true
		for _, p := range m.players {
			switch p.state {
			case pOffline:
				m.startJoin(p)
				settled = false
			case pGranted:
				m.hello(p)
				settled = false
			case pJoining:
				settled = false
			}
		}
		for _, h := range m.hosts {
			for _, a := range h.sim.Areas() {
				if a.Crossings > 0 || a.Settling > 0 || a.Closing {
					settled = false
				}
				for _, b := range a.Bodies {
					settled = settled && !b.Dropped
				}
			}
		}
		m.advance(time.Second)
		m.check()
	}
	if !settled {
		m.fatalf("the realm did not settle")
	}
	m.advance(transfer.ReconcileEvery + time.Second) // a reconciliation pass past every pending transfer's expiry
	m.drain()
	m.check()
	bodies := m.observe()
	for _, p := range m.players {
		ch, err := m.db.Character(m.ctx, p.acct)
		if err != nil {
			m.fatalf("player %d's character is missing: %v", p.acct, err)
		}
		if p.state != pOnline {
			m.fatalf("%v after quiescence", p)
		}
		if store.AreaID(p.area) != ch.Area {
			m.fatalf("player %d plays in area %d but the store has its character in area %d (a ghost)", p.acct, p.area, ch.Area)
		}
		if n := len(bodies[uint64(p.acct)]); n != 1 {
			m.fatalf("player %d has %d bodies after quiescence", p.acct, n)
		}
		l := m.dir.d.registry.Area(ch.Area)
		if live := l != nil && l.Host != nil && l.Host.WSURL == p.host.url; !live {
			m.fatalf("player %d plays in area %d on %s, which the director does not have live there", p.acct, p.area, p.host.name)
		}
	}
	pending, err := m.db.PendingTransfers(m.ctx)
	if err != nil {
		m.tb.Fatal(err)
	}
	if len(pending) > 0 {
		m.fatalf("%d transfers still pending after reconciliation: %+v", len(pending), pending)
	}
}

// close stops everything in the bubble (so that synctest sees every
// goroutine end) and closes the database.
func (m *model) close() {
	for _, h := range m.hosts {
		if h != nil && h.alive {
			m.stopHost(h)
		}
	}
	if m.dir != nil {
		m.dir.st.dead.Store(true)
		m.dir.cancel()
	}
	for _, l := range m.links {
		l.nc.Close()
	}
	// Whatever still waits (a dead director's join or crossing on its
	// timeouts) ends within these.
	time.Sleep(3 * modelJoinTimeout)
	synctest.Wait()
	if m.db != nil {
		m.db.Close()
	}
	synctest.Wait()
}
