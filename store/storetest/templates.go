package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/store"
)

// testAreaTemplates: an Area keeps the template it was made with, one made
// without takes its kind's name, and FirstAreaOf finds the oldest Area of
// a template.
func testAreaTemplates(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := mkAccount(t, s, "a@x")
	b := mkAccount(t, s, "b@x")
	mk := func(owner store.AccountID, kind, template, name string) store.Area {
		t.Helper()
		ar, err := s.CreateArea(ctx, store.NewArea{Owner: owner, Kind: kind, Template: template, Name: name, W: 64, H: 48, Created: t0})
		if err != nil {
			t.Fatalf("CreateArea(%s, %s): %v", kind, template, err)
		}
		return ar
	}
	plain := mk(a.ID, "home", "empty", "plain")
	village := mk(b.ID, "village", "", "village")
	market := mk(a.ID, "village", "market", "market")
	village2 := mk(a.ID, "village", "village", "second village")
	for _, tt := range []struct {
		area store.Area
		want string
	}{{plain, "empty"}, {village, "village"}, {market, "market"}, {village2, "village"}} {
		if tt.area.Template != tt.want {
			t.Errorf("CreateArea %q: template %q; want %q", tt.area.Name, tt.area.Template, tt.want)
		}
		if got, err := s.Area(ctx, tt.area.ID); err != nil || got.Template != tt.want {
			t.Errorf("Area(%d).Template = %q, %v; want %q", tt.area.ID, got.Template, err, tt.want)
		}
	}
	if got, err := s.AreasOf(ctx, a.ID); err != nil || len(got) != 3 || got[0].Template != "empty" || got[1].Template != "market" || got[2].Template != "village" {
		t.Errorf("AreasOf(a) = %+v, %v; want templates empty, market, village", got, err)
	}
	for _, tt := range []struct {
		template string
		want     store.AreaID
		err      error
	}{
		{"village", village.ID, nil}, // the lowest id, whoever owns it
		{"market", market.ID, nil},
		{"empty", plain.ID, nil},
		{"arena", 0, store.ErrNotFound},
		{"", 0, store.ErrNotFound},
	} {
		got, err := s.FirstAreaOf(ctx, tt.template)
		wantErr(t, fmt.Sprintf("FirstAreaOf(%q)", tt.template), err, tt.err)
		if err == nil && got.ID != tt.want {
			t.Errorf("FirstAreaOf(%q) = area %d; want %d", tt.template, got.ID, tt.want)
		}
	}
	long := strings.Repeat("t", store.MaxTemplate+1)
	_, err := s.CreateArea(ctx, store.NewArea{Owner: a.ID, Kind: "home", Template: long, Name: "long", W: 8, H: 8, Created: t0})
	wantErr(t, "a template name past MaxTemplate", err, store.ErrInvalid)
}

