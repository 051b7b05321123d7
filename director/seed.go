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
	Area            store.AreaID
}

// SeedDemo makes sure a demo account (an admin) owns a village Area, so a
// fresh `ley run` can be joined at once. It is idempotent: an existing
// demo account keeps its password and Areas.
func (d *Director) SeedDemo(ctx context.Context, email, password string) (Demo, error) {
	demo := Demo{Email: email, Password: password}
	acct, _, err := d.store.AccountByEmail(ctx, email)
	if errors.Is(err, store.ErrNotFound) {
		phc, herr := d.hasher.Hash(ctx, password)
		if herr != nil {
			return demo, herr
		}
		acct, err = d.store.CreateAccount(ctx, store.NewAccount{Email: email, Name: "demo", PasswordPHC: phc, Admin: true, Created: time.Now()})
	}
	if err != nil {
		return demo, fmt.Errorf("seed demo account: %w", err)
	}
	demo.Account = acct.ID
	areas, err := d.store.AreasOf(ctx, acct.ID)
	if err != nil {
		return demo, err
	}
	for _, a := range areas {
		if a.Kind == "village" {
			demo.Area = a.ID
			return demo, nil
		}
	}
	a, err := d.store.CreateArea(ctx, store.NewArea{Owner: acct.ID, Kind: "village", Name: "Demo village", W: 64, H: 64, Seed: 1, Created: time.Now()})
	if err != nil {
		return demo, fmt.Errorf("seed demo area: %w", err)
	}
	demo.Area = a.ID
	return demo, nil
}
