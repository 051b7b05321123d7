// Package storetest is the conformance suite every [store.Store] backend
// passes: one [Run] call from the backend's own test, so the backends
// cannot drift apart.
package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leyworks/ley/store"
)

// t0 is the suite's clock origin; times are whole milliseconds so that
// every backend round-trips them exactly.
var t0 = time.UnixMilli(1_700_000_000_000)

func at(d time.Duration) time.Time { return t0.Add(d) }

// Run runs the conformance suite. open must return a new, empty, migrated
// Store for each call and arrange its cleanup (Close and any database
// teardown) with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s store.Store)
	}{
		{"Migrate", testMigrate},
		{"Accounts", testAccounts},
		{"CanonicalEmails", testCanonicalEmails},
		{"Sessions", testSessions},
		{"AreasAndMembers", testAreasAndMembers},
		{"AreaTemplates", testAreaTemplates},
		{"Invites", testInvites},
		{"InvitesBy", testInvitesBy},
		{"Incarnations", testIncarnations},
		{"SnapshotIdempotency", testSnapshotIdempotency},
		{"EpochFencing", testEpochFencing},
		{"FencedCharacterWrites", testFencedCharacterWrites},
		{"GroupCommit", testGroupCommit},
		{"Characters", testCharacters},
		{"Transfers", testTransfers},
		{"TransferPendingAndExpiry", testTransferPendingAndExpiry},
		{"PruneTransfers", testPruneTransfers},
		{"RealmSettings", testRealmSettings},
		{"Changes", testChanges},
		{"AdminActs", testAdminActs},
		{"Samples", testSamples},
		{"ConcurrentSnapshots", testConcurrentSnapshots},
		{"ConcurrentGroupCommits", testConcurrentGroupCommits},
		{"ConcurrentTransferReplay", testConcurrentTransferReplay},
		{"OpposingCrossings", testOpposingCrossings},
		{"Leadership", testLeadership},
		{"MemberRoles", testMemberRoles},
		{"MemberArea", testMemberArea},
		{"HostRecords", testHostRecords},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.f(t, open(t)) })
	}
}

func mkAccount(t *testing.T, s store.Store, email string) store.Account {
	t.Helper()
	a, err := s.CreateAccount(t.Context(), store.NewAccount{Email: email, Name: "n " + email, PasswordPHC: "$argon2id$v=19$x", Created: t0})
	if err != nil {
		t.Fatalf("CreateAccount(%q): %v", email, err)
	}
	return a
}

func mkArea(t *testing.T, s store.Store, owner store.AccountID, name string) store.Area {
	t.Helper()
	a, err := s.CreateArea(t.Context(), store.NewArea{Owner: owner, Kind: "home", Name: name, W: 32, H: 16, Seed: 1<<63 + 7, Rules: []byte("rules"), Created: t0})
	if err != nil {
		t.Fatalf("CreateArea(%q): %v", name, err)
	}
	return a
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Errorf("%s: err = %v; want %v", what, err, want)
	}
}

func testMigrate(t *testing.T, s store.Store) {
	for i := range 2 {
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatalf("Migrate #%d: %v", i, err)
		}
	}
}

func testAccounts(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := mkAccount(t, s, "Ann@Example.org ")
	if a.ID == 0 || a.Email != "ann@example.org" || a.Name != "n Ann@Example.org " || a.Admin || !a.Created.Equal(t0) {
		t.Errorf("CreateAccount = %+v; want id>0, normalised email, created %v", a, t0)
	}
	got, err := s.Account(ctx, a.ID)
	if err != nil || got.Email != a.Email || !got.Created.Equal(t0) {
		t.Errorf("Account(%d) = %+v, %v; want %+v", a.ID, got, err, a)
	}
	got, id, err := s.AccountByEmail(ctx, "ANN@example.org")
	if err != nil || got.ID != a.ID || id.Account != a.ID || id.Provider != store.ProviderPassword || id.Subject != "ann@example.org" || id.PasswordPHC != "$argon2id$v=19$x" {
		t.Errorf("AccountByEmail = %+v, %+v, %v", got, id, err)
	}
	if err := s.UpdatePassword(ctx, a.ID, "$argon2id$v=19$new"); err != nil {
		t.Fatal(err)
	}
	if id, err := s.Identity(ctx, a.ID); err != nil || id.PasswordPHC != "$argon2id$v=19$new" {
		t.Errorf("Identity after UpdatePassword = %+v, %v", id, err)
	}
	if err := s.SetAdmin(ctx, a.ID, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Account(ctx, a.ID); !got.Admin {
		t.Errorf("Admin after SetAdmin(true) = false")
	}

	tests := []struct {
		name string
		err  error
		want error
	}{
		{"duplicate email", func() error {
			_, err := s.CreateAccount(ctx, store.NewAccount{Email: "ann@EXAMPLE.org", Name: "x"})
			return err
		}(), store.ErrDuplicate},
		{"invalid email", func() error { _, err := s.CreateAccount(ctx, store.NewAccount{Email: " "}); return err }(), store.ErrInvalid},
		{"second identity", s.AddIdentity(ctx, store.Identity{Account: a.ID, Provider: "github", Subject: "ann"}), store.ErrDuplicate},
		{"identity of unknown account", s.AddIdentity(ctx, store.Identity{Account: 999999, Provider: "github", Subject: "x"}), store.ErrNotFound},
		{"unknown account", func() error { _, err := s.Account(ctx, 999999); return err }(), store.ErrNotFound},
		{"unknown email", func() error { _, _, err := s.AccountByEmail(ctx, "nobody@x"); return err }(), store.ErrNotFound},
		{"identity unknown", func() error { _, err := s.Identity(ctx, 999999); return err }(), store.ErrNotFound},
		{"password unknown", s.UpdatePassword(ctx, 999999, "p"), store.ErrNotFound},
		{"admin unknown", s.SetAdmin(ctx, 999999, true), store.ErrNotFound},
	}
	for _, tt := range tests {
		wantErr(t, tt.name, tt.err, tt.want)
	}
}

// testCanonicalEmails: every spelling of one address (full-width
// letters, any case in either part, white space around) is one account:
// it cannot be created twice and each spelling finds it.
func testCanonicalEmails(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := mkAccount(t, s, "alice@t.local")
	for _, email := range []string{"ａlice@t.local", "ALICE@T.LOCAL", "alice@ｔ.LOCAL", " Alice@t.Local\t", "ＡＬＩＣＥ＠t.local"} {
		_, err := s.CreateAccount(ctx, store.NewAccount{Email: email, Name: "x", Created: t0})
		wantErr(t, fmt.Sprintf("CreateAccount(%q) beside alice@t.local", email), err, store.ErrDuplicate)
		if got, _, err := s.AccountByEmail(ctx, email); err != nil || got.ID != a.ID {
			t.Errorf("AccountByEmail(%q) = %d, %v; want account %d", email, got.ID, err, a.ID)
		}
	}
	for _, email := range []string{"alice@t.locals", "alice2@t.local", "a.lice@t.local"} {
		if _, _, err := s.AccountByEmail(ctx, email); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("AccountByEmail(%q) err = %v; want %v (another address)", email, err, store.ErrNotFound)
		}
	}
}

// RunLegacyEmails checks migration 2, which rewrote stored emails into
// [store.CanonicalEmail]'s form. open must return a Store whose accounts
// table held exactly the given emails (each its password identity's
// subject too, as ley stored them before migration 2: only trimmed and
// lower-cased) when it was migrated to the latest version, with their
// account ids in the same order, and arrange its cleanup.
func RunLegacyEmails(t *testing.T, open func(t *testing.T, legacy []string) (store.Store, []store.AccountID)) {
	legacy := []string{
		"ａlice@t.local",     // 0: full-width: becomes alice@t.local
		"bob@x",             // 1: already canonical
		"dup@x",             // 2: canonical, and ...
		"ｄup@x",             // 3: ... what this one would become: it keeps its form
		"carol@ｅxample.org", // 4: full-width domain
	}
	s, ids := open(t, legacy)
	if len(ids) != len(legacy) {
		t.Fatalf("open returned %d ids for %d legacy accounts", len(ids), len(legacy))
	}
	ctx := t.Context()
	tests := []struct {
		typed   string
		want    store.AccountID
		subject string
	}{
		{"alice@t.local", ids[0], "alice@t.local"},
		{"ａlice@t.local", ids[0], "alice@t.local"},
		{"Bob@X", ids[1], "bob@x"},
		{"dup@x", ids[2], "dup@x"},
		{"ｄup@x", ids[2], "dup@x"},
		{"carol@example.org", ids[4], "carol@example.org"},
	}
	for _, tt := range tests {
		a, id, err := s.AccountByEmail(ctx, tt.typed)
		if err != nil || a.ID != tt.want || id.Subject != tt.subject || a.Email != tt.subject {
			t.Errorf("AccountByEmail(%q) = account %d %q, subject %q, %v; want account %d, %q", tt.typed, a.ID, a.Email, id.Subject, err, tt.want, tt.subject)
		}
	}
	if a, err := s.Account(ctx, ids[3]); err != nil || a.Email != "ｄup@x" {
		t.Errorf("Account(%d) = %q, %v; want its legacy form kept (dup@x is taken)", ids[3], a.Email, err)
	}
	_, err := s.CreateAccount(ctx, store.NewAccount{Email: "ALICE@t.local", Name: "x", Created: t0})
	wantErr(t, "CreateAccount of a migrated address", err, store.ErrDuplicate)
	if err := s.Migrate(ctx); err != nil {
		t.Errorf("Migrate again: %v", err)
	}
}

