package director

import (
	"context"
	"testing"
	"time"

	"github.com/leyworks/ley/store"
)

// TestFailedJoinChangesNothing: a join to an Area that cannot start (its
// template is not in the content the hosts have) is refused, and the
// player's character stays where it was: a failed join moves nothing.
func TestFailedJoinChangesNothing(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	c, me := r.player("wanderer")
	home, err := c.CreateArea(ctx, "Home", "home", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Join(ctx, home.ID); err != nil {
		t.Fatalf("join home: %v", err)
	}
	broken, err := r.store.CreateArea(ctx, store.NewArea{Owner: store.AccountID(me.ID), Kind: "village", Template: "no-such-template", Name: "Broken", W: 32, H: 32, Seed: 1, Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	before, err := r.store.Character(ctx, store.AccountID(me.ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Join(ctx, uint32(broken.ID)); err == nil {
		t.Fatal("a join to an Area that cannot start succeeded")
	}
	after, err := r.store.Character(ctx, store.AccountID(me.ID))
	if err != nil {
		t.Fatal(err)
	}
	if after.Area != before.Area || after.Version != before.Version {
		t.Fatalf("the character is in Area %d (version %d) after the failed join; it was in %d (version %d)", after.Area, after.Version, before.Area, before.Version)
	}
}
