package director

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
)

// BenchmarkPortalCrossing: the time from a player's step onto a portal in
// A to its hello_ack in B (portal_out, the director's checks, B's grant,
// the store's move, portal_moved, the new connection and hello), with B
// live (another player in it) or frozen on its host. Real host processes,
// SQLite store. Each op walks onto the portal from the square beside it
// and crosses A -> B (timed), then back (not timed).
//
//	go test -run '^$' -bench 'PortalCrossing' -benchtime 200x ./director/
func BenchmarkPortalCrossing(b *testing.B) {
	for _, state := range []string{"live", "frozen"} {
		b.Run("b="+state, func(b *testing.B) {
			r := startRealm(b, func(c *Config) {
				c.Spawn.ResumeGrace = 100 * time.Millisecond // B empties (and freezes) soon after the player leaves
				c.AreaIdleGrace = time.Hour
				// Two hosts, so A and B land on different ones and B's host
				// reporting no active Area means B is frozen.
				c.Spawn.MinHosts, c.Spawn.MaxHosts = 2, 2
			})
			ctx := context.Background()
			c, _ := r.player("runner")
			A, err := c.CreateArea(ctx, "A", "home", 16, 16)
			if err != nil {
				b.Fatal(err)
			}
			B, err := c.CreateArea(ctx, "B", "home", 16, 16)
			if err != nil {
				b.Fatal(err)
			}
			// A (5,5) leads to B (2,2); B (3,2) leads back to A (4,5).
			c.SetPortals(ctx, A.ID, []dirclient.Portal{{X: 5, Y: 5, ToArea: B.ID, ToX: 2, ToY: 2}})
			c.SetPortals(ctx, B.ID, []dirclient.Portal{{X: 3, Y: 2, ToArea: A.ID, ToX: 4, ToY: 5}})
			if state == "live" {
				other, _ := r.player("resident")
				code, _ := c.Invite(ctx, B.ID, 1)
				other.Redeem(ctx, code)
				j, err := other.Join(ctx, B.ID)
				if err != nil {
					b.Fatal(err)
				}
				connect(b, j) // keeps B active
			}
			// Get the runner to (4,5) in A: join, walk there.
			j, err := c.Join(ctx, A.ID)
			if err != nil {
				b.Fatal(err)
			}
			pa, _ := connect(b, j)
			pa.send(&wire.Intent{Seq: 1, Kind: wire.IntentMoveTo, Target: wire.Cell{X: 4, Y: 5}})
			pa.snapshotWhere(func(you wire.EntityState) bool { return you.X == 4 && you.Y == 5 })
			// One round trip: A -> B -> A, timing the first leg. Move-tos (not
			// steps) so a wanderer standing in the way only delays them.
			roundTrip := func(timed bool) time.Duration {
				start := time.Now()
				pa.send(&wire.Intent{Seq: 2, Kind: wire.IntentMoveTo, Target: wire.Cell{X: 5, Y: 5}})
				moved := pa.until(func(m wire.Message) bool { _, ok := m.(*wire.PortalMoved); return ok }).(*wire.PortalMoved)
				pb, _ := connect(b, dirclient.Join{Grant: moved.Grant, WSURL: moved.WSURL, JoinID: moved.JoinID})
				took := time.Since(start)
				if timed {
					b.StopTimer()
				}
				pb.send(&wire.Intent{Seq: 1, Kind: wire.IntentMoveTo, Target: wire.Cell{X: 3, Y: 2}})
				back := pb.until(func(m wire.Message) bool { _, ok := m.(*wire.PortalMoved); return ok }).(*wire.PortalMoved)
				pa, _ = connect(b, dirclient.Join{Grant: back.Grant, WSURL: back.WSURL, JoinID: back.JoinID})
				pa.snapshot(0)
				return took
			}
			roundTrip(false) // B live once, so "frozen" means live and frozen
			var lat []time.Duration
			rng := rand.New(rand.NewPCG(3, 4))
			for b.Loop() {
				b.StopTimer()
				if state == "frozen" {
					r.waitFrozen(b, store.AreaID(B.ID))
				}
				// Start at a random moment of the tick, as players do.
				time.Sleep(time.Duration(rng.IntN(50_000)) * time.Microsecond)
				b.StartTimer()
				lat = append(lat, roundTrip(true))
				b.StartTimer()
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