func testSessions(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := mkAccount(t, s, "a@x")
	b := mkAccount(t, s, "b@x")
	h := store.HashToken("token-a")
	ss, err := s.CreateSession(ctx, h, a.ID, t0, 10*time.Minute, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if ss.Hash != h || ss.Account != a.ID || !ss.IdleExpires.Equal(at(10*time.Minute)) || !ss.Expires.Equal(at(time.Hour)) || ss.Idle != 10*time.Minute {
		t.Errorf("CreateSession = %+v", ss)
	}
	if _, err := s.CreateSession(ctx, h, b.ID, t0, time.Minute, time.Hour); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("CreateSession with a taken hash: err = %v; want ErrDuplicate", err)
	}

	// Touch every 9 minutes: the idle expiry moves, the absolute one never.
	steps := []struct {
		now     time.Duration
		touch   bool
		want    error
		idleExp time.Duration
	}{
		{0, false, nil, 10 * time.Minute},
		{9 * time.Minute, true, nil, 19 * time.Minute},
		{18 * time.Minute, true, nil, 28 * time.Minute},
		{27 * time.Minute, false, nil, 28 * time.Minute},
		{27 * time.Minute, true, nil, 37 * time.Minute},
		{36 * time.Minute, true, nil, 46 * time.Minute},
		{45 * time.Minute, true, nil, 55 * time.Minute},
		{54 * time.Minute, true, nil, 60 * time.Minute}, // capped at the absolute expiry
		{60 * time.Minute, false, store.ErrExpired, 60 * time.Minute},
		{60 * time.Minute, true, store.ErrExpired, 60 * time.Minute},
	}
	for _, st := range steps {
		var got store.Session
		var err error
		if st.touch {
			got, err = s.TouchSession(ctx, h, at(st.now))
		} else {
			got, err = s.SessionByTokenHash(ctx, h, at(st.now))
		}
		wantErr(t, fmt.Sprintf("at %v touch=%v", st.now, st.touch), err, st.want)
		if !got.IdleExpires.Equal(at(st.idleExp)) {
			t.Errorf("at %v touch=%v: idle expiry = %v; want %v", st.now, st.touch, got.IdleExpires, at(st.idleExp))
		}
	}

	// Idle expiry without touches.
	hb := store.HashToken("token-b")
	if _, err := s.CreateSession(ctx, hb, b.ID, t0, time.Minute, time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		now  time.Duration
		want error
	}{{59 * time.Second, nil}, {time.Minute, store.ErrExpired}, {2 * time.Minute, store.ErrExpired}} {
		_, err := s.SessionByTokenHash(ctx, hb, at(tt.now))
		wantErr(t, fmt.Sprintf("idle session at %v", tt.now), err, tt.want)
	}
	if _, err := s.TouchSession(ctx, hb, at(2*time.Minute)); !errors.Is(err, store.ErrExpired) {
		t.Errorf("TouchSession after idle expiry: err = %v; want ErrExpired", err)
	}

	// Revocation.
	h1, h2 := store.HashToken("b1"), store.HashToken("b2")
	for _, hh := range []store.TokenHash{h1, h2} {
		if _, err := s.CreateSession(ctx, hh, b.ID, t0, time.Hour, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RevokeSession(ctx, h1); err != nil {
		t.Fatal(err)
	}
	_, err = s.SessionByTokenHash(ctx, h1, t0)
	wantErr(t, "revoked session", err, store.ErrRevoked)
	_, err = s.TouchSession(ctx, h1, t0)
	wantErr(t, "touch revoked session", err, store.ErrRevoked)
	_, err = s.SessionByTokenHash(ctx, store.HashToken("nope"), t0)
	wantErr(t, "unknown session", err, store.ErrNotFound)
	wantErr(t, "revoke unknown session", s.RevokeSession(ctx, store.HashToken("nope")), store.ErrNotFound)
	// b has hb (expired but not revoked) and h2 not revoked.
	if n, err := s.RevokeAccountSessions(ctx, b.ID); err != nil || n != 2 {
		t.Errorf("RevokeAccountSessions = %d, %v; want 2, nil", n, err)
	}
	_, err = s.SessionByTokenHash(ctx, h2, t0)
	wantErr(t, "session after RevokeAccountSessions", err, store.ErrRevoked)

	// Prune: a's session expired at 60 min, b's all revoked.
	if n, err := s.PruneSessions(ctx, at(61*time.Minute)); err != nil || n != 4 {
		t.Errorf("PruneSessions = %d, %v; want 4, nil", n, err)
	}
	_, err = s.SessionByTokenHash(ctx, h, t0)
	wantErr(t, "pruned session", err, store.ErrNotFound)
}

func testAreasAndMembers(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := mkAccount(t, s, "a@x")
	b := mkAccount(t, s, "b@x")
	home := mkArea(t, s, a.ID, "home")
	if home.ID == 0 || home.Owner != a.ID || home.Kind != "home" || home.Template != "home" || home.W != 32 || home.H != 16 || home.Seed != 1<<63+7 ||
		string(home.Rules) != "rules" || home.Seq != 0 || home.Epoch != 0 || !home.LastPlayed.IsZero() || !home.Created.Equal(t0) {
		t.Errorf("CreateArea = %+v", home)
	}
	got, err := s.Area(ctx, home.ID)
	if err != nil || got.ID != home.ID || got.Seed != home.Seed || got.Name != "home" || got.Template != "home" || !got.LastPlayed.IsZero() {
		t.Errorf("Area = %+v, %v; want %+v", got, err, home)
	}
	if err := s.SetAreaRules(ctx, home.ID, []byte("portals")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Area(ctx, home.ID); err != nil || string(got.Rules) != "portals" {
		t.Errorf("rules after SetAreaRules = %q, %v; want portals", got.Rules, err)
	}
	if err := s.SetAreaRules(ctx, 99999, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetAreaRules of an unknown area: %v; want ErrNotFound", err)
	}
	village := mkArea(t, s, b.ID, "village")
	if role, err := s.MemberRole(ctx, home.ID, a.ID); err != nil || role != store.RoleOwner {
		t.Errorf("owner's role = %q, %v; want owner", role, err)
	}
	if err := s.AddMember(ctx, village.ID, a.ID, store.RoleMember, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"member twice", s.AddMember(ctx, village.ID, a.ID, store.RoleMember, t0), store.ErrDuplicate},
		{"unknown area", s.AddMember(ctx, 99999, a.ID, store.RoleMember, t0), store.ErrNotFound},
		{"unknown account", s.AddMember(ctx, village.ID, 99999, store.RoleMember, t0), store.ErrNotFound},
		{"area unknown", func() error { _, err := s.Area(ctx, 99999); return err }(), store.ErrNotFound},
		{"role of non-member", func() error { _, err := s.MemberRole(ctx, home.ID, b.ID); return err }(), store.ErrNotMember},
		{"invalid area", func() error {
			_, err := s.CreateArea(ctx, store.NewArea{Owner: a.ID, Kind: "home", W: 0, H: 1})
			return err
		}(), store.ErrInvalid},
		{"area of unknown owner", func() error {
			_, err := s.CreateArea(ctx, store.NewArea{Owner: 99999, Kind: "home", W: 1, H: 1})
			return err
		}(), store.ErrNotFound},
	}
	for _, tt := range tests {
		wantErr(t, tt.name, tt.err, tt.want)
	}
	for _, tt := range []struct {
		area    store.AreaID
		account store.AccountID
		want    bool
	}{{home.ID, a.ID, true}, {home.ID, b.ID, false}, {village.ID, a.ID, true}, {village.ID, b.ID, true}, {99999, a.ID, false}} {
		if got, err := s.IsMember(ctx, tt.area, tt.account); err != nil || got != tt.want {
			t.Errorf("IsMember(%d, %d) = %v, %v; want %v", tt.area, tt.account, got, err, tt.want)
		}
	}
	areas, err := s.AreasOf(ctx, a.ID)
	if err != nil || len(areas) != 2 || areas[0].ID != home.ID || areas[1].ID != village.ID {
		t.Errorf("AreasOf(a) = %+v, %v; want home, village", areas, err)
	}
	if areas, err := s.AreasOf(ctx, 99999); err != nil || len(areas) != 0 {
		t.Errorf("AreasOf(unknown) = %+v, %v; want none", areas, err)
	}
	ms, err := s.Members(ctx, village.ID)
	want := []store.Member{{Account: a.ID, Name: a.Name, Role: store.RoleMember, Added: at(time.Second)}, {Account: b.ID, Name: b.Name, Role: store.RoleOwner, Added: t0}}
	if a.ID > b.ID {
		want[0], want[1] = want[1], want[0]
	}
	if err != nil || len(ms) != 2 {
		t.Fatalf("Members = %+v, %v; want %+v", ms, err, want)
	}
	for i := range ms {
		if ms[i].Account != want[i].Account || ms[i].Name != want[i].Name || ms[i].Role != want[i].Role || !ms[i].Added.Equal(want[i].Added) {
			t.Errorf("Members[%d] = %+v; want %+v", i, ms[i], want[i])
		}
	}
}

func testInvites(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := mkAccount(t, s, "owner@x")
	area := mkArea(t, s, owner.ID, "village")
	var guests []store.Account
	for i := range 4 {
		guests = append(guests, mkAccount(t, s, fmt.Sprintf("g%d@x", i)))
	}
	for _, inv := range []store.Invite{
		{Code: "TWO", Area: area.ID, CreatedBy: owner.ID, UsesLeft: 2, Expires: at(time.Hour), Created: t0},
		{Code: "OLD", Area: area.ID, CreatedBy: owner.ID, UsesLeft: 5, Expires: at(time.Minute), Created: t0},
	} {
		if err := s.CreateInvite(ctx, inv); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, "duplicate code", s.CreateInvite(ctx, store.Invite{Code: "TWO", Area: area.ID, CreatedBy: owner.ID, UsesLeft: 1, Expires: at(time.Hour)}), store.ErrDuplicate)
	wantErr(t, "invite to unknown area", s.CreateInvite(ctx, store.Invite{Code: "X", Area: 99999, CreatedBy: owner.ID, UsesLeft: 1, Expires: at(time.Hour)}), store.ErrNotFound)

	tests := []struct {
		name    string
		code    string
		account store.AccountID
		now     time.Duration
		want    error
		member  bool
	}{
		{"first use", "TWO", guests[0].ID, 0, nil, true},
		{"member again spends nothing", "TWO", guests[0].ID, 0, nil, true},
		{"owner spends nothing", "TWO", owner.ID, 0, nil, true},
		{"second use", "TWO", guests[1].ID, 0, nil, true},
		{"used up", "TWO", guests[2].ID, 0, store.ErrUsedUp, false},
		{"expired", "OLD", guests[3].ID, time.Minute, store.ErrExpired, false},
		{"unknown code", "NOPE", guests[3].ID, 0, store.ErrNotFound, false},
	}
	for _, tt := range tests {
		got, err := s.RedeemInvite(ctx, tt.code, tt.account, at(tt.now))
		wantErr(t, tt.name, err, tt.want)
		if err == nil && got != area.ID {
			t.Errorf("%s: area = %d; want %d", tt.name, got, area.ID)
		}
		if m, err := s.IsMember(ctx, area.ID, tt.account); err != nil || m != tt.member {
			t.Errorf("%s: IsMember = %v, %v; want %v", tt.name, m, err, tt.member)
		}
	}
	if ms, _ := s.Members(ctx, area.ID); len(ms) != 3 {
		t.Errorf("members after redeeming = %d; want 3 (owner + 2 uses)", len(ms))
	}
}

func testIncarnations(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := mkAccount(t, s, "a@x")
	area := mkArea(t, s, a.ID, "home")
	for want := store.Epoch(1); want <= 3; want++ {
		if e, err := s.BeginIncarnation(ctx, area.ID, store.TokenHash{}); err != nil || e != want {
			t.Errorf("BeginIncarnation = %d, %v; want %d", e, err, want)
		}
	}
	if got, _ := s.Area(ctx, area.ID); got.Epoch != 3 || got.Placement != (store.TokenHash{}) {
		t.Errorf("Area = epoch %d, placement %x; want 3, none", got.Epoch, got.Placement)
	}
	placed := store.HashToken("placement credential")
	if e, err := s.BeginIncarnation(ctx, area.ID, placed); err != nil || e != 4 {
		t.Fatalf("BeginIncarnation with a placement = %d, %v", e, err)
	}
	if got, _ := s.Area(ctx, area.ID); got.Epoch != 4 || got.Placement != placed {
		t.Errorf("Area = epoch %d, placement %x; want 4, %x", got.Epoch, got.Placement, placed)
	}
	_, err := s.BeginIncarnation(ctx, 99999, store.TokenHash{})
	wantErr(t, "unknown area", err, store.ErrNotFound)
}

// live makes an account, its home Area live at epoch 1, and its character
// there.
func live(t *testing.T, s store.Store, email string) (store.Account, store.Area, store.Epoch) {
	t.Helper()
	a := mkAccount(t, s, email)
	area := mkArea(t, s, a.ID, "home of "+email)
	e, err := s.BeginIncarnation(t.Context(), area.ID, store.TokenHash{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.EnsureCharacter(t.Context(), a.ID, area.ID, t0); err != nil {
		t.Fatal(err)
	}
	return a, area, e
}

func testSnapshotIdempotency(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, area, e := live(t, s, "a@x")
	steps := []struct {
		seq      store.Seq
		blob     string
		x        int32
		applied  bool
		wantSeq  store.Seq
		wantBlob string
		wantX    int32
	}{
		{1, "s1", 1, true, 1, "s1", 1},
		{1, "s1'", 9, false, 1, "s1", 1}, // repeated
		{3, "s3", 3, true, 3, "s3", 3},
		{2, "s2", 2, false, 3, "s3", 3}, // older
		{3, "s3", 3, false, 3, "s3", 3}, // resent
		{4, "", 4, true, 4, "", 4},      // an empty blob is a blob
	}
	for i, st := range steps {
		res, err := s.WriteSnapshot(ctx, store.Snapshot{Area: area.ID, Epoch: e, Seq: st.seq, Blob: []byte(st.blob),
			Characters: []store.CharacterState{{Account: a.ID, X: st.x, Y: 5, State: []byte(st.blob)}}, At: at(time.Duration(i) * time.Second)})
		if err != nil {
			t.Fatalf("step %d: WriteSnapshot: %v", i, err)
		}
		if res.Applied != st.applied || (res.Characters == 1) != st.applied {
			t.Errorf("step %d seq %d: result = %+v; want applied=%v", i, st.seq, res, st.applied)
		}
		blob, seq, epoch, err := s.AreaSnapshot(ctx, area.ID)
		if err != nil || seq != st.wantSeq || string(blob) != st.wantBlob || epoch != e {
			t.Errorf("step %d: AreaSnapshot = %q, %d, %d, %v; want %q, %d, %d", i, blob, seq, epoch, err, st.wantBlob, st.wantSeq, e)
		}
		c, err := s.Character(ctx, a.ID)
		if err != nil || c.X != st.wantX || !c.Placed {
			t.Errorf("step %d: character = %+v, %v; want x=%d placed", i, c, err, st.wantX)
		}
	}
	got, _ := s.Area(ctx, area.ID)
	if !got.LastPlayed.Equal(at(5*time.Second)) || got.Seq != 4 {
		t.Errorf("Area after snapshots: seq %d, last played %v; want 4, %v", got.Seq, got.LastPlayed, at(5*time.Second))
	}
	if c, _ := s.Character(ctx, a.ID); c.Version != 4 { // 1 at creation + 3 applied writes
		t.Errorf("character version = %d; want 4", c.Version)
	}
	_, err := s.WriteSnapshot(ctx, store.Snapshot{Area: 99999, Epoch: 1, Seq: 1})
	wantErr(t, "snapshot of unknown area", err, store.ErrNotFound)
	// A seq no signed 64-bit column holds is refused, and changes nothing.
	_, err = s.WriteSnapshot(ctx, store.Snapshot{Area: area.ID, Epoch: e, Seq: 1 << 63, Blob: []byte("forged"), At: t0})
	wantErr(t, "snapshot seq 2^63", err, store.ErrInvalid)
	if blob, seq, _, _ := s.AreaSnapshot(ctx, area.ID); seq != 4 || string(blob) != "" {
		t.Errorf("after a refused seq: AreaSnapshot = %q, %d; want \"\", 4", blob, seq)
	}
}

func testEpochFencing(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, area, e1 := live(t, s, "a@x")
	write := func(e store.Epoch, seq store.Seq, blob string, x int32) (store.SnapshotResult, error) {
		return s.WriteSnapshot(ctx, store.Snapshot{Area: area.ID, Epoch: e, Seq: seq, Blob: []byte(blob),
			Characters: []store.CharacterState{{Account: a.ID, X: x}}, At: t0})
	}
	if _, err := write(e1, 5, "old incarnation", 5); err != nil {
		t.Fatal(err)
	}
	e2, err := s.BeginIncarnation(ctx, area.ID, store.TokenHash{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		epoch   store.Epoch
		seq     store.Seq
		want    error
		applied bool
	}{
		{"stale epoch, newer seq", e1, 9, store.ErrFenced, false},
		{"stale epoch, same seq", e1, 5, store.ErrFenced, false},
		{"future epoch", e2 + 1, 9, store.ErrFenced, false},
		{"current epoch continues the seq", e2, 6, nil, true},
		{"stale epoch after the new one wrote", e1, 7, store.ErrFenced, false},
	}
	for _, tt := range tests {
		res, err := write(tt.epoch, tt.seq, tt.name, int32(tt.seq))
		wantErr(t, tt.name, err, tt.want)
		if res.Applied != tt.applied {
			t.Errorf("%s: applied = %v; want %v", tt.name, res.Applied, tt.applied)
		}
	}
	blob, seq, epoch, _ := s.AreaSnapshot(ctx, area.ID)
	if string(blob) != "current epoch continues the seq" || seq != 6 || epoch != e2 {
		t.Errorf("AreaSnapshot = %q, %d, %d; want the current epoch's write at 6", blob, seq, epoch)
	}
	if c, _ := s.Character(ctx, a.ID); c.X != 6 {
		t.Errorf("character x = %d; want 6 (fenced writes change nothing)", c.X)
	}
}

func testFencedCharacterWrites(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, home, eh := live(t, s, "a@x")
	b, village, ev := live(t, s, "b@x")
	if err := s.AddMember(ctx, village.ID, a.ID, store.RoleMember, t0); err != nil {
		t.Fatal(err)
	}
	tr, err := s.MoveCharacter(ctx, store.Transfer{ID: "t1", Account: a.ID, From: home.ID, To: village.ID, X: 3, Y: 4, Placed: true, Created: t0, Expires: at(time.Minute)}, t0)
	if err != nil || tr.Status != store.TransferDone {
		t.Fatalf("MoveCharacter = %+v, %v", tr, err)
	}
	// The old Area still has a in its snapshot: a is skipped, the blob stored.
	res, err := s.WriteSnapshot(ctx, store.Snapshot{Area: home.ID, Epoch: eh, Seq: 1, Blob: []byte("home"),
		Characters: []store.CharacterState{{Account: a.ID, X: 99, Y: 99, State: []byte("stale")}}, At: t0})
	if err != nil || !res.Applied || res.Characters != 0 {
		t.Errorf("stale Area's snapshot = %+v, %v; want applied, 0 characters", res, err)
	}
	c, _ := s.Character(ctx, a.ID)
	if c.Area != village.ID || c.X != 3 || c.Y != 4 || len(c.State) != 0 {
		t.Errorf("character after the stale write = %+v; want in village at (3,4), its state untouched", c)
	}
	// The village writes both of its players.
	res, err = s.WriteSnapshot(ctx, store.Snapshot{Area: village.ID, Epoch: ev, Seq: 1, Blob: []byte("v"),
		Characters: []store.CharacterState{{Account: a.ID, X: 7, State: []byte("va")}, {Account: b.ID, X: 8, State: []byte("vb")}, {Account: 99999, X: 1}}, At: t0})
	if err != nil || !res.Applied || res.Characters != 2 {
		t.Errorf("village snapshot = %+v, %v; want applied, 2 characters", res, err)
	}
	if c, _ := s.Character(ctx, a.ID); c.X != 7 || string(c.State) != "va" {
		t.Errorf("character after the village's write = %+v", c)
	}
	// Holdings reads every stored blob and character state at once.
	var hs []store.Holding
	if err := s.Holdings(ctx, func(h store.Holding) error { hs = append(hs, h); return nil }); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"area home": false, "area v": false, "character va": false, "character vb": false}
	for _, h := range hs {
		switch {
		case h.Area == home.ID && h.Account == 0 && h.W == home.W && h.H == home.H:
			want["area "+string(h.State)] = true
		case h.Area == village.ID && h.Account == 0 && h.W == village.W && h.H == village.H:
			want["area "+string(h.State)] = true
		case h.Area == 0 && (h.Account == a.ID || h.Account == b.ID):
			want["character "+string(h.State)] = true
		}
	}
	for what, seen := range want {
		if !seen {
			t.Errorf("Holdings = %+v: no %s", hs, what)
		}
	}
}

// testGroupCommit: WriteSnapshots writes each snapshot behind the fences
// WriteSnapshot has, in one transaction, each refused one alone: a stale
// incarnation's (ErrFenced), an older seq behind a newer one of the same
// Area (a no-op), a character whose row names another Area, written after
// that Area's (skipped), an Area with no row (ErrNotFound), a seq past
// 2^63-1 (ErrInvalid).
func testGroupCommit(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, home, eh := live(t, s, "a@x")
	b, village, ev := live(t, s, "b@x")
	c, gone, ec := live(t, s, "c@x")
	// b moves into the home: the village, written after it (by id), still
	// lists b.
	if err := s.AddMember(ctx, home.ID, b.ID, store.RoleMember, t0); err != nil {
		t.Fatal(err)
	}
	if tr, err := s.MoveCharacter(ctx, store.Transfer{ID: "t1", Account: b.ID, From: village.ID, To: home.ID, X: 3, Y: 4, Placed: true, Created: t0, Expires: at(time.Minute)}, t0); err != nil || tr.Status != store.TransferDone {
		t.Fatalf("MoveCharacter = %+v, %v", tr, err)
	}
	if _, err := s.WriteSnapshot(ctx, store.Snapshot{Area: gone.ID, Epoch: ec, Seq: 1, Blob: []byte("c's"),
		Characters: []store.CharacterState{{Account: c.ID, X: 1, State: []byte("c1")}}, At: t0}); err != nil {
		t.Fatal(err)
	}
	ec2, err := s.BeginIncarnation(ctx, gone.ID, store.TokenHash{})
	if err != nil {
		t.Fatal(err)
	}
	snaps := []store.Snapshot{
		{Area: home.ID, Epoch: eh, Seq: 2, Blob: []byte("home 2"), At: at(time.Second),
			Characters: []store.CharacterState{{Account: a.ID, X: 7, State: []byte("ha")}, {Account: b.ID, X: 8, State: []byte("hb")}}},
		{Area: gone.ID, Epoch: ec, Seq: 5, Blob: []byte("zombie"), At: at(time.Second),
			Characters: []store.CharacterState{{Account: c.ID, X: 9, State: []byte("zombie")}}},
		{Area: village.ID, Epoch: ev, Seq: 1, Blob: []byte("village"), At: at(time.Second),
			Characters: []store.CharacterState{{Account: b.ID, X: 99, State: []byte("stale")}}},
		{Area: home.ID, Epoch: eh, Seq: 1, Blob: []byte("home 1"), At: at(time.Second),
			Characters: []store.CharacterState{{Account: a.ID, X: 1, State: []byte("older")}}},
		{Area: 99999, Epoch: 1, Seq: 1, Blob: []byte("nowhere"), At: at(time.Second)},
		{Area: home.ID, Epoch: eh, Seq: 1 << 63, Blob: []byte("forged"), At: at(time.Second)},
	}
	out, err := s.WriteSnapshots(ctx, snaps)
	if err != nil || len(out) != len(snaps) {
		t.Fatalf("WriteSnapshots = %+v, %v; want %d outcomes", out, err, len(snaps))
	}
	want := []struct {
		err        error
		applied    bool
		characters int
	}{{nil, true, 2}, {store.ErrFenced, false, 0}, {nil, true, 0}, {nil, false, 0}, {store.ErrNotFound, false, 0}, {store.ErrInvalid, false, 0}}
	for i, w := range want {
		wantErr(t, fmt.Sprintf("snapshot %d (area %d seq %d)", i, snaps[i].Area, snaps[i].Seq), out[i].Err, w.err)
		if out[i].Result.Applied != w.applied || out[i].Result.Characters != w.characters {
			t.Errorf("snapshot %d (area %d seq %d): %+v; want applied=%v, %d characters", i, snaps[i].Area, snaps[i].Seq, out[i].Result, w.applied, w.characters)
		}
	}
	for _, tt := range []struct {
		area store.AreaID
		blob string
		seq  store.Seq
		e    store.Epoch
	}{{home.ID, "home 2", 2, eh}, {village.ID, "village", 1, ev}, {gone.ID, "c's", 1, ec2}} {
		if blob, seq, e, err := s.AreaSnapshot(ctx, tt.area); err != nil || string(blob) != tt.blob || seq != tt.seq || e != tt.e {
			t.Errorf("area %d after the group commit: %q seq %d epoch %d, %v; want %q seq %d epoch %d", tt.area, blob, seq, e, err, tt.blob, tt.seq, tt.e)
		}
	}
	for _, tt := range []struct {
		acct  store.AccountID
		area  store.AreaID
		x     int32
		state string
	}{{a.ID, home.ID, 7, "ha"}, {b.ID, home.ID, 8, "hb"}, {c.ID, gone.ID, 1, "c1"}} {
		if ch, err := s.Character(ctx, tt.acct); err != nil || ch.Area != tt.area || ch.X != tt.x || string(ch.State) != tt.state {
			t.Errorf("character %d after the group commit: %+v, %v; want in area %d at x %d, state %q", tt.acct, ch, err, tt.area, tt.x, tt.state)
		}
	}
	if out, err := s.WriteSnapshots(ctx, nil); err != nil || len(out) != 0 {
		t.Errorf("WriteSnapshots of none = %+v, %v; want nothing", out, err)
	}
}

func testCharacters(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := mkAccount(t, s, "a@x")
	home := mkArea(t, s, a.ID, "home")
	other := mkArea(t, s, a.ID, "other")
	_, err := s.Character(ctx, a.ID)
	wantErr(t, "no character yet", err, store.ErrNotFound)
	c, created, err := s.EnsureCharacter(ctx, a.ID, home.ID, t0)
	if err != nil || !created || c.Account != a.ID || c.Area != home.ID || c.Home != home.ID || c.Placed || c.Version != 1 || !c.Updated.Equal(t0) {
		t.Errorf("EnsureCharacter = %+v, %v, %v; want a new unplaced character at home", c, created, err)
	}
	c, created, err = s.EnsureCharacter(ctx, a.ID, other.ID, at(time.Second))
	if err != nil || created || c.Area != home.ID {
		t.Errorf("EnsureCharacter again = %+v, %v, %v; want the existing one at home", c, created, err)
	}
	_, _, err = s.EnsureCharacter(ctx, a.ID+1000, home.ID, t0)
	wantErr(t, "character of unknown account", err, store.ErrNotFound)
	b := mkAccount(t, s, "b@x")
	_, _, err = s.EnsureCharacter(ctx, b.ID, 99999, t0)
	wantErr(t, "character in unknown area", err, store.ErrNotFound)
	if _, _, err := s.EnsureCharacter(ctx, b.ID, home.ID, t0); err != nil {
		t.Fatal(err)
	}
	cs, err := s.CharactersIn(ctx, home.ID)
	if err != nil || len(cs) != 2 {
		t.Errorf("CharactersIn(home) = %+v, %v; want 2", cs, err)
	}
	if cs, err := s.CharactersIn(ctx, other.ID); err != nil || len(cs) != 0 {
		t.Errorf("CharactersIn(other) = %+v, %v; want none", cs, err)
	}
}

func testTransfers(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, home, _ := live(t, s, "a@x")
	_, village, _ := live(t, s, "b@x")
	_, arena, _ := live(t, s, "c@x")
	// The character's state is what its Area's last snapshot wrote; a move
	// carries the character, never writes its state.
	if _, err := s.WriteSnapshot(ctx, store.Snapshot{Area: home.ID, Epoch: 1, Seq: 1, Blob: []byte("home"),
		Characters: []store.CharacterState{{Account: a.ID, X: 1, Y: 1, State: []byte("inventory")}}, At: t0}); err != nil {
		t.Fatal(err)
	}
	mv := store.Transfer{ID: "portal-1", Account: a.ID, From: home.ID, To: village.ID, X: 10, Y: 11, State: []byte("hp=9"), Placed: true, Created: t0, Expires: at(time.Minute)}

	first, err := s.MoveCharacter(ctx, mv, at(time.Second))
	if err != nil || first.Status != store.TransferDone || first.Result != store.ResultMoved {
		t.Fatalf("MoveCharacter = %+v, %v; want done, moved", first, err)
	}
	c, _ := s.Character(ctx, a.ID)
	if c.Area != village.ID || c.X != 10 || c.Y != 11 || string(c.State) != "inventory" || !c.Placed || c.Version != 3 {
		t.Errorf("character after the move = %+v; want in village at (10,11), placed, its state the snapshot's", c)
	}

	tests := []struct {
		name       string
		t          store.Transfer
		want       error
		wantResult store.TransferResult
	}{
		{"replay", mv, nil, store.ResultMoved},
		{"replay with another cell and state", func() store.Transfer { m := mv; m.X, m.State = 99, []byte("x"); return m }(), nil, store.ResultMoved},
		{"id reused for another crossing", func() store.Transfer { m := mv; m.To = arena.ID; return m }(), store.ErrConflict, ""},
		{"not in source", store.Transfer{ID: "portal-2", Account: a.ID, From: home.ID, To: arena.ID, Created: t0, Expires: at(time.Minute)}, nil, store.ResultNotInSource},
		{"not in source, replayed", store.Transfer{ID: "portal-2", Account: a.ID, From: home.ID, To: arena.ID}, nil, store.ResultNotInSource},
		{"unknown destination", store.Transfer{ID: "portal-3", Account: a.ID, From: village.ID, To: 99999, Expires: at(time.Minute)}, store.ErrNotFound, ""},
		{"no id", store.Transfer{Account: a.ID, From: village.ID, To: arena.ID}, store.ErrInvalid, ""},
	}
	for _, tt := range tests {
		got, err := s.MoveCharacter(ctx, tt.t, at(2*time.Second))
		wantErr(t, tt.name, err, tt.want)
		if err == nil && got.Result != tt.wantResult {
			t.Errorf("%s: result = %q; want %q", tt.name, got.Result, tt.wantResult)
		}
		// Nothing but the first move ever changed the character.
		if c, _ := s.Character(ctx, a.ID); c.Area != village.ID || c.X != 10 || c.Version != 3 {
			t.Errorf("%s: character = %+v; want unchanged in village", tt.name, c)
		}
	}
	// A crossing with no pending record and no times set moves at once.
	direct, err := s.MoveCharacter(ctx, store.Transfer{ID: "portal-4", Account: a.ID, From: village.ID, To: arena.ID}, at(3*time.Second))
	if err != nil || direct.Result != store.ResultMoved || !direct.Created.Equal(at(3*time.Second)) {
		t.Errorf("MoveCharacter without times = %+v, %v; want moved, created now", direct, err)
	}
	if c, _ := s.Character(ctx, a.ID); c.Area != arena.ID {
		t.Errorf("character after portal-4 in %d; want %d", c.Area, arena.ID)
	}
	// A move fenced on the source's incarnation: refused once the source
	// was made live again (a new epoch), done while it is current.
	ep, err := s.BeginIncarnation(ctx, arena.ID, store.TokenHash{})
	if err != nil {
		t.Fatal(err)
	}
	stale, err := s.MoveCharacter(ctx, store.Transfer{ID: "portal-6", Account: a.ID, From: arena.ID, To: home.ID, FromEpoch: ep - 1}, at(4*time.Second))
	if err != nil || stale.Result != store.ResultStaleSource {
		t.Errorf("move fenced on an old epoch = %+v, %v; want %q", stale, err, store.ResultStaleSource)
	}
	if c, _ := s.Character(ctx, a.ID); c.Area != arena.ID {
		t.Errorf("a stale-source move moved the character to %d", c.Area)
	}
	current, err := s.MoveCharacter(ctx, store.Transfer{ID: "portal-7", Account: a.ID, From: arena.ID, To: home.ID, FromEpoch: ep}, at(4*time.Second))
	if err != nil || current.Result != store.ResultMoved {
		t.Errorf("move fenced on the current epoch = %+v, %v; want moved", current, err)
	}
	// A move by the door that ends the source's incarnation (FenceFrom):
	// refused on an old epoch; done, it leaves the source one epoch newer,
	// so the ended incarnation can store no snapshot again.
	before, _ := s.Area(ctx, home.ID)
	staleDoor, err := s.MoveCharacter(ctx, store.Transfer{ID: "door-1", Account: a.ID, From: home.ID, To: village.ID, FromEpoch: before.Epoch + 1, FenceFrom: true}, at(4*time.Second))
	if err != nil || staleDoor.Result != store.ResultStaleSource {
		t.Errorf("a fencing move on another epoch = %+v, %v; want %q", staleDoor, err, store.ResultStaleSource)
	}
	door, err := s.MoveCharacter(ctx, store.Transfer{ID: "door-2", Account: a.ID, From: home.ID, To: village.ID, FromEpoch: before.Epoch, FenceFrom: true}, at(4*time.Second))
	if err != nil || door.Result != store.ResultMoved {
		t.Errorf("a fencing move on the current epoch = %+v, %v; want moved", door, err)
	}
	if after, _ := s.Area(ctx, home.ID); after.Epoch != before.Epoch+1 {
		t.Errorf("the source's epoch after a fencing move = %d; want %d", after.Epoch, before.Epoch+1)
	}
	_, err = s.WriteSnapshot(ctx, store.Snapshot{Area: home.ID, Epoch: before.Epoch, Seq: before.Seq + 100, Blob: []byte("zombie"), At: at(4 * time.Second)})
	wantErr(t, "a snapshot of the ended incarnation", err, store.ErrFenced)
	if _, err := s.MoveCharacter(ctx, store.Transfer{ID: "door-3", Account: a.ID, From: village.ID, To: home.ID}, at(4*time.Second)); err != nil {
		t.Fatal(err) // back home, where the checks below expect it
	}
	// A move fenced on the source's stored snapshot: refused while the
	// snapshot holding the character's final state there is not stored,
	// done once it is; a move by the door leaves it unplaced.
	hm, _ := s.Area(ctx, home.ID)
	unsaved, err := s.MoveCharacter(ctx, store.Transfer{ID: "portal-9", Account: a.ID, From: home.ID, To: arena.ID, FromSeq: hm.Seq + 1}, at(5*time.Second))
	if err != nil || unsaved.Result != store.ResultUnsaved {
		t.Errorf("move fenced on an unstored snapshot = %+v, %v; want %q", unsaved, err, store.ResultUnsaved)
	}
	if c, _ := s.Character(ctx, a.ID); c.Area != home.ID {
		t.Errorf("an unsaved move moved the character to %d", c.Area)
	}
	if _, err := s.MoveCharacter(ctx, store.Transfer{ID: "portal-8", Account: a.ID, From: home.ID, To: arena.ID, FromSeq: hm.Seq}, at(5*time.Second)); err != nil {
		t.Fatal(err) // back to the arena, where the checks below expect it
	}
	if c, _ := s.Character(ctx, a.ID); c.Area != arena.ID || c.Placed {
		t.Errorf("character moved by the door = %+v; want in the arena, not placed", c)
	}
	_, err = s.BeginTransfer(ctx, store.Transfer{ID: "portal-5", Account: a.ID, From: arena.ID, To: home.ID})
	wantErr(t, "BeginTransfer without expiry", err, store.ErrInvalid)
	rec, err := s.Transfer(ctx, "portal-1")
	if err != nil || rec.Status != store.TransferDone || rec.Result != store.ResultMoved || rec.To != village.ID || rec.X != 10 || string(rec.State) != "hp=9" || !rec.Created.Equal(t0) {
		t.Errorf("Transfer(portal-1) = %+v, %v", rec, err)
	}
	if rec, _ := s.Transfer(ctx, "portal-2"); rec.Status != store.TransferRejected {
		t.Errorf("Transfer(portal-2) status = %q; want rejected", rec.Status)
	}
	_, err = s.Transfer(ctx, "portal-3")
	wantErr(t, "failed move left no record", err, store.ErrNotFound)
}

func testTransferPendingAndExpiry(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, home, _ := live(t, s, "a@x")
	b, village, _ := live(t, s, "b@x")
	c, arena, _ := live(t, s, "c@x")
	begin := func(id store.TransferID, acct store.AccountID, from, to store.AreaID, created, expires time.Duration) store.Transfer {
		t.Helper()
		tr, err := s.BeginTransfer(ctx, store.Transfer{ID: id, Account: acct, From: from, To: to, X: 1, Y: 2, State: []byte(id), Created: at(created), Expires: at(expires)})
		if err != nil || tr.Status != store.TransferPending || tr.Result != store.ResultNone {
			t.Fatalf("BeginTransfer(%s) = %+v, %v; want pending", id, tr, err)
		}
		return tr
	}
	ta := begin("ta", a.ID, home.ID, village.ID, 0, time.Minute)
	begin("tb", b.ID, village.ID, arena.ID, time.Second, 2*time.Minute)
	begin("tc", c.ID, arena.ID, home.ID, 2*time.Second, time.Hour)
	if again := begin("ta", a.ID, home.ID, village.ID, 5*time.Second, time.Hour); !again.Expires.Equal(ta.Expires) {
		t.Errorf("BeginTransfer replay = %+v; want the recorded %+v", again, ta)
	}
	_, err := s.BeginTransfer(ctx, store.Transfer{ID: "ta", Account: b.ID, From: home.ID, To: village.ID, Expires: at(time.Hour)})
	wantErr(t, "begin with a reused id", err, store.ErrConflict)
	if ch, _ := s.Character(ctx, a.ID); ch.Area != home.ID {
		t.Errorf("a pending transfer moved the character to %d", ch.Area)
	}
	pend, err := s.PendingTransfers(ctx)
	if err != nil || len(pend) != 3 || pend[0].ID != "ta" || pend[1].ID != "tb" || pend[2].ID != "tc" {
		t.Errorf("PendingTransfers = %+v, %v; want ta, tb, tc", pend, err)
	}

	// ta completes before its expiry; tb expires; tc is rejected.
	done, err := s.MoveCharacter(ctx, store.Transfer{ID: "ta", Account: a.ID, From: home.ID, To: village.ID}, at(30*time.Second))
	if err != nil || done.Result != store.ResultMoved || string(done.State) != "ta" {
		t.Errorf("MoveCharacter(pending ta) = %+v, %v; want moved, the record keeping its state", done, err)
	}
	if ch, _ := s.Character(ctx, a.ID); ch.Area != village.ID || len(ch.State) != 0 {
		t.Errorf("character after completing ta = %+v; want in the village, its state untouched", ch)
	}
	exp, err := s.ExpireTransfers(ctx, at(2*time.Minute))
	if err != nil || len(exp) != 1 || exp[0].ID != "tb" || exp[0].Status != store.TransferRejected || exp[0].Result != store.ResultTimeout {
		t.Errorf("ExpireTransfers = %+v, %v; want tb timed out", exp, err)
	}
	if exp, _ := s.ExpireTransfers(ctx, at(2*time.Minute)); len(exp) != 0 {
		t.Errorf("ExpireTransfers again = %+v; want none", exp)
	}
	late, err := s.MoveCharacter(ctx, store.Transfer{ID: "tb", Account: b.ID, From: village.ID, To: arena.ID}, at(3*time.Minute))
	if err != nil || late.Result != store.ResultTimeout {
		t.Errorf("MoveCharacter(expired tb) = %+v, %v; want timeout", late, err)
	}
	if ch, _ := s.Character(ctx, b.ID); ch.Area != village.ID {
		t.Errorf("character of an expired transfer moved to %d", ch.Area)
	}
	rej, err := s.RejectTransfer(ctx, "tc", "door_closed")
	if err != nil || rej.Status != store.TransferRejected || rej.Result != "door_closed" {
		t.Errorf("RejectTransfer = %+v, %v", rej, err)
	}
	if again, err := s.RejectTransfer(ctx, "ta", "late"); err != nil || again.Result != store.ResultMoved {
		t.Errorf("RejectTransfer(done) = %+v, %v; want unchanged", again, err)
	}
	_, err = s.RejectTransfer(ctx, "nope", "x")
	wantErr(t, "reject unknown", err, store.ErrNotFound)
	if pend, _ := s.PendingTransfers(ctx); len(pend) != 0 {
		t.Errorf("PendingTransfers at the end = %+v; want none", pend)
	}

	// A pending transfer completed after its expiry times out.
	begin("td", c.ID, arena.ID, home.ID, 0, time.Minute)
	late, err = s.MoveCharacter(ctx, store.Transfer{ID: "td", Account: c.ID, From: arena.ID, To: home.ID}, at(time.Minute))
	if err != nil || late.Result != store.ResultTimeout {
		t.Errorf("MoveCharacter(td past expiry) = %+v, %v; want timeout", late, err)
	}
	if ch, _ := s.Character(ctx, c.ID); ch.Area != arena.ID {
		t.Errorf("character of a timed-out transfer moved to %d", ch.Area)
	}
}

func testPruneTransfers(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, home, _ := live(t, s, "a@x")
	b, village, _ := live(t, s, "b@x")
	if _, err := s.MoveCharacter(ctx, store.Transfer{ID: "old-done", Account: a.ID, From: home.ID, To: village.ID, Created: t0, Expires: at(time.Minute)}, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginTransfer(ctx, store.Transfer{ID: "old-pending", Account: b.ID, From: village.ID, To: home.ID, Created: t0, Expires: at(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveCharacter(ctx, store.Transfer{ID: "new-done", Account: a.ID, From: village.ID, To: home.ID, Created: at(time.Hour), Expires: at(2 * time.Hour)}, at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneTransfers(ctx, at(time.Minute)); err != nil || n != 1 {
		t.Errorf("PruneTransfers = %d, %v; want 1", n, err)
	}
	if n, err := s.PruneTransfers(ctx, at(1000*time.Hour)); err != nil || n != 1 {
		t.Errorf("PruneTransfers(all) = %d, %v; want 1 (never the pending one)", n, err)
	}
	if tr, err := s.Transfer(ctx, "old-pending"); err != nil || tr.Status != store.TransferPending {
		t.Errorf("pending transfer after pruning = %+v, %v", tr, err)
	}
}

func testRealmSettings(t *testing.T, s store.Store) {
	ctx := t.Context()
	got, err := s.RealmSettings(ctx)
	if err != nil || got != store.DefaultRealmSettings() {
		t.Errorf("RealmSettings = %+v, %v; want defaults %+v", got, err, store.DefaultRealmSettings())
	}
	admin := mkAccount(t, s, "realm-admin@example.com")
	change := func(detail string) store.Change {
		return store.Change{At: at(0), Actor: admin.ID, Action: "realm.update", Target: "realm", Detail: detail}
	}
	for _, want := range []store.RealmSettings{
		{Open: false, Cap: 5, NewPlayersWelcome: false, Message: "maintenance"},
		{Open: true, Cap: 0, NewPlayersWelcome: true, Message: ""},
	} {
		if err := s.UpdateRealmSettings(ctx, want, change(want.Message)); err != nil {
			t.Fatal(err)
		}
		if got, err := s.RealmSettings(ctx); err != nil || got != want {
			t.Errorf("RealmSettings = %+v, %v; want %+v", got, err, want)
		}
	}
	before, err := s.Changes(ctx, 0, 10)
	if err != nil || len(before) != 2 {
		t.Fatalf("Changes = %d entries, %v; want the 2 updates", len(before), err)
	}
	// A refused update changes nothing, and records nothing.
	wantErr(t, "negative cap", s.UpdateRealmSettings(ctx, store.RealmSettings{Cap: -1}, change("refused")), store.ErrInvalid)
	// An unrecorded change is no change: without its actor, action or
	// time, or with words past their bounds, the settings stay.
	for name, ch := range map[string]store.Change{
		"no actor":    {At: at(0), Action: "realm.update"},
		"no action":   {At: at(0), Actor: admin.ID},
		"no time":     {Actor: admin.ID, Action: "realm.update"},
		"long detail": {At: at(0), Actor: admin.ID, Action: "realm.update", Detail: strings.Repeat("x", store.MaxChangeDetail+1)},
	} {
		wantErr(t, name, s.UpdateRealmSettings(ctx, store.RealmSettings{Cap: 7}, ch), store.ErrInvalid)
	}
	if got, err := s.RealmSettings(ctx); err != nil || got.Cap != 0 {
		t.Errorf("RealmSettings after refused updates = %+v, %v; want cap 0 still", got, err)
	}
	if after, err := s.Changes(ctx, 0, 10); err != nil || len(after) != 2 {
		t.Errorf("Changes after refused updates = %d entries, %v; want 2 still", len(after), err)
	}
}

func testChanges(t *testing.T, s store.Store) {
	ctx := t.Context()
	admin := mkAccount(t, s, "auditor@example.com")
	const n = 7
	for i := range n {
		ch := store.Change{At: at(time.Duration(i) * time.Second), Actor: admin.ID, Action: "realm.update", Target: "realm",
			Detail: fmt.Sprintf("cap %d", i)}
		if err := s.UpdateRealmSettings(ctx, store.RealmSettings{Open: true, Cap: i}, ch); err != nil {
			t.Fatal(err)
		}
	}
	// Newest first, in pages by id.
	var all []store.Change
	before := int64(0)
	for {
		page, err := s.Changes(ctx, before, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		all = append(all, page...)
		before = page[len(page)-1].ID
	}
	if len(all) != n {
		t.Fatalf("paged through %d changes; want %d", len(all), n)
	}
	for i, ch := range all {
		want := fmt.Sprintf("cap %d", n-1-i)
		if ch.Detail != want || ch.Actor != admin.ID || ch.Action != "realm.update" || ch.Target != "realm" ||
			!ch.At.Equal(at(time.Duration(n-1-i)*time.Second)) {
			t.Errorf("change %d = %+v; want %q by %d at %v", i, ch, want, admin.ID, at(time.Duration(n-1-i)*time.Second))
		}
		if i > 0 && ch.ID >= all[i-1].ID {
			t.Errorf("change ids not falling: %d after %d", ch.ID, all[i-1].ID)
		}
	}
	for _, bad := range [][2]int64{{0, 0}, {0, 1001}, {-1, 10}} {
		if _, err := s.Changes(ctx, bad[0], int(bad[1])); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Changes(%d, %d) = %v; want ErrInvalid", bad[0], bad[1], err)
		}
	}
}

func testSamples(t *testing.T, s store.Store) {
	ctx := t.Context()
	var want []store.Sample
	for i := range 5 {
		sm := store.Sample{At: at(time.Duration(i) * time.Minute), Players: i * 10, LiveAreas: i, FrozenAreas: 2 * i, Hosts: 1,
			RSSBytes: int64(i) << 30, CPU: 0.25 * float64(i), WorstTickP99: time.Duration(i) * 1500 * time.Microsecond}
		want = append(want, sm)
	}
	for _, i := range []int{3, 0, 4, 1, 2} {
		if err := s.AddSample(ctx, want[i]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Samples(ctx, at(2*time.Minute))
	if err != nil || len(got) != 3 {
		t.Fatalf("Samples(since 2m) = %+v, %v; want 3", got, err)
	}
	for i, g := range got {
		w := want[i+2]
		if !g.At.Equal(w.At) || g.Players != w.Players || g.LiveAreas != w.LiveAreas || g.FrozenAreas != w.FrozenAreas ||
			g.Hosts != w.Hosts || g.RSSBytes != w.RSSBytes || g.CPU != w.CPU || g.WorstTickP99 != w.WorstTickP99 {
			t.Errorf("Samples[%d] = %+v; want %+v", i, g, w)
		}
	}
	if n, err := s.PruneSamples(ctx, at(time.Minute)); err != nil || n != 1 {
		t.Errorf("PruneSamples = %d, %v; want 1", n, err)
	}
	if got, _ := s.Samples(ctx, time.Time{}); len(got) != 4 {
		t.Errorf("Samples after pruning = %d; want 4", len(got))
	}
}

// testConcurrentGroupCommits: group commits of the same Areas, listed in
// opposite orders, run side by side without failing (WriteSnapshots
// locks the Areas' rows in one order: listed as they came, two of them
// would each hold a row the other waits for, and Postgres would end one
// as a deadlock), and the newest seq of each Area is what is stored.
func testConcurrentGroupCommits(t *testing.T, s store.Store) {
	ctx := t.Context()
	const areas, rounds = 8, 20
	var ids []store.AreaID
	var epochs []store.Epoch
	for i := range areas {
		_, area, e := live(t, s, fmt.Sprintf("g%d@x", i))
		ids, epochs = append(ids, area.ID), append(epochs, e)
	}
	for round := range rounds {
		// Both start together, so that their transactions overlap.
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for w := range 2 {
			wg.Go(func() {
				snaps := make([]store.Snapshot, areas)
				for i := range areas {
					j := i
					if w == 1 {
						j = areas - 1 - i // the other writer lists them the other way round
					}
					seq := store.Seq(2*round + w + 1)
					snaps[i] = store.Snapshot{Area: ids[j], Epoch: epochs[j], Seq: seq, Blob: fmt.Appendf(nil, "seq=%d", seq), At: t0}
				}
				<-start
				if _, err := s.WriteSnapshots(ctx, snaps); err != nil {
					errs <- err
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	for _, id := range ids {
		if blob, seq, _, err := s.AreaSnapshot(ctx, id); err != nil || seq != 2*rounds || string(blob) != fmt.Sprintf("seq=%d", 2*rounds) {
			t.Errorf("area %d after the group commits: %q seq %d, %v; want seq %d", id, blob, seq, err, 2*rounds)
		}
	}
}

func testConcurrentSnapshots(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, area, e := live(t, s, "a@x")
	const writers, each = 8, 25
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		maxSeq store.Seq
		errs   = make(chan error, writers)
	)
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range each {
				seq := store.Seq(1 + r.IntN(1000))
				blob := fmt.Appendf(nil, "seq=%d", seq)
				_, err := s.WriteSnapshot(ctx, store.Snapshot{Area: area.ID, Epoch: e, Seq: seq, Blob: blob,
					Characters: []store.CharacterState{{Account: a.ID, X: int32(seq), State: blob}}, At: t0})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				maxSeq = max(maxSeq, seq)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	blob, seq, _, err := s.AreaSnapshot(ctx, area.ID)
	want := fmt.Appendf(nil, "seq=%d", maxSeq)
	if err != nil || seq != maxSeq || !bytes.Equal(blob, want) {
		t.Errorf("after concurrent writes: seq %d blob %q, %v; want %d %q", seq, blob, err, maxSeq, want)
	}
	if c, _ := s.Character(ctx, a.ID); c.X != int32(maxSeq) || !bytes.Equal(c.State, want) {
		t.Errorf("character after concurrent writes = x %d state %q; want %d %q", c.X, c.State, maxSeq, want)
	}
}

func testConcurrentTransferReplay(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, home, _ := live(t, s, "a@x")
	_, village, _ := live(t, s, "b@x")
	mv := store.Transfer{ID: "race", Account: a.ID, From: home.ID, To: village.ID, X: 1, Y: 1, Created: t0, Expires: at(time.Minute)}
	const n = 8
	results := make([]store.Transfer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i], errs[i] = s.MoveCharacter(ctx, mv, t0) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || results[i].Result != store.ResultMoved {
			t.Errorf("MoveCharacter #%d = %+v, %v; want moved", i, results[i], errs[i])
		}
	}
	if c, _ := s.Character(ctx, a.ID); c.Area != village.ID || c.Version != 2 {
		t.Errorf("character = %+v; want moved once (version 2)", c)
	}
}

// testOpposingCrossings: two characters cross at the same instant in
// opposite directions between two Areas, each fenced on its source's
// incarnation, round after round. Each crossing locks its source's row and
// moves a character into the other Area (whose row a reference to it
// must see unchanged): no lock order may let the two wait on each other,
// and every crossing is decided, moved.
func testOpposingCrossings(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, home, he := live(t, s, "a@x")
	b, village, ve := live(t, s, "b@x")
	const rounds = 40
	for r := range rounds {
		from, to := home.ID, village.ID
		fromEpoch, toEpoch := he, ve
		if r%2 == 1 {
			from, to, fromEpoch, toEpoch = to, from, toEpoch, fromEpoch
		}
		moves := [2]store.Transfer{
			{ID: store.TransferID(fmt.Sprintf("a-%d", r)), Account: a.ID, From: from, To: to, FromEpoch: fromEpoch, Created: t0, Expires: at(time.Minute)},
			{ID: store.TransferID(fmt.Sprintf("b-%d", r)), Account: b.ID, From: to, To: from, FromEpoch: toEpoch, Created: t0, Expires: at(time.Minute)},
		}
		var results [2]store.Transfer
		var errs [2]error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range moves {
			wg.Go(func() { <-start; results[i], errs[i] = s.MoveCharacter(ctx, moves[i], t0) })
		}
		close(start)
		wg.Wait()
		for i := range moves {
			if errs[i] != nil || results[i].Result != store.ResultMoved {
				t.Fatalf("round %d: MoveCharacter %s = %+v, %v; want moved", r, moves[i].ID, results[i], errs[i])
			}
		}
	}
	if c, _ := s.Character(ctx, a.ID); c.Area != home.ID || c.Version != 1+rounds {
		t.Errorf("a's character = %+v; want back home after %d moves", c, rounds)
	}
}

// testLeadership: before any Lead there is no Leader; Lead begins a term,
// records the leader's addresses, and leaves the Store writing; a second
// Lead of the same Store is refused. (Postgres's own tests take a
// leadership away and check the deposed Store's writes fail.)
func testLeadership(t *testing.T, s store.Store) {
	ctx := t.Context()
	_, err := s.Leader(ctx)
	wantErr(t, "Leader before any Lead", err, store.ErrNotFound)
	me := store.Leader{HTTP: "http://10.0.0.5:8080", Control: "10.0.0.5:7070"}
	l, err := s.Lead(ctx, me)
	if err != nil {
		t.Fatalf("Lead: %v", err)
	}
	if l.Term() < 1 {
		t.Errorf("term = %d; want >= 1", l.Term())
	}
	if err := l.Err(); err != nil {
		t.Errorf("Err of a held leadership = %v; want nil", err)
	}
	got, err := s.Leader(ctx)
	if err != nil {
		t.Fatalf("Leader: %v", err)
	}
	if got.Term != l.Term() || got.HTTP != me.HTTP || got.Control != me.Control || got.Since.IsZero() {
		t.Errorf("Leader = %+v; want term %d, %s, %s, a start time", got, l.Term(), me.HTTP, me.Control)
	}
	a := mkAccount(t, s, "leader@example.org")
	if err := s.SetAdmin(ctx, a.ID, true); err != nil {
		t.Errorf("a write of the leader: %v", err)
	}
	mkArea(t, s, a.ID, "led")
	_, err = s.Lead(ctx, me)
	wantErr(t, "a second Lead of one Store", err, store.ErrInvalid)
	select {
	case <-l.Lost():
		t.Errorf("the leadership was lost: %v", l.Err())
	default:
	}
}

func testMemberRoles(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := mkAccount(t, s, "o@x")
	m := mkAccount(t, s, "m@x")
	stranger := mkAccount(t, s, "s@x")
	area := mkArea(t, s, owner.ID, "home")
	if err := s.AddMember(ctx, area.ID, m.ID, store.RoleMember, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMemberRole(ctx, area.ID, m.ID, store.RoleBuilder); err != nil {
		t.Fatal(err)
	}
	if r, err := s.MemberRole(ctx, area.ID, m.ID); err != nil || r != store.RoleBuilder {
		t.Errorf("role after SetMemberRole = %q, %v; want builder", r, err)
	}
	if err := s.SetMemberRole(ctx, area.ID, m.ID, store.RoleMember); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.MemberRole(ctx, area.ID, m.ID); r != store.RoleMember {
		t.Errorf("role = %q; want member again", r)
	}
	wantErr(t, "the owner's role", s.SetMemberRole(ctx, area.ID, owner.ID, store.RoleBuilder), store.ErrInvalid)
	wantErr(t, "a stranger's role", s.SetMemberRole(ctx, area.ID, stranger.ID, store.RoleBuilder), store.ErrNotMember)
	wantErr(t, "another role", s.SetMemberRole(ctx, area.ID, m.ID, store.RoleOwner), store.ErrInvalid)
	if err := s.AddMember(ctx, area.ID, stranger.ID, store.RoleBuilder, t0); err != nil {
		t.Errorf("AddMember as a builder: %v", err)
	}
}

func testHostRecords(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := store.HostRecord{Credential: store.HashToken("a"), Name: "host-a", PID: 100, Machine: "m1", WSURL: "ws://a/ws", Started: t0, Seen: t0}
	b := store.HostRecord{Credential: store.HashToken("b"), Name: "host-b", PID: 200, Machine: "m1", WSURL: "ws://b/ws", Started: at(time.Second), Seen: at(time.Second)}
	for _, h := range []store.HostRecord{a, b} {
		if err := s.PutHost(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	a.Seen, a.WSURL = at(time.Minute), "ws://a2/ws"
	if err := s.PutHost(ctx, a); err != nil {
		t.Fatal(err)
	}
	hs, err := s.Hosts(ctx)
	if err != nil || len(hs) != 2 || hs[0].Name != "host-a" || hs[0].WSURL != "ws://a2/ws" || !hs[0].Seen.Equal(at(time.Minute)) ||
		!hs[0].Started.Equal(t0) || hs[0].Credential != a.Credential || hs[1].PID != 200 {
		t.Fatalf("Hosts = %+v, %v", hs, err)
	}
	if err := s.DeleteHost(ctx, a.Credential); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteHost(ctx, store.HashToken("nobody")); err != nil {
		t.Errorf("DeleteHost of an unknown host: %v", err)
	}
	if hs, _ := s.Hosts(ctx); len(hs) != 1 || hs[0].Name != "host-b" {
		t.Errorf("Hosts after DeleteHost = %+v", hs)
	}
}

func testMemberArea(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := mkAccount(t, s, "o@x")
	stranger := mkAccount(t, s, "s@x")
	area := mkArea(t, s, owner.ID, "home")
	a, acct, err := s.MemberArea(ctx, area.ID, owner.ID)
	if err != nil || a.ID != area.ID || a.Name != area.Name || a.Owner != owner.ID || acct.ID != owner.ID || acct.Email != owner.Email {
		t.Errorf("MemberArea = %+v, %+v, %v", a, acct, err)
	}
	_, _, err = s.MemberArea(ctx, area.ID, stranger.ID)
	wantErr(t, "a stranger's area", err, store.ErrNotMember)
	_, _, err = s.MemberArea(ctx, 99999, owner.ID)
	wantErr(t, "an unknown area", err, store.ErrNotMember)
}

func testAdminActs(t *testing.T, s store.Store) {
	ctx := t.Context()
	admin := mkAccount(t, s, "root@admin.test")
	ann := mkAccount(t, s, "ann@find.test")
	bob := mkAccount(t, s, "bob_x@find.test")
	change := func(action string) store.Change {
		return store.Change{At: at(0), Actor: admin.ID, Action: action, Target: "x", Detail: action}
	}
	changes := func() int {
		t.Helper()
		chs, err := s.Changes(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(chs)
	}

	// Found by a part of the email or of the name, case folded, newest
	// first; LIKE's wildcards match only themselves.
	for _, tt := range []struct {
		q    string
		want []store.AccountID
	}{
		{"find.test", []store.AccountID{bob.ID, ann.ID}},
		{"ANN@", []store.AccountID{ann.ID}},
		{"N BOB", []store.AccountID{bob.ID}},
		{"_x", []store.AccountID{bob.ID}},
		{"%", nil},
		{"nobody", nil},
	} {
		got, err := s.FindAccounts(ctx, tt.q, 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []store.AccountID
		for _, a := range got {
			ids = append(ids, a.ID)
		}
		if !slices.Equal(ids, tt.want) {
			t.Errorf("FindAccounts(%q) = %v; want %v", tt.q, ids, tt.want)
		}
	}
	if all, err := s.FindAccounts(ctx, "", 2); err != nil || len(all) != 2 || all[0].ID != bob.ID {
		t.Errorf(`FindAccounts("", 2) = %v, %v; want the 2 newest`, all, err)
	}
	wantErr(t, "limit 0", func() error { _, err := s.FindAccounts(ctx, "", 0); return err }(), store.ErrInvalid)

	// Ending an account's sessions revokes them all, recorded.
	for i := range 2 {
		h := store.TokenHash{byte(i + 1), 0xad}
		if _, err := s.CreateSession(ctx, h, ann.ID, t0, time.Hour, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.EndAccountSessions(ctx, ann.ID, change("account.logout")); err != nil || n != 2 {
		t.Errorf("EndAccountSessions = %d, %v; want 2", n, err)
	}
	if _, err := s.SessionByTokenHash(ctx, store.TokenHash{1, 0xad}, t0); err == nil {
		t.Error("a session survived EndAccountSessions")
	}
	wantErr(t, "unknown account", func() error { _, err := s.EndAccountSessions(ctx, 999999, change("account.logout")); return err }(), store.ErrNotFound)
	if n := changes(); n != 1 {
		t.Errorf("%d changes recorded after one act and one refused; want 1", n)
	}

	// Membership given, changed, taken; the owner's is neither.
	area := mkArea(t, s, admin.ID, "Admin's")
	if err := s.GiveMembership(ctx, area.ID, ann.ID, store.RoleMember, change("member.give")); err != nil {
		t.Fatal(err)
	}
	if err := s.GiveMembership(ctx, area.ID, ann.ID, store.RoleBuilder, change("member.give")); err != nil {
		t.Fatal(err)
	}
	if r, err := s.MemberRole(ctx, area.ID, ann.ID); err != nil || r != store.RoleBuilder {
		t.Errorf("role after giving builder: %q, %v", r, err)
	}
	wantErr(t, "owner's role", s.GiveMembership(ctx, area.ID, admin.ID, store.RoleMember, change("member.give")), store.ErrInvalid)
	wantErr(t, "owner role given", s.GiveMembership(ctx, area.ID, bob.ID, store.RoleOwner, change("member.give")), store.ErrInvalid)
	wantErr(t, "unknown account", s.GiveMembership(ctx, area.ID, 999999, store.RoleMember, change("member.give")), store.ErrNotFound)
	wantErr(t, "owner taken", s.TakeMembership(ctx, area.ID, admin.ID, change("member.take")), store.ErrInvalid)
	wantErr(t, "non-member taken", s.TakeMembership(ctx, area.ID, bob.ID, change("member.take")), store.ErrNotMember)
	if err := s.TakeMembership(ctx, area.ID, ann.ID, change("member.take")); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.IsMember(ctx, area.ID, ann.ID); err != nil || ok {
		t.Errorf("ann still a member after TakeMembership (%v)", err)
	}
	if n := changes(); n != 4 {
		t.Errorf("%d changes recorded; want 4 (logout, give, give, take): a refused act records nothing", n)
	}
	wantErr(t, "unrecorded act", s.TakeMembership(ctx, area.ID, ann.ID, store.Change{}), store.ErrInvalid)

	// Gives of one membership at once (two admins, a retried request) all
	// succeed, as they would one after the other: none is refused by the
	// race for the member's row. Several rounds, each for a new account:
	// the first may run its gives one by one while the pool dials.
	const rounds, gives = 4, 8
	for i := range rounds {
		who := mkAccount(t, s, fmt.Sprintf("racer%d@find.test", i))
		errs := make(chan error, gives)
		var wg sync.WaitGroup
		for range gives {
			wg.Go(func() { errs <- s.GiveMembership(ctx, area.ID, who.ID, store.RoleMember, change("member.give")) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("a give racing others: %v", err)
			}
		}
		if r, err := s.MemberRole(ctx, area.ID, who.ID); err != nil || r != store.RoleMember {
			t.Errorf("role after racing gives: %q, %v", r, err)
		}
	}
	if n := changes(); n != 4+rounds*gives {
		t.Errorf("%d changes recorded after %d racing gives; want %d", n, rounds*gives, 4+rounds*gives)
	}
}
