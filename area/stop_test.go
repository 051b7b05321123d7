package area

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/leyworks/ley/area/areatest"
	"github.com/leyworks/ley/net/control"
)

// TestAStoppingHostTellsEveryClose: a host that stops (its context done,
// as on SIGTERM) tells the director of every Area's close before it
// closes its link. It used to close the link as soon as its Areas had
// unloaded, and the closes still queued for the director went with it: a
// host stopped with 4,000 homes left its director 319 Areas to learn of
// only from the link's end, which for a host on another machine holds
// them until its lease runs out.
func TestAStoppingHostTellsEveryClose(t *testing.T) {
	d := newDirector(t)
	d.AutoAck.Store(true)
	cfg := DefaultConfig()
	cfg.Director = d.Addr()
	cfg.SpawnToken = "spawn-token"
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Name = t.Name()
	cfg.ShutdownGrace = 0
	cfg.PoolSize = 512
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	if _, err := d.Registered(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	const areas = 400
	for id := uint32(1); id <= areas; id++ {
		d.spawn(id, 16, 16)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the host did not stop")
	}
	closed := map[uint32]bool{}
	for len(closed) < areas {
		m, err := areatest.Expect[*control.AreaClosed](d.Director, 5*time.Second)
		if err != nil {
			break // the link has ended: nothing more comes
		}
		closed[m.Area] = true
	}
	if len(closed) != areas {
		t.Fatalf("the director was told of %d Areas' closes before the link ended; want all %d", len(closed), areas)
	}
}

// TestAHostWithHundredsOfAreasRegistersAgain: a host whose link comes
// back lists every Area it runs in its register, and with hundreds of
// them the list is past what a director reads before the host's
// credentials (control.MaxRegisterFrameSize): it sends them in a frame of
// their own (control.Conn.SendRegister). Its register used to be one
// frame, which a restarted director refused ("frame too large") for as
// long as the host tried, until its lease ended its players' sessions.
func TestAHostWithHundredsOfAreasRegistersAgain(t *testing.T) {
	_, d := testHost(t, func(c *Config) { c.PoolSize = 1024 })
	const areas = 600
	for id := uint32(1); id <= areas; id++ {
		d.spawn(id, 16, 16)
	}
	d.DropLink()
	reg, err := d.Registered(20 * time.Second)
	if err != nil {
		t.Fatalf("the host did not register again: %v", err)
	}
	if len(reg.Areas) != areas {
		t.Fatalf("the host registered again with %d Areas; want its %d", len(reg.Areas), areas)
	}
}