// testInvitesBy: the invites an account made that can still be redeemed,
// newest first, bounded by the limit.
func testInvitesBy(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := mkAccount(t, s, "owner@x")
	other := mkAccount(t, s, "other@x")
	guest := mkAccount(t, s, "guest@x")
	home := mkArea(t, s, owner.ID, "home")
	yard := mkArea(t, s, owner.ID, "yard")
	for _, inv := range []store.Invite{
		{Code: "A-OLDEST", Area: home.ID, CreatedBy: owner.ID, UsesLeft: 3, Expires: at(time.Hour), Created: at(1 * time.Second)},
		{Code: "B-YARD", Area: yard.ID, CreatedBy: owner.ID, UsesLeft: 1, Expires: at(2 * time.Hour), Created: at(2 * time.Second)},
		{Code: "C-SHORT", Area: home.ID, CreatedBy: owner.ID, UsesLeft: 5, Expires: at(time.Minute), Created: at(3 * time.Second)},
		{Code: "D-ONE", Area: home.ID, CreatedBy: owner.ID, UsesLeft: 1, Expires: at(time.Hour), Created: at(4 * time.Second)},
		{Code: "E-NONE", Area: home.ID, CreatedBy: owner.ID, UsesLeft: 0, Expires: at(time.Hour), Created: at(5 * time.Second)},
		{Code: "F-OTHERS", Area: home.ID, CreatedBy: other.ID, UsesLeft: 1, Expires: at(time.Hour), Created: at(6 * time.Second)},
	} {
		if err := s.CreateInvite(ctx, inv); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RedeemInvite(ctx, "D-ONE", guest.ID, at(10*time.Second)); err != nil { // its last use
		t.Fatal(err)
	}
	codes := func(now time.Duration, limit int) []string {
		t.Helper()
		invs, err := s.InvitesBy(ctx, owner.ID, at(now), limit)
		if err != nil {
			t.Fatalf("InvitesBy(owner, %v, %d): %v", now, limit, err)
		}
		var out []string
		for _, inv := range invs {
			out = append(out, inv.Code)
		}
		return out
	}
	tests := []struct {
		name  string
		now   time.Duration
		limit int
		want  string
	}{
		{"redeemable, newest first", 10 * time.Second, 10, "C-SHORT B-YARD A-OLDEST"},
		{"limited", 10 * time.Second, 2, "C-SHORT B-YARD"},
		{"at an expiry", time.Minute, 10, "B-YARD A-OLDEST"},
		{"later", 90 * time.Minute, 10, "B-YARD"},
		{"all expired", 3 * time.Hour, 10, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(codes(tt.now, tt.limit), " "); got != tt.want {
			t.Errorf("%s: InvitesBy = %q; want %q", tt.name, got, tt.want)
		}
	}
	invs, err := s.InvitesBy(ctx, owner.ID, at(10*time.Second), 1)
	want := store.Invite{Code: "C-SHORT", Area: home.ID, CreatedBy: owner.ID, UsesLeft: 5, Expires: at(time.Minute), Created: at(3 * time.Second)}
	if err != nil || len(invs) != 1 || invs[0].Code != want.Code || invs[0].Area != want.Area || invs[0].CreatedBy != want.CreatedBy ||
		invs[0].UsesLeft != want.UsesLeft || !invs[0].Expires.Equal(want.Expires) || !invs[0].Created.Equal(want.Created) {
		t.Errorf("InvitesBy(owner, limit 1) = %+v, %v; want [%+v]", invs, err, want)
	}
	if invs, err := s.InvitesBy(ctx, guest.ID, t0, 10); err != nil || len(invs) != 0 {
		t.Errorf("InvitesBy(an account that made none) = %+v, %v; want none", invs, err)
	}
	_, err = s.InvitesBy(ctx, owner.ID, t0, 0)
	wantErr(t, "InvitesBy with limit 0", err, store.ErrInvalid)
}

// LegacyArea is an Area as a ley before templates stored it: kind, no
// template.
type LegacyArea struct {
	Kind string
	ID   store.AreaID
}

// RunLegacyTemplates checks migration 4, which gave every Area a template:
// an Area stored before it gets its kind's name. open must return a Store
// whose areas table held exactly the given Areas (their kinds, owned by
// an account of open's making) when it was migrated to the latest
// version, with their ids filled in, and arrange its cleanup.
func RunLegacyTemplates(t *testing.T, open func(t *testing.T, legacy []LegacyArea) store.Store) {
	legacy := []LegacyArea{{Kind: "village"}, {Kind: "home"}, {Kind: "arena"}, {Kind: "village"}}
	s := open(t, legacy)
	ctx := t.Context()
	for _, l := range legacy {
		a, err := s.Area(ctx, l.ID)
		if err != nil || a.Template != l.Kind || a.Kind != l.Kind {
			t.Errorf("Area(%d) after migrating = kind %q, template %q, %v; want both %q", l.ID, a.Kind, a.Template, err, l.Kind)
		}
	}
	first, err := s.FirstAreaOf(ctx, "village")
	if err != nil || first.ID != legacy[0].ID {
		t.Errorf("FirstAreaOf(village) = area %d, %v; want the first legacy village %d", first.ID, err, legacy[0].ID)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Errorf("Migrate again: %v", err)
	}
}

// LegacyStore is a store that can be rolled back to an older schema and
// seeded with rows as that schema had them (each backend's export_test.go).
type LegacyStore interface {
	RollBack(ctx context.Context, version int64) error
	InsertLegacyAccount(ctx context.Context, email string) (store.AccountID, error)
	InsertLegacyArea(ctx context.Context, owner store.AccountID, kind string) (store.AreaID, error)
	Migrate(ctx context.Context) error
}

// SeedLegacy rolls s back to schema version, stores legacy's Areas (one
// owner) as that schema had them, filling in their ids, and migrates s
// up again: what RunLegacyTemplates' open function does on any backend.
func SeedLegacy(t *testing.T, s LegacyStore, version int64, legacy []LegacyArea) {
	t.Helper()
	ctx := t.Context()
	if err := s.RollBack(ctx, version); err != nil {
		t.Fatal(err)
	}
	owner, err := s.InsertLegacyAccount(ctx, "legacy@x")
	if err != nil {
		t.Fatal(err)
	}
	for i := range legacy {
		if legacy[i].ID, err = s.InsertLegacyArea(ctx, owner, legacy[i].Kind); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}

// SeedLegacyEmails rolls s back to schema version 1, stores an account
// (and its password identity) with each of legacy's emails exactly as
// given, and migrates s up again: what RunLegacyEmails' open function
// does on any backend. It returns the accounts' ids in legacy's order.
func SeedLegacyEmails(t *testing.T, s LegacyStore, legacy []string) []store.AccountID {
	t.Helper()
	ctx := t.Context()
	if err := s.RollBack(ctx, 1); err != nil {
		t.Fatal(err)
	}
	ids := make([]store.AccountID, len(legacy))
	for i, e := range legacy {
		var err error
		if ids[i], err = s.InsertLegacyAccount(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return ids
}
