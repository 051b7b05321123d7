package director

import (
	"context"
	"fmt"
	"testing"

	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
)

// TestAreasDueTogetherShareACommit: a host's Areas persist on its slots,
// and the director writes the snapshots that come in together in one
// transaction. With six Areas active on one host, the snapshots written
// outnumber the transactions that wrote them by a fifth at least (about
// two to one here; written one a transaction, as they were, the two are
// equal), and each player's stored position is the one it stepped to.
func TestAreasDueTogetherShareACommit(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MaxHosts = 1 })
	ctx := context.Background()
	const areas = 6
	type player struct {
		p    *peer
		acct store.AccountID
		x    int32
	}
	var ps []player
	for i := range areas {
		c, acct := r.player(fmt.Sprintf("group%d", i))
		a, err := c.CreateArea(ctx, fmt.Sprintf("group %d", i), "home", 16, 16)
		if err != nil {
			t.Fatal(err)
		}
		j, err := c.Join(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := connect(t, j)
		p.snapshot(0)
		p.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
		ps = append(ps, player{p: p, acct: store.AccountID(acct.ID)})
	}
	for i := range ps {
		ps[i].p.snapshot(1)
		ps[i].x = ps[i].p.you().X
	}
	for _, pl := range ps {
		waitFor(t, fmt.Sprintf("account %d's step stored", pl.acct), func() bool {
			c, err := r.store.Character(ctx, pl.acct)
			return err == nil && c.X == pl.x
		})
	}

	const count, sum = "ley_snapshot_commit_snapshots_count", "ley_snapshot_commit_snapshots_sum"
	commits0, written0 := r.metric(count), r.metric(sum)
	waitFor(t, "60 more snapshots written", func() bool { return r.metric(sum)-written0 >= 60 })
	commits, written := r.metric(count)-commits0, r.metric(sum)-written0
	if written < 1.2*commits {
		t.Fatalf("%v snapshots written by %v transactions; want at least 1.2 a transaction", written, commits)
	}
	t.Logf("%v snapshots written by %v transactions", written, commits)
}
