package director

import (
	"context"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/wire"
)

// bodiesOf counts, from the hosts' own inspection of their worlds, the
// player bodies each Area holds.
func bodiesOf(t testing.TB, admin *dirclient.Client) map[uint32]int {
	t.Helper()
	hosts, err := admin.Inspect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint32]int{}
	for _, h := range hosts {
		if h.Error != "" {
			t.Fatalf("host %d: %s", h.Host, h.Error)
		}
		for _, a := range h.Areas {
			out[a.Area] += a.Players
		}
	}
	return out
}

// TestOneCharacterOneArea plays the reported sequence that bound one
// character in two Areas: join A, close the connection cleanly (the body
// waits there for a resume), join B through the director (accepted), then
// resume the old session of A. The join to B must end the character's
// presence in A at once: the resume is refused BAD_TOKEN, B's session is
// not taken over, and A holds no body (not even an away one for the
// grace). Then the same with A's connection still open: it is taken over
// (taken_over, then the close) the moment B's join is answered.
func TestOneCharacterOneArea(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.ResumeGrace = time.Minute })
	ctx := context.Background()
	c, acct := r.player("ann")
	r.admin(acct)
	a, err := c.CreateArea(ctx, "A", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.CreateArea(ctx, "B", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}

	ja, err := c.Join(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	pa, ackA := connect(t, ja)
	pa.snapshot(0)
	pa.c.Close(1000, "") // a clean close: the body waits in A for a resume
	waitFor(t, "A's body away", func() bool { return bodiesOf(t, c)[a.ID] == 1 })

	jb, err := c.Join(ctx, b.ID)
	if err != nil {
		t.Fatalf("join B after leaving A: %v", err)
	}
	if got := bodiesOf(t, c); got[a.ID] != 0 {
		t.Fatalf("A holds %d bodies of the character after its join to B was answered; want 0", got[a.ID])
	}
	pb, _ := connect(t, jb)
	pb.snapshot(0)

	old, err := dialWS(ja.WSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close(1000, "")
	msg, _ := wire.Encode(&wire.Resume{Token: ackA.ResumeToken, JoinID: ja.JoinID})
	if err := old.WriteMessage(msg); err != nil {
		t.Fatal(err)
	}
	_ = old.NetConn().SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		raw, err := old.ReadMessage()
		if err != nil {
			t.Fatalf("no answer to the resume of A's old session: %v", err)
		}
		m, err := wire.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, bound := m.(*wire.HelloAck); bound {
			t.Fatal("the old session of A resumed: the character is bound in A and B at once")
		}
		if e, ok := m.(*wire.Error); ok {
			if e.Code != wire.CodeBadToken || e.JoinID != ja.JoinID {
				t.Fatalf("resume of A's old session: error{%v, join %d}; want BAD_TOKEN, join %d", e.Code, e.JoinID, ja.JoinID)
			}
			break
		}
	}
	pb.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	pb.until(func(m wire.Message) bool {
		if _, over := m.(*wire.TakenOver); over {
			t.Fatal("B's session was taken over by the resume of A's")
		}
		s, ok := m.(*wire.Snapshot)
		return ok && s.AckSeq >= 1
	})
	if got := bodiesOf(t, c); got[a.ID] != 0 || got[b.ID] != 1 {
		t.Fatalf("bodies: A %d, B %d; want 0 and 1", got[a.ID], got[b.ID])
	}

	// Bound in B, a join to A takes B's session over before it is answered.
	ja2, err := c.Join(ctx, a.ID)
	if err != nil {
		t.Fatalf("join A while playing in B: %v", err)
	}
	pb.until(func(m wire.Message) bool { _, over := m.(*wire.TakenOver); return over })
	if got := bodiesOf(t, c); got[b.ID] != 0 {
		t.Fatalf("B holds %d bodies after the join to A; want 0", got[b.ID])
	}
	pa2, _ := connect(t, ja2)
	pa2.snapshot(0)
	if got := bodiesOf(t, c); got[a.ID] != 1 || got[b.ID] != 0 {
		t.Fatalf("bodies: A %d, B %d; want 1 and 0", got[a.ID], got[b.ID])
	}
}
