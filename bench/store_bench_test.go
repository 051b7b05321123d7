package bench

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/pg/pgtest"
	"github.com/leyworks/ley/store/sqlite"
)

// BenchmarkStoreSnapshot: one Area's snapshot writes through each store
// backend, as the director persists them: a 64 KiB blob at seq+1 with two
// characters, in one transaction. One op is one write; writes/s is the
// sustained rate of a single writer. store=pg uses LEY_TEST_DATABASE_URL
// (default postgres://postgres@127.0.0.1:5432/test) in a fresh schema and
// fails without it; store=pg-leading is pg holding the realm's leadership,
// each write fenced by its term, as a director writes.
func BenchmarkStoreSnapshot(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"sqlite", func(b *testing.B) store.Store {
			s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "ley.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
		{"pg", func(b *testing.B) store.Store { return pgtest.Open(b) }},
		// pg-leading: as a director writes, leading: each write checks
		// the leadership term in its transaction (store.Store.Lead).
		{"pg-leading", func(b *testing.B) store.Store {
			s := pgtest.Open(b)
			if _, err := s.Lead(b.Context(), store.Leader{HTTP: "http://bench", Control: "bench:7070"}); err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	for _, be := range backends {
		b.Run("store="+be.name, func(b *testing.B) { benchSnapshot(b, be.open(b)) })
		b.Run("store="+be.name+"/homes", func(b *testing.B) { benchHomeSnapshots(b, be.open(b), 1) })
		b.Run("store="+be.name+"/homes/group=16", func(b *testing.B) { benchHomeSnapshots(b, be.open(b), 16) })
	}
}

func benchSnapshot(b *testing.B, s store.Store) {
	ctx := b.Context()
	t0 := time.UnixMilli(1_700_000_000_000)
	var chars []store.CharacterState
	var area store.Area
	for i := range 2 {
		a, err := s.CreateAccount(ctx, store.NewAccount{Email: string(rune('a'+i)) + "@bench", Name: "bench " + string(rune('a'+i)), Created: t0})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			if area, err = s.CreateArea(ctx, store.NewArea{Owner: a.ID, Kind: "village", Name: "bench", W: 256, H: 256, Created: t0}); err != nil {
				b.Fatal(err)
			}
		}
		if _, _, err := s.EnsureCharacter(ctx, a.ID, area.ID, t0); err != nil {
			b.Fatal(err)
		}
		chars = append(chars, store.CharacterState{Account: a.ID, X: 1, Y: 2, State: make([]byte, 256)})
	}
	epoch, err := s.BeginIncarnation(ctx, area.ID, store.TokenHash{})
	if err != nil {
		b.Fatal(err)
	}
	blob := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range blob {
		blob[i] = byte(r.Uint32())
	}
	snap := store.Snapshot{Area: area.ID, Epoch: epoch, Blob: blob, Characters: chars, At: t0}
	b.SetBytes(int64(len(blob)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		snap.Seq++
		snap.Characters[0].X = int32(snap.Seq)
		res, err := s.WriteSnapshot(ctx, snap)
		if err != nil {
			b.Fatal(err)
		}
		if !res.Applied || res.Characters != 2 {
			b.Fatalf("WriteSnapshot = %+v; want applied, 2 characters", res)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

// benchHomeSnapshots writes the snapshots of 500 homes round-robin, as
// a director persists a realm of homes: each a small blob and its one
// character; group at a time, one transaction each (WriteSnapshot alone,
// WriteSnapshots for more: a group commit), an op being one group.
// Besides the rate it reports the writing process's CPU per snapshot
// (cpu-µs/snapshot, user and system, from getrusage): what a director
// spends of its core on persistence, where the rate is bound by the
// sync. For SQLite that includes the database's own work (it runs in the
// process); for Postgres it is the client's share only, the server's
// CPU not counted.
func benchHomeSnapshots(b *testing.B, s store.Store, group int) {
	const homes = 500
	ctx := b.Context()
	t0 := time.UnixMilli(1_700_000_000_000)
	snaps := make([]store.Snapshot, homes)
	for i := range snaps {
		a, err := s.CreateAccount(ctx, store.NewAccount{Email: fmt.Sprintf("h%d@bench", i), Name: fmt.Sprintf("h%d", i), Created: t0})
		if err != nil {
			b.Fatal(err)
		}
		area, err := s.CreateArea(ctx, store.NewArea{Owner: a.ID, Kind: "home", Name: "home", W: 24, H: 16, Created: t0})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := s.EnsureCharacter(ctx, a.ID, area.ID, t0); err != nil {
			b.Fatal(err)
		}
		epoch, err := s.BeginIncarnation(ctx, area.ID, store.TokenHash{})
		if err != nil {
			b.Fatal(err)
		}
		snaps[i] = store.Snapshot{Area: area.ID, Epoch: epoch, Blob: make([]byte, 300), At: t0,
			Characters: []store.CharacterState{{Account: a.ID, X: 1, Y: 2, State: make([]byte, 40)}}}
	}
	batch := make([]store.Snapshot, group)
	cpu0 := cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	next := 0
	for b.Loop() {
		for j := range batch {
			snap := &snaps[next%homes]
			next++
			snap.Seq++
			snap.Characters[0].X = int32(snap.Seq % 24)
			batch[j] = *snap
		}
		if group == 1 {
			res, err := s.WriteSnapshot(ctx, batch[0])
			if err != nil {
				b.Fatal(err)
			}
			if !res.Applied || res.Characters != 1 {
				b.Fatalf("WriteSnapshot = %+v; want applied, 1 character", res)
			}
			continue
		}
		out, err := s.WriteSnapshots(ctx, batch)
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range out {
			if w.Err != nil || !w.Result.Applied || w.Result.Characters != 1 {
				b.Fatalf("WriteSnapshots: %+v; want each applied, 1 character", w)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(next), "cpu-µs/snapshot")
	b.ReportMetric(float64(next)/b.Elapsed().Seconds(), "snapshots/s")
}
