package director

import (
	"context"
	"testing"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
)

// twoAreas makes A and B (16x16 homes owned by the client's account) with
// a portal A(5,5) -> B(2,2) and B(6,6) -> A(3,3).
func twoAreas(t testing.TB, c *dirclient.Client) (a, b dirclient.Area) {
	t.Helper()
	ctx := context.Background()
	var err error
	if a, err = c.CreateArea(ctx, "A", "home", 16, 16); err != nil {
		t.Fatal(err)
	}
	if b, err = c.CreateArea(ctx, "B", "home", 16, 16); err != nil {
		t.Fatal(err)
	}
	if err := c.SetPortals(ctx, a.ID, []dirclient.Portal{{X: 5, Y: 5, ToArea: b.ID, ToX: 2, ToY: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetPortals(ctx, b.ID, []dirclient.Portal{{X: 6, Y: 6, ToArea: a.ID, ToX: 3, ToY: 3}}); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// walkInto sends a move-to onto (x, y) and returns the portal_moved; a
// refused or blocked crossing fails the test with its reason.
func (p *peer) walkInto(seq uint32, x, y int32) *wire.PortalMoved {
	p.t.Helper()
	p.send(&wire.Intent{Seq: seq, Kind: wire.IntentMoveTo, Target: wire.Cell{X: x, Y: y}})
	m := p.until(func(m wire.Message) bool {
		switch m.(type) {
		case *wire.PortalMoved, *wire.PortalTransferRejected, *wire.PortalBlocked:
			return true
		}
		r, ok := m.(*wire.IntentResult)
		return ok && r.Seq == seq
	})
	moved, ok := m.(*wire.PortalMoved)
	if !ok {
		p.t.Fatalf("crossing onto (%d,%d): got %s %+v, not portal_moved", x, y, m.Type(), m)
	}
	return moved
}

// TestPortalRoundTrip: a player crosses A -> B -> A, arriving each time on
// the portal's destination square, and the store follows.
func TestPortalRoundTrip(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	c, acct := r.player("ann")
	a, b := twoAreas(t, c)
	j, err := c.Join(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := connect(t, j)
	moved := p.walkInto(1, 5, 5)
	if moved.Area != b.ID {
		t.Fatalf("portal_moved to area %d; want B (%d)", moved.Area, b.ID)
	}
	pb, ack := connect(t, dirclient.Join{Grant: moved.Grant, WSURL: moved.WSURL, JoinID: moved.JoinID})
	if ack.Area != b.ID {
		t.Fatalf("hello_ack in area %d; want B", ack.Area)
	}
	pb.snapshot(0)
	if s := pb.you(); s.X != 2 || s.Y != 2 {
		t.Fatalf("arrived in B at (%d,%d); want (2,2)", s.X, s.Y)
	}
	if ch, err := r.store.Character(ctx, store.AccountID(acct.ID)); err != nil || ch.Area != store.AreaID(b.ID) {
		t.Fatalf("store: character %+v, %v; want in B", ch, err)
	}
	back := pb.walkInto(1, 6, 6)
	if back.Area != a.ID {
		t.Fatalf("second crossing to %d; want A", back.Area)
	}
	pa, _ := connect(t, dirclient.Join{Grant: back.Grant, WSURL: back.WSURL, JoinID: back.JoinID})
	pa.snapshot(0)
	if s := pa.you(); s.X != 3 || s.Y != 3 {
		t.Fatalf("back in A at (%d,%d); want (3,3)", s.X, s.Y)
	}
}

// TestPortalRefusals: a non-member of B is refused with the reason and
// stays in A; a B that cannot start (its snapshot is unreadable) refuses
// too, and the player stays in A.
func TestPortalRefusals(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	owner, _ := r.player("owner")
	a, b := twoAreas(t, owner)
	guest, gacct := r.player("guest")
	code, _ := owner.Invite(ctx, a.ID, 1)
	if _, err := guest.Redeem(ctx, code); err != nil {
		t.Fatal(err)
	}
	j, err := guest.Join(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := connect(t, j)
	p.send(&wire.Intent{Seq: 1, Kind: wire.IntentMoveTo, Target: wire.Cell{X: 5, Y: 5}})
	rej := p.until(func(m wire.Message) bool { _, ok := m.(*wire.PortalTransferRejected); return ok }).(*wire.PortalTransferRejected)
	if rej.Reason != wire.CodeNotMember {
		t.Fatalf("non-member crossing: %v; want NOT_MEMBER", rej.Reason)
	}
	if ch, _ := r.store.Character(ctx, store.AccountID(gacct.ID)); ch.Area != store.AreaID(a.ID) {
		t.Fatalf("refused player's character is in area %d; want A", ch.Area)
	}
	p.snapshotWhere(func(you wire.EntityState) bool { return you.Flags&wire.FlagTransit == 0 })
	if s := p.you(); s.X == 5 && s.Y == 5 {
		t.Fatal("the refused player still stands on the portal")
	}

	// B cannot start: give it an unreadable snapshot, then let the owner try.
	ep, err := r.store.BeginIncarnation(ctx, store.AreaID(b.ID), store.TokenHash{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.WriteSnapshot(ctx, store.Snapshot{Area: store.AreaID(b.ID), Epoch: ep, Seq: 1, Blob: []byte{0xff, 0xff}}); err != nil {
		t.Fatal(err)
	}
	oj, err := owner.Join(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	op, _ := connect(t, oj)
	op.send(&wire.Intent{Seq: 1, Kind: wire.IntentMoveTo, Target: wire.Cell{X: 5, Y: 5}})
	rej = op.until(func(m wire.Message) bool { _, ok := m.(*wire.PortalTransferRejected); return ok }).(*wire.PortalTransferRejected)
	if rej.Reason != wire.CodeInternal {
		t.Fatalf("crossing to a B that cannot start: %v; want INTERNAL", rej.Reason)
	}
}
