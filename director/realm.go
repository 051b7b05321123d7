package director

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/store"
)

// settingsTTL is how long a join takes the realm's settings from memory
// before it reads them again: a burst of joins reads them once, and a
// change made through another director (a follower forwards it here, the
// leader) is seen within it.
const settingsTTL = time.Second

// realmSettings returns the realm's settings, from memory when read
// within settingsTTL. While the store is unavailable it answers the last
// settings read (the door as it was) rather than fail: what it guards
// needs the store anyway, and the lobby keeps showing the realm.
func (d *Director) realmSettings(ctx context.Context) (store.RealmSettings, error) {
	c := d.settings.Load()
	if c != nil && time.Since(c.at) < settingsTTL {
		return c.s, nil
	}
	s, err := d.store.RealmSettings(ctx)
	if err != nil {
		if c != nil && errors.Is(err, store.ErrUnavailable) {
			return c.s, nil
		}
		return s, err
	}
	d.settings.Store(&cachedSettings{s: s, at: time.Now()})
	return s, nil
}

func (d *Director) getRealm(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	s, err := d.store.RealmSettings(r.Context())
	if err != nil {
		return 0, nil, storeErr(err)
	}
	return http.StatusOK, apijson.Realm(s), nil
}

// putRealm: PUT /v1/realm (admins): closing the door drains the realm.
func (d *Director) putRealm(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	var in apijson.Realm
	if e := decode(r, &in); e != nil {
		return 0, nil, e
	}
	if in.Cap < 0 || len(in.Message) > 1024 {
		return 0, nil, errBadRequest("cap must be >= 0 and message at most 1024 bytes")
	}
	old, err := d.store.RealmSettings(r.Context())
	if err != nil {
		return 0, nil, storeErr(err)
	}
	change := store.Change{At: time.Now(), Actor: acct.ID, Action: "realm.update", Target: "realm",
		Detail: realmChange(old, store.RealmSettings(in))}
	if err := d.store.UpdateRealmSettings(r.Context(), store.RealmSettings(in), change); err != nil {
		return 0, nil, storeErr(err)
	}
	d.settings.Store(nil) // the next join reads the new door
	if old.Open && !in.Open {
		d.drain()
	}
	return http.StatusOK, in, nil
}

// realmChange says in words what an update of the realm's settings
// changes, for the audit log: each setting that changes, before -> after
// (the words cut to 200 bytes each).
func realmChange(old, new store.RealmSettings) string {
	var parts []string
	if old.Open != new.Open {
		what := "opened"
		if !new.Open {
			what = "closed (the realm drains)"
		}
		parts = append(parts, "door "+what)
	}
	if old.Cap != new.Cap {
		parts = append(parts, fmt.Sprintf("cap %d -> %d", old.Cap, new.Cap))
	}
	if old.NewPlayersWelcome != new.NewPlayersWelcome {
		parts = append(parts, fmt.Sprintf("new players welcome %v -> %v", old.NewPlayersWelcome, new.NewPlayersWelcome))
	}
	if old.Message != new.Message {
		parts = append(parts, fmt.Sprintf("words %q -> %q", cut(old.Message, 200), cut(new.Message, 200)))
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, "; ")
}

// cut returns s cut to at most n bytes, at a rune boundary, with "..."
// when it was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// door applies the realm door: open, cap, new players. Someone already
// inside (bound, away for a resume, or holding a grant) is never refused.
func (d *Director) door(s store.RealmSettings, acct store.AccountID, isNew bool) *apiError {
	inside, count := d.registry.Inside(acct)
	switch {
	case inside:
		return nil
	case !s.Open:
		return errRealmClosed
	case isNew && !s.NewPlayersWelcome:
		return errNewPlayersClosed
	case count >= s.Cap:
		return errRealmFull
	}
	return nil
}

// drain tells every live Area to close with REALM_CLOSED after the close
// grace; the director itself stays up.
func (d *Director) drain() { d.registry.Drain(d.cfg.CloseGrace) }
