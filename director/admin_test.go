package director

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
)

// TestAdminActs: an admin finds an account by a part of its name, sees
// where its character is and where it is bound; gives it membership of an
// Area (it joins), takes it (its body leaves at once, taken over, and its
// next join is refused), gives it back, and ends its sessions (its token
// stops working and its body leaves). The owner's membership stays; a
// player who is not an admin is refused every act; each act is in the
// audit log, in order, with who made it.
func TestAdminActs(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	admin, adminAcct := r.player("warden")
	r.admin(adminAcct)
	village, err := admin.CreateArea(ctx, "Commons", "village", 32, 32)
	if err != nil {
		t.Fatal(err)
	}
	pia, piaAcct := r.player("piatrix")

	found, more, err := admin.FindAccounts(ctx, "IATRI", 10)
	if err != nil || more || len(found) != 1 || found[0].ID != piaAcct.ID || found[0].Character != nil || found[0].BoundIn != 0 {
		t.Fatalf("finding pia: %+v (more %v), %v; want her alone, never joined", found, more, err)
	}
	if _, err := pia.Join(ctx, village.ID); refusal(t, err) != "NO_SUCH_AREA" {
		t.Fatalf("a join before membership: %v; want NO_SUCH_AREA", err)
	}

	if err := admin.GiveMembership(ctx, village.ID, piaAcct.ID, "builder"); err != nil {
		t.Fatal(err)
	}
	j, err := pia.Join(ctx, village.ID)
	if err != nil {
		t.Fatalf("a join after the admin gave membership: %v", err)
	}
	p, _ := connect(t, j)
	waitFor(t, "pia shown bound in the village", func() bool {
		found, _, err := admin.FindAccounts(ctx, "piatrix", 10)
		return err == nil && len(found) == 1 && found[0].BoundIn == village.ID && found[0].Character != nil && found[0].Character.Area == village.ID
	})

	if err := admin.TakeMembership(ctx, village.ID, piaAcct.ID); err != nil {
		t.Fatal(err)
	}
	p.until(func(m wire.Message) bool { _, ok := m.(*wire.TakenOver); return ok })
	if _, err := pia.Join(ctx, village.ID); refusal(t, err) != "NO_SUCH_AREA" {
		t.Fatalf("a join after the membership was taken: %v; want NO_SUCH_AREA", err)
	}
	if err := admin.TakeMembership(ctx, village.ID, piaAcct.ID); refusal(t, err) != "NO_SUCH_MEMBER" {
		t.Errorf("taking it again: %v; want NO_SUCH_MEMBER", err)
	}
	if err := admin.TakeMembership(ctx, village.ID, adminAcct.ID); refusal(t, err) != "OWNER_STAYS" {
		t.Errorf("taking the owner's membership: %v; want OWNER_STAYS", err)
	}

	if err := admin.GiveMembership(ctx, village.ID, piaAcct.ID, "member"); err != nil {
		t.Fatal(err)
	}
	j, err = pia.Join(ctx, village.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ = connect(t, j)
	if n, err := admin.EndSessions(ctx, piaAcct.ID); err != nil || n != 1 {
		t.Fatalf("ending pia's sessions: %d, %v; want 1", n, err)
	}
	p.until(func(m wire.Message) bool { _, ok := m.(*wire.TakenOver); return ok })
	if _, _, err := pia.Me(ctx); refusal(t, err) != "SESSION_EXPIRED" {
		t.Errorf("pia's token after her sessions ended: %v; want SESSION_EXPIRED", err)
	}
	if _, err := admin.EndSessions(ctx, 1<<40); refusal(t, err) != "NO_SUCH_ACCOUNT" {
		t.Errorf("ending an unknown account's sessions: %v; want NO_SUCH_ACCOUNT", err)
	}

	other, _ := r.player("nosy")
	for name, err := range map[string]error{
		"find":  func() error { _, _, err := other.FindAccounts(ctx, "", 10); return err }(),
		"end":   func() error { _, err := other.EndSessions(ctx, adminAcct.ID); return err }(),
		"give":  other.GiveMembership(ctx, village.ID, piaAcct.ID, "builder"),
		"take":  other.TakeMembership(ctx, village.ID, piaAcct.ID),
		"audit": func() error { _, _, err := other.Audit(ctx, 0, 10); return err }(),
	} {
		if refusal(t, err) != "FORBIDDEN" {
			t.Errorf("a player's %s: %v; want FORBIDDEN", name, err)
		}
	}

	changes, _, err := admin.Audit(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"account.logout", "member.give", "member.take", "member.give"}
	var got []string
	for _, ch := range changes {
		got = append(got, ch.Action)
		if ch.Actor != adminAcct.ID {
			t.Errorf("change %+v made by %d; want the admin %d", ch, ch.Actor, adminAcct.ID)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("the audit log: %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("the audit log: %v; want %v", got, want)
		}
	}
	if d, want := changes[3].Detail, fmt.Sprintf("account %d (piatrix): none -> builder", piaAcct.ID); d != want {
		t.Errorf("the first give reads %q; want %q", d, want)
	}
	if tg, want := changes[3].Target, fmt.Sprintf("area %d (Commons)", village.ID); tg != want {
		t.Errorf("the first give's target reads %q; want %q", tg, want)
	}
}

// TestTakingMembershipWaitsForACrossing: an admin takes the membership of
// an account whose body is crossing a portal (its host answers the
// eviction busy). The act is refused BODY_BUSY, with when to ask
// again, and nothing changed: the account is still a member. Taken once
// the body can leave, it is gone, body first. (Before, the membership
// went first and the busy body stayed: a crossing refused brought it back
// into an Area it was no longer a member of.)
func TestTakingMembershipWaitsForACrossing(t *testing.T) {
	r := fakeHostRealm(t, nil)
	ctx := context.Background()
	f := dialFakeHost(t, r, "fake")
	admin, adminAcct := r.player("warden")
	r.admin(adminAcct)
	village, err := admin.CreateArea(ctx, "Commons", "village", 32, 32)
	if err != nil {
		t.Fatal(err)
	}
	pia, piaAcct := r.player("piatrix")
	if err := admin.GiveMembership(ctx, village.ID, piaAcct.ID, "member"); err != nil {
		t.Fatal(err)
	}
	f.serveJoin(pia, village.ID)

	evict := func(answer func(*control.Evict) *control.Evicted) error {
		taken := make(chan error, 1)
		go func() { taken <- admin.TakeMembership(ctx, village.ID, piaAcct.ID) }()
		ev := f.await("evict", func(m control.Message) bool {
			e, ok := m.(*control.Evict)
			return ok && e.Account == piaAcct.ID
		}).(*control.Evict)
		f.send(answer(ev))
		return <-taken
	}
	isMember := func() bool {
		t.Helper()
		ms, err := admin.Members(ctx, village.ID)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ms, func(m dirclient.Member) bool { return m.Account == piaAcct.ID })
	}

	err = evict(func(e *control.Evict) *control.Evicted {
		return &control.Evicted{Area: e.Area, Account: e.Account, Busy: true}
	})
	if e := refusalOf(t, err); e.Code != "BODY_BUSY" || e.RetryAfter <= 0 {
		t.Fatalf("taking the membership of a crossing body: %+v; want BODY_BUSY with a Retry-After", e)
	}
	if !isMember() {
		t.Fatal("the refused take changed the membership")
	}
	err = evict(func(e *control.Evict) *control.Evicted {
		return &control.Evicted{Area: e.Area, Account: e.Account, Absent: true}
	})
	if err != nil {
		t.Fatalf("taking it once the body could leave: %v", err)
	}
	if isMember() {
		t.Fatal("still a member after the take")
	}
}
