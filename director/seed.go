package director

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leyworks/ley/store"
)

// Demo is what SeedDemo made (or found) for a newcomer to join at once.
type Demo struct {
	Email, Password string
	Account         store.AccountID
	// Area is the demo village, the realm's starter Area; Arena and Home
	// are the demo account's arena and home. The village's map portal
	// leads to the arena, the arena's back to the village.
	Area  store.AreaID
	Arena store.AreaID
	Home  store.AreaID
}

// demoAreas are the Areas SeedDemo makes, in the order it makes them: the
// village first, so that in a fresh realm it is the oldest village (the
// one the arena's portal leads back to), then the arena the village's
// portal leads to, then a home.
var demoAreas = []struct{ template, name string }{
	{"village", "Demo village"},
	{"arena", "Demo arena"},
	{"home", "Demo home"},
}

// SeedDemo makes sure a demo account (an admin) owns a village, an arena
// and a home, each of its kind's default template, so a fresh `ley run`
// can be joined at once and every part of the content is one walk away.
// It is idempotent: an existing demo account keeps its password, and an
// Area of each template it owns already is kept (the oldest one).
func (d *Director) SeedDemo(ctx context.Context, email, password string) (Demo, error) {
	demo := Demo{Email: email, Password: password}
	acct, _, err := d.store.AccountByEmail(ctx, email)
	if errors.Is(err, store.ErrNotFound) {
		phc, herr := d.hasher.Hash(ctx, password)
		if herr != nil {
			return demo, herr
		}
		acct, err = d.store.CreateAccount(ctx, store.NewAccount{Email: email, Name: "demo", PasswordPHC: phc, Admin: true, Created: time.Now()})
		if errors.Is(err, store.ErrNameTaken) { // a player took the name first
			acct, err = d.store.CreateAccount(ctx, store.NewAccount{Email: email, Name: "demo admin " + randomHex(2), PasswordPHC: phc, Admin: true, Created: time.Now()})
		}
	}
	if err != nil {
		return demo, fmt.Errorf("seed demo account: %w", err)
	}
	demo.Account = acct.ID
	areas, err := d.store.AreasOf(ctx, acct.ID)
	if err != nil {
		return demo, fmt.Errorf("seed demo areas: %w", err)
	}
	ids := make([]store.AreaID, len(demoAreas))
	for i, want := range demoAreas {
		for _, a := range areas { // by id: the oldest first
			if a.Owner == acct.ID && a.Template == want.template {
				ids[i] = a.ID
				break
			}
		}
		if ids[i] != 0 {
			continue
		}
		shape, apiE := d.newAreaShape("", want.template, 0, 0, want.template)
		if apiE != nil {
			return demo, fmt.Errorf("seed demo %s: the content: %s", want.template, apiE.Message)
		}
		a, err := d.store.CreateArea(ctx, store.NewArea{Owner: acct.ID, Kind: shape.kind, Template: shape.template, Name: want.name,
			W: shape.w, H: shape.h, Seed: uint64(i + 1), Created: time.Now()})
		if err != nil {
			return demo, fmt.Errorf("seed demo %s: %w", want.template, err)
		}
		ids[i] = a.ID
	}
	demo.Area, demo.Arena, demo.Home = ids[0], ids[1], ids[2]
	return demo, nil
}
