package director

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestMyInvites: GET /v1/me/invites lists the invites the account made
// that can still be redeemed, newest first, with their Area, expiry and
// uses left; a used-up one and another account's are not listed.
func TestMyInvites(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0 })
	ctx := context.Background()
	owner, _ := r.player("inviter")
	guest, _ := r.player("guest")
	home, err := owner.CreateArea(ctx, "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	yard, err := owner.CreateArea(ctx, "Yard", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	if got, more, err := owner.MyInvites(ctx); err != nil || len(got) != 0 || more {
		t.Fatalf("before any invite: %+v, %v, %v; want none", got, more, err)
	}
	before := time.Now()
	once, err := owner.Invite(ctx, home.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	three, err := owner.Invite(ctx, yard.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := guest.Redeem(ctx, once); err != nil {
		t.Fatal(err)
	}
	if _, err := guest.Redeem(ctx, three); err != nil {
		t.Fatal(err)
	}
	got, more, err := owner.MyInvites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if more || len(got) != 1 {
		t.Fatalf("invites %+v (more %v); want the one with uses left", got, more)
	}
	inv := got[0]
	week := 7 * 24 * time.Hour
	if inv.Code != three || inv.Area != yard.ID || inv.UsesLeft != 2 || inv.Expires.Before(before.Add(week-time.Minute)) || inv.Expires.After(time.Now().Add(week)) {
		t.Errorf("invite %+v; want %s to area %d, 2 uses left, expiring in a week", inv, three, yard.ID)
	}
	newer, err := owner.Invite(ctx, home.ID, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := owner.MyInvites(ctx); err != nil || len(got) != 2 || got[0].Code != newer || got[1].Code != three {
		t.Errorf("after a newer invite: %+v, %v; want %s then %s", got, err, newer, three)
	}
	if got, _, err := guest.MyInvites(ctx); err != nil || len(got) != 0 {
		t.Errorf("the guest's invites: %+v, %v; want none (it made none)", got, err)
	}
	if a := r.call(http.DefaultClient, "GET", "/v1/me/invites", "", ""); a.Status != http.StatusUnauthorized || a.Code != "UNAUTHORIZED" {
		t.Errorf("without a session: %d %s; want 401 UNAUTHORIZED", a.Status, a.Raw)
	}
}
