package director

import (
	"context"
	"testing"

	"github.com/leyworks/ley/net/wire"
)

// TestAdminAreaDetailAndSpectate: an admin reads an Area's detail (its
// owner, template, members with their roles, the invites to it that can
// still be redeemed, its live incarnation) and spectates it: the grant's
// hello binds a spectator with no body (entity 0) that sees the player
// there move, and whose intents are refused SPECTATOR; the Area's bound
// accounts stay the player's. A player who is not an admin is refused
// both (FORBIDDEN); an unknown Area is NO_SUCH_AREA.
func TestAdminAreaDetailAndSpectate(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	admin, adminAcct := r.player("warden")
	r.admin(adminAcct)
	owner, ownerAcct := r.player("olwen")
	village, err := owner.CreateArea(ctx, "Green", "village", 32, 32)
	if err != nil {
		t.Fatal(err)
	}
	code, err := owner.Invite(ctx, village.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	pia, piaAcct := r.player("piatrix")
	if err := admin.GiveMembership(ctx, village.ID, piaAcct.ID, "builder"); err != nil {
		t.Fatal(err)
	}

	d, err := admin.AreaDetail(ctx, village.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != village.ID || d.Template != village.Template || d.OwnerAccount == nil || d.OwnerAccount.ID != ownerAcct.ID || d.Live != nil {
		t.Fatalf("detail %+v; want the village, owned by olwen, not live", d)
	}
	roles := map[uint64]string{}
	for _, m := range d.Members {
		roles[m.ID] = m.Role
	}
	if d.MembersTotal != 2 || roles[ownerAcct.ID] != "owner" || roles[piaAcct.ID] != "builder" {
		t.Fatalf("members %+v (total %d); want olwen owner, piatrix builder", d.Members, d.MembersTotal)
	}
	if len(d.Invites) != 1 || d.Invites[0].Code != code || d.Invites[0].UsesLeft != 3 {
		t.Fatalf("invites %+v; want %s with 3 uses", d.Invites, code)
	}

	j, err := pia.Join(ctx, village.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, pAck := connect(t, j)
	p.snapshotWhere(func(wire.EntityState) bool { return true })

	sj, err := admin.Spectate(ctx, village.ID)
	if err != nil {
		t.Fatal(err)
	}
	s, sAck := connect(t, sj)
	if sAck.Entity != 0 || sAck.ResumeToken != "" {
		t.Fatalf("the spectator's hello_ack %+v; want entity 0, no resume token", sAck)
	}
	start := p.you()
	s.until(func(m wire.Message) bool {
		_, is := m.(*wire.Snapshot)
		e, in := s.v.Entities[pAck.Entity]
		return is && in && e.X == start.X && e.Y == start.Y
	})
	dir, dx := wire.DirE, int32(1)
	if start.X > 16 {
		dir, dx = wire.DirW, -1
	}
	p.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: dir})
	s.until(func(m wire.Message) bool {
		_, is := m.(*wire.Snapshot)
		e, in := s.v.Entities[pAck.Entity]
		return is && in && e.X == start.X+dx
	})
	s.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirS})
	res := s.until(func(m wire.Message) bool { _, is := m.(*wire.IntentResult); return is }).(*wire.IntentResult)
	if res.Seq != 1 || res.Code != wire.CodeSpectator {
		t.Fatalf("a spectator's intent answered %+v; want SPECTATOR", res)
	}
	d, err = admin.AreaDetail(ctx, village.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Live == nil || len(d.Live.Accounts) != 1 || d.Live.Accounts[0] != piaAcct.ID {
		t.Fatalf("live %+v; want piatrix alone bound (the spectator is no player)", d.Live)
	}

	if _, err := pia.Spectate(ctx, village.ID); refusal(t, err) != "FORBIDDEN" {
		t.Errorf("a player's spectate: %v; want FORBIDDEN", err)
	}
	if _, err := pia.AreaDetail(ctx, village.ID); refusal(t, err) != "FORBIDDEN" {
		t.Errorf("a player's area detail: %v; want FORBIDDEN", err)
	}
	if _, err := admin.Spectate(ctx, 1<<30); refusal(t, err) != "NO_SUCH_AREA" {
		t.Errorf("spectating no area: %v; want NO_SUCH_AREA", err)
	}
}
