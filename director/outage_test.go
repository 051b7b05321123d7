package director

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/pg"
	"github.com/leyworks/ley/store/pg/pgtest"
)

var (
	outageFor     = flag.Duration("ley.outage", 0, "TestDatabaseOutage: hold the outage at least this long (0: long enough for its checks)")
	outagePlayers = flag.Int("ley.outage-players", 4, "TestDatabaseOutage: players playing through the outage (at most 7: a home holds 8, one place kept)")
)

// TestDatabaseOutage (issue 29, high): the realm's Postgres stops while
// players play. Play goes on in the live Areas (every step applied and
// answered, snapshots flowing, no connection dropped); a join and a
// crossing are refused UNAVAILABLE (answered, not hung); the director's
// health says the store is unavailable; the Areas' snapshots wait in
// memory. Once Postgres is back, the director leads on (no restart),
// every player's last position is stored (nothing lost), a crossing and
// a join go through, and no character has a body in two Areas.
//
// Its long form holds the outage longer, with more players:
//
//	go test -tags leytest -run TestDatabaseOutage ./director -ley.outage 60s -ley.outage-players 7 -v
//
// (figures in bench/RESULTS.md, "Riding out a database outage").
func TestDatabaseOutage(t *testing.T) {
	cl := pgtest.NewCluster(t)
	ctx := context.Background()
	st, err := pg.Open(ctx, cl.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	r := runRealm(t, cfg, st, nil)
	r.waitHosts(1)
	owner, ownerAcct := r.player("owner")
	r.admin(ownerAcct)
	a, b := twoAreas(t, owner)
	code, err := owner.Invite(ctx, a.ID, *outagePlayers+1)
	if err != nil {
		t.Fatal(err)
	}
	codeB, err := owner.Invite(ctx, b.ID, *outagePlayers+1)
	if err != nil {
		t.Fatal(err)
	}
	type player struct {
		c    *dirclient.Client
		acct uint64
		p    *peer
		seq  uint32
	}
	var players []*player
	for i := range *outagePlayers {
		c, acct := r.player(fmt.Sprintf("outage%d", i))
		for _, code := range []string{code, codeB} {
			if _, err := c.Redeem(ctx, code); err != nil {
				t.Fatal(err)
			}
		}
		j, err := c.Join(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := connect(t, j)
		p.snapshot(0)
		players = append(players, &player{c: c, acct: acct.ID, p: p})
	}
	late, _ := r.player("late")
	if _, err := late.Redeem(ctx, codeB); err != nil {
		t.Fatal(err)
	}
	// step moves pl one square east or west (away from the portal's
	// column) and waits for its answer: it must be applied.
	step := func(pl *player) {
		t.Helper()
		pl.seq++
		dir := wire.DirE
		if pl.seq%2 == 0 {
			dir = wire.DirW
		}
		pl.p.send(&wire.Intent{Seq: pl.seq, Kind: wire.IntentStep, Dir: dir})
		// Applied: a snapshot's ack_seq reaches it (a refusal is an
		// intent_result naming it).
		m := pl.p.until(func(m wire.Message) bool {
			switch m := m.(type) {
			case *wire.IntentResult:
				return m.Seq == pl.seq
			case *wire.Snapshot:
				return m.AckSeq >= pl.seq
			}
			return false
		})
		if res, ok := m.(*wire.IntentResult); ok && res.Code != wire.CodeBlocked {
			t.Fatalf("player %d's step %d answered %v", pl.acct, pl.seq, res.Code)
		}
	}

	cl.Stop(pgtest.StopFast)
	outage := time.Now()
	waitFor(t, "the director's health saying the store is unavailable", func() bool {
		for _, pl := range players {
			step(pl) // play goes on meanwhile
		}
		rz, err := readyz(r.url)
		return err == nil && rz.status == http.StatusServiceUnavailable && strings.Contains(rz.Reason, "store is unavailable")
	})
	if got := r.metric("ley_store_unavailable"); got != 1 {
		t.Errorf("ley_store_unavailable = %v during the outage; want 1", got)
	}
	// A join is answered UNAVAILABLE: the session check itself needs the
	// store.
	if _, err := late.Join(ctx, b.ID); err == nil || refusal(t, err) != "UNAVAILABLE" {
		t.Fatalf("a join during the outage: %v; want UNAVAILABLE", err)
	}
	// A crossing is refused UNAVAILABLE, and the body stays in A.
	crosser := players[0]
	crosser.seq++
	crosser.p.send(&wire.Intent{Seq: crosser.seq, Kind: wire.IntentMoveTo, Target: wire.Cell{X: 5, Y: 5}})
	m := crosser.p.until(func(m wire.Message) bool {
		switch m.(type) {
		case *wire.PortalMoved, *wire.PortalTransferRejected, *wire.PortalBlocked:
			return true
		}
		return false
	})
	if rej, ok := m.(*wire.PortalTransferRejected); !ok || rej.Reason != wire.CodeUnavailable {
		t.Fatalf("a crossing during the outage: %s %+v; want portal_transfer_rejected{UNAVAILABLE}", m.Type(), m)
	}
	steps := 0
	for round := 0; round < 10 || time.Since(outage) < *outageFor; round++ { // more play, for more snapshots that wait
		for _, pl := range players {
			step(pl)
			steps++
		}
	}
	t.Logf("outage of %v: %d players played on (%d steps applied and answered), a join and a crossing were refused UNAVAILABLE",
		time.Since(outage).Round(time.Millisecond), len(players), steps)
	waitFor(t, "the snapshots of the outage waiting in the director", func() bool { return r.metric("ley_snapshots_waiting") >= 1 })

	cl.Start()
	waitFor(t, "the director ready again", func() bool {
		rz, err := readyz(r.url)
		return err == nil && rz.status == http.StatusOK
	})
	waitFor(t, "the waiting snapshots written", func() bool { return r.metric("ley_snapshots_waiting") == 0 })
	for _, pl := range players {
		step(pl)
		you := pl.p.you()
		waitFor(t, "the last position stored", func() bool {
			ch, err := r.store.Character(ctx, store.AccountID(pl.acct))
			return err == nil && ch.Area == store.AreaID(a.ID) && ch.X == you.X && ch.Y == you.Y
		})
	}
	for _, pl := range players {
		select {
		case err := <-pl.p.done:
			t.Fatalf("player %d's connection ended over the outage: %v", pl.acct, err)
		default:
		}
	}
	moved := crosser.p.walkInto(crosser.seq+1, 5, 5)
	if moved.Area != b.ID {
		t.Fatalf("a crossing after the outage went to %d; want B", moved.Area)
	}
	pb, _ := connect(t, dirclient.Join{Grant: moved.Grant, WSURL: moved.WSURL, JoinID: moved.JoinID})
	pb.snapshot(0)
	j, err := late.Join(ctx, b.ID)
	if err != nil {
		t.Fatalf("a join after the outage: %v", err)
	}
	connect(t, j)
	checkPresence(t, owner)
	t.Logf("after the outage: %d players' last positions stored (0 lost), %d connections kept, every character in one Area (0 doubled)", len(players), len(players))
	if r.d.term != r.d.lost.Term() || !r.d.leading.Load() {
		t.Error("the director no longer leads in its term after the outage")
	}
}
