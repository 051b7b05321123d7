//go:build linux

package gate

import (
	"context"
	"testing"
)

// TestARoundIsOneSubmission: the frames handed to many connections while
// their loop is busy go out together, in one io_uring submission, and
// each peer gets its own. With Config.Writev the ring is not used at all.
func TestARoundIsOneSubmission(t *testing.T) {
	writePaths(t, testARoundIsOneSubmission)
}

func testARoundIsOneSubmission(t *testing.T, base Config) {
	const peers = 40
	cfg := base
	cfg.Loops = 1
	rec := newRecorder()
	s := startServer(t, cfg, rec.handler(false))
	var clients []*ClientConn
	for range peers {
		c, err := Dial(context.Background(), "ws://"+s.Addr().String()+"/")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.NetConn().Close() })
		clients = append(clients, c)
	}
	waitFor(t, "opens", func() bool { return rec.opens.Load() == peers })
	rec.mu.Lock()
	conns := make(map[uint64]*Conn, len(rec.conns))
	for id, c := range rec.conns {
		conns[id] = c
	}
	rec.mu.Unlock()

	// Hold the loop in a task while the round is handed out: every kick
	// lands in the loop's next batch.
	held, release := make(chan struct{}), make(chan struct{})
	if err := s.shards[0].loop.Run(func() { close(held); <-release }); err != nil {
		t.Fatal(err)
	}
	<-held
	subs0, writes0 := s.RingStats()
	for id, c := range conns {
		f := NewFrame()
		f.Buf = append(f.Buf[:0], byte(id))
		f.Parts = append(f.Parts, f.Buf)
		c.SendVolatile(f)
	}
	close(release)
	got := map[byte]int{}
	for _, c := range clients {
		p, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if len(p) != 1 {
			t.Fatalf("a frame of %d bytes; want 1", len(p))
		}
		got[p[0]]++
	}
	if len(got) != peers {
		t.Fatalf("%d distinct frames reached %d peers; want each its own", len(got), peers)
	}
	// The peers can read their frames before the loop that submitted them
	// has counted the submission: the counters are read on the loop, after
	// the batch that wrote them.
	var subs, writes uint64
	read := make(chan struct{})
	if err := s.shards[0].loop.Run(func() { subs, writes = s.RingStats(); close(read) }); err != nil {
		t.Fatal(err)
	}
	<-read
	subs, writes = subs-subs0, writes-writes0
	if base.Writev {
		if subs != 0 || writes != 0 {
			t.Fatalf("with Writev: %d submissions of %d writes; want none", subs, writes)
		}
		return
	}
	if subs != 1 || writes != peers {
		t.Fatalf("the round went out in %d submissions of %d writes; want 1 of %d", subs, writes, peers)
	}
}
