package sqlcore

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/leyworks/ley/store"
)

// ---- realm settings and samples ----

// RealmSettings implements store.Store.
func (c *Core) RealmSettings(ctx context.Context) (store.RealmSettings, error) {
	var r store.RealmSettings
	err := c.db.QueryRow(ctx, `SELECT open, player_cap, new_players_welcome, message FROM realm_settings`).
		Scan(&r.Open, &r.Cap, &r.NewPlayersWelcome, &r.Message)
	if err != nil {
		return store.RealmSettings{}, fmt.Errorf("realm settings: %w", c.mapErr(err))
	}
	return r, nil
}

// UpdateRealmSettings implements store.Store.
func (c *Core) UpdateRealmSettings(ctx context.Context, r store.RealmSettings, ch store.Change) error {
	if err := checkChange(ch); err != nil {
		return fmt.Errorf("update realm settings: %w", err)
	}
	err := c.tx(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, `UPDATE realm_settings SET open = $1, player_cap = $2, new_players_welcome = $3, message = $4`,
			r.Open, r.Cap, r.NewPlayersWelcome, r.Message)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		return c.recordChange(ctx, q, ch)
	})
	if err != nil {
		return fmt.Errorf("update realm settings: %w", c.mapErr(err))
	}
	return nil
}

// checkChange refuses an audit entry without an actor or an action, or
// with words past their bounds.
func checkChange(ch store.Change) error {
	switch {
	case ch.Actor == 0 || ch.Action == "" || ch.At.IsZero():
		return fmt.Errorf("%w: an audited change needs its actor, action and time", store.ErrInvalid)
	case len(ch.Action) > store.MaxChangeAction || len(ch.Target) > store.MaxChangeTarget || len(ch.Detail) > store.MaxChangeDetail:
		return fmt.Errorf("%w: an audited change's words are too long", store.ErrInvalid)
	}
	return nil
}

// recordChange writes ch to the audit log in q's transaction.
func (c *Core) recordChange(ctx context.Context, q Querier, ch store.Change) error {
	_, err := q.Exec(ctx, `INSERT INTO audit_log (at, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5)`,
		c.d.Time(ch.At), int64(ch.Actor), ch.Action, ch.Target, ch.Detail)
	return err
}

// maxChanges bounds a page of the audit log.
const maxChanges = 1000

// Changes implements store.Store.
func (c *Core) Changes(ctx context.Context, before int64, limit int) ([]store.Change, error) {
	if limit < 1 || limit > maxChanges || before < 0 {
		return nil, fmt.Errorf("changes: %w: limit %d, before %d", store.ErrInvalid, limit, before)
	}
	if before == 0 {
		before = math.MaxInt64
	}
	rows, err := c.db.Query(ctx, `SELECT id, at, actor, action, target, detail FROM audit_log
		WHERE id < $1 ORDER BY id DESC LIMIT $2`, before, limit)
	out, err := collect(rows, err, func(r Row) (store.Change, error) {
		var ch store.Change
		var actor int64
		err := r.Scan(&ch.ID, c.d.ScanTime(&ch.At), &actor, &ch.Action, &ch.Target, &ch.Detail)
		ch.Actor = store.AccountID(actor)
		return ch, err
	})
	if err != nil {
		return nil, fmt.Errorf("changes: %w", c.mapErr(err))
	}
	return out, nil
}

// AddSample implements store.Store.
func (c *Core) AddSample(ctx context.Context, sm store.Sample) error {
	err := c.write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO director_samples
			(at, players, live_areas, frozen_areas, hosts, rss_bytes, cpu, worst_tick_p99_us)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			c.d.Time(sm.At), sm.Players, sm.LiveAreas, sm.FrozenAreas, sm.Hosts, sm.RSSBytes, sm.CPU, sm.WorstTickP99.Microseconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("add sample: %w", c.mapErr(err))
	}
	return nil
}

// Samples implements store.Store.
func (c *Core) Samples(ctx context.Context, since time.Time) ([]store.Sample, error) {
	rows, err := c.db.Query(ctx, `SELECT at, players, live_areas, frozen_areas, hosts, rss_bytes, cpu, worst_tick_p99_us
		FROM director_samples WHERE at >= $1 ORDER BY at`, c.d.Time(since))
	ss, err := collect(rows, err, func(r Row) (store.Sample, error) {
		var sm store.Sample
		var p99 int64
		err := r.Scan(c.d.ScanTime(&sm.At), &sm.Players, &sm.LiveAreas, &sm.FrozenAreas, &sm.Hosts, &sm.RSSBytes, &sm.CPU, &p99)
		sm.WorstTickP99 = time.Duration(p99) * time.Microsecond
		return sm, err
	})
	if err != nil {
		return nil, fmt.Errorf("samples: %w", c.mapErr(err))
	}
	return ss, nil
}

// PruneSamples implements store.Store.
func (c *Core) PruneSamples(ctx context.Context, before time.Time) (int, error) {
	n, err := c.count(ctx, `DELETE FROM director_samples WHERE at < $1`, c.d.Time(before))
	if err != nil {
		return 0, fmt.Errorf("prune samples: %w", err)
	}
	return n, nil
}
