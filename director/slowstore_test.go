package director

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/pg"
	"github.com/leyworks/ley/store/pg/pgtest"
)

// TestASlowStoreKeepsTheHostsLeases: a store that is up but slow must not
// cost a host its lease. An Area's row stays locked in Postgres for more
// than two leases while its player plays: the Area's snapshots cannot be
// written all that time (checked: none is), yet every step is applied,
// the session is never ended (no rehello, no close), and the host stays
// registered. Once the lock goes, the waiting snapshot is written and the
// character's stored position is the player's last.
//
// It fails when the director's link reader waits for each snapshot's
// write before it reads the next message (as it did): the host's
// heartbeats wait behind the locked write, the director stops hearing it
// (HeartbeatTimeout) and the host's lease runs out, and the player is
// sent rehello{UNAVAILABLE}.
func TestASlowStoreKeepsTheHostsLeases(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewSchema(t)
	st, err := pg.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := testConfig()
	cfg.HeartbeatTimeout, cfg.HostLease = 3*time.Second, 4*time.Second
	r := runRealm(t, cfg, st, nil)
	r.waitHosts(1)
	hostsBefore := r.d.registry.Hosts()
	owner, acct := r.player("owner")
	a, err := owner.CreateArea(ctx, "slow", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	j, err := owner.Join(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := connect(t, j)
	p.snapshot(0)

	const applied = `ley_snapshot_writes_total{result="applied"}`
	waitFor(t, "a first snapshot of the Area written", func() bool { return r.metric(applied) > 0 })

	// Another client holds the Area's row: every write of its snapshots
	// waits for the lock.
	locker, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM areas WHERE id = $1 FOR UPDATE`, int64(a.ID)); err != nil {
		t.Fatal(err)
	}
	// A write that held the row before the lock was taken has committed
	// (the lock waited for it), but its count may come a moment later;
	// from then on, no write of the Area can commit.
	time.Sleep(2 * time.Second)
	writtenBefore := r.metric(applied)

	var seq uint32
	var last wire.EntityState
	held := time.Now()
	for time.Since(held) < 2*cfg.HostLease+time.Second {
		seq++
		dir := wire.DirE
		if seq%2 == 0 {
			dir = wire.DirW
		}
		p.send(&wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: dir})
		m := p.until(func(m wire.Message) bool {
			switch m := m.(type) {
			case *wire.IntentResult:
				return m.Seq == seq
			case *wire.Snapshot:
				return m.AckSeq >= seq
			case *wire.Rehello:
				t.Fatalf("the host ended the session %v into the slow store: rehello %v %q", time.Since(held).Round(time.Millisecond), m.Code, m.Detail)
			}
			return false
		})
		if res, ok := m.(*wire.IntentResult); ok && res.Code != wire.CodeBlocked {
			t.Fatalf("step %d answered %v while the store was slow", seq, res.Code)
		}
		last = p.you()
		time.Sleep(100 * time.Millisecond)
	}
	if got := r.metric(applied); got != writtenBefore {
		t.Fatalf("%v snapshots were written while the Area's row was locked: the test held nothing back", got-writtenBefore)
	}
	if hostsNow := r.d.registry.Hosts(); len(hostsNow) != len(hostsBefore) || hostsNow[0].ID != hostsBefore[0].ID {
		t.Fatalf("the hosts changed while the store was slow: %+v, then %+v", hostsBefore, hostsNow)
	}

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the player's last position stored once the row is free", func() bool {
		ch, err := st.Character(ctx, store.AccountID(acct.ID))
		if err != nil {
			t.Fatal(err)
		}
		return ch.X == last.X && ch.Y == last.Y && r.metric(applied) > writtenBefore
	})
}
