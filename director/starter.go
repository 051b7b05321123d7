package director

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leyworks/ley/store"
)

// AddStarterAreas adds Areas to the starter Areas (Config.StarterAreas):
// every account that signs up from now on becomes a member of each. Call
// it before Run, which checks that they exist; an id already there is not
// added twice. Safe for concurrent use.
func (d *Director) AddStarterAreas(ids ...store.AreaID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		if !slices.Contains(d.starter, id) {
			d.starter = append(d.starter, id)
		}
	}
}

// StarterAreas returns a copy of the starter Areas.
func (d *Director) StarterAreas() []store.AreaID {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.starter)
}

// checkStarterAreas reports a starter Area that does not exist, or the
// store's failure to say.
func (d *Director) checkStarterAreas(ctx context.Context) error {
	for _, id := range d.StarterAreas() {
		_, err := d.store.Area(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("director: starter area %d: no such area", id)
		case err != nil:
			return fmt.Errorf("director: starter area %d: %w", id, err)
		}
	}
	return nil
}

// joinStarterAreas makes acct, a new account, a member of every starter
// Area. One it is a member of already is skipped.
func (d *Director) joinStarterAreas(ctx context.Context, acct store.AccountID) error {
	now := time.Now()
	for _, id := range d.StarterAreas() {
		if err := d.store.AddMember(ctx, id, acct, store.RoleMember, now); err != nil && !errors.Is(err, store.ErrDuplicate) {
			return fmt.Errorf("starter area %d: %w", id, err)
		}
	}
	return nil
}
