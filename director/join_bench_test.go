package director

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/store"
)

// BenchmarkJoin: the director side of a join (HTTP request to the answer:
// membership, door, grant registered on the host and acked), for an Area
// live with a player in it, and for one live but frozen on its host (the
// grant wakes it). Real host processes, SQLite store. Reports p50 and p99.
//
//	go test -run '^$' -bench 'Join/area=live' -benchtime 200x ./director/
//	go test -run '^$' -bench 'Join/area=frozen' -benchtime 30x ./director/
func BenchmarkJoin(b *testing.B) {
	for _, state := range []string{"live", "frozen"} {
		b.Run("area="+state, func(b *testing.B) {
			r := startRealm(b, func(c *Config) {
				c.GrantTTL = 300 * time.Millisecond // unused grants lapse fast, so the Area can freeze again
				c.AreaIdleGrace = time.Hour
				c.JoinsPerMinute = 0 // one account joins b.N times
			})
			ctx := context.Background()
			c := dirclient.New(r.url)
			email := fmt.Sprintf("bench-%s@test.ley", state)
			c.Register(ctx, email, "correct horse battery", "bench")
			_, err := c.Login(ctx, email, "correct horse battery")
			if err != nil {
				b.Fatal(err)
			}
			area, err := c.CreateArea(ctx, "Home", "home", 32, 32)
			if err != nil {
				b.Fatal(err)
			}
			j, err := c.Join(ctx, area.ID)
			if err != nil {
				b.Fatal(err)
			}
			if state == "live" {
				connect(b, j) // a player inside keeps it active
			}
			var lat []time.Duration
			rng := rand.New(rand.NewPCG(1, 2))
			for b.Loop() {
				b.StopTimer()
				if state == "frozen" {
					r.waitFrozen(b, store.AreaID(area.ID))
				}
				// Arrive at a random moment of the host's 50 ms tick, as players
				// do; back-to-back joins would phase-lock to the tick and always
				// wait a whole one (the grant is taken in at the next tick).
				time.Sleep(time.Duration(rng.IntN(50_000)) * time.Microsecond)
				b.StartTimer()
				start := time.Now()
				if _, err := c.Join(ctx, area.ID); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
