package sqlcore

import (
	"context"
	"fmt"
	"time"

	"github.com/leyworks/ley/store"
)

// ---- transfers ----

const transferCols = `transfer_id, account_id, from_area, to_area, to_x, to_y, state, status, result, created_at, expires_at`

func (c *Core) scanTransfer(r Row) (store.Transfer, error) {
	var t store.Transfer
	var id, status, result string
	err := r.Scan(&id, &t.Account, &t.From, &t.To, &t.X, &t.Y, &t.State, &status, &result,
		c.d.ScanTime(&t.Created), c.d.ScanTime(&t.Expires))
	t.ID, t.Status, t.Result = store.TransferID(id), store.TransferStatus(status), store.TransferResult(result)
	return t, err
}

// claimTransfer records t as pending unless its id exists, then locks and
// returns the recorded row: a replay of a crossing waits for the first
// one's transaction and reads what it decided.
func (c *Core) claimTransfer(ctx context.Context, q Querier, t store.Transfer) (rec store.Transfer, inserted bool, err error) {
	n, err := q.Exec(ctx, `INSERT INTO transfers (`+transferCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', '', $8, $9) ON CONFLICT (transfer_id) DO NOTHING`,
		string(t.ID), int64(t.Account), int64(t.From), int64(t.To), t.X, t.Y, nonNil(t.State), c.d.Time(t.Created), c.d.Time(t.Expires))
	if err != nil {
		return store.Transfer{}, false, err
	}
	inserted = n == 1
	rec, err = c.lockTransfer(ctx, q, t.ID)
	if err != nil {
		return store.Transfer{}, false, err
	}
	if !rec.SameCrossing(t) {
		return store.Transfer{}, false, fmt.Errorf("%w: transfer %q recorded for account %d %d->%d", store.ErrConflict, t.ID, rec.Account, rec.From, rec.To)
	}
	return rec, inserted, nil
}

// lockTransfer reads the transfer id and locks its row until q's
// transaction ends.
func (c *Core) lockTransfer(ctx context.Context, q Querier, id store.TransferID) (store.Transfer, error) {
	return c.scanTransfer(q.QueryRow(ctx, `SELECT `+transferCols+` FROM transfers WHERE transfer_id = $1`+c.d.ForUpdate(), string(id)))
}

func (c *Core) finishTransfer(ctx context.Context, q Querier, rec *store.Transfer, status store.TransferStatus, result store.TransferResult) error {
	rec.Status, rec.Result = status, result
	_, err := q.Exec(ctx, `UPDATE transfers SET status = $2, result = $3 WHERE transfer_id = $1`,
		string(rec.ID), string(status), string(result))
	return err
}

// BeginTransfer implements store.Store.
func (c *Core) BeginTransfer(ctx context.Context, t store.Transfer) (store.Transfer, error) {
	if err := t.Validate(); err != nil || t.Expires.IsZero() {
		return store.Transfer{}, fmt.Errorf("begin transfer %q: %w", t.ID, store.ErrInvalid)
	}
	var rec store.Transfer
	err := c.tx(ctx, func(q Querier) error {
		var err error
		rec, _, err = c.claimTransfer(ctx, q, t)
		return err
	})
	if err != nil {
		return store.Transfer{}, fmt.Errorf("begin transfer %q: %w", t.ID, c.mapErr(err))
	}
	return rec, nil
}

// MoveCharacter implements store.Store. This is the crossing's one
// decision, in one transaction: claim the transfer id (a replay answers
// what was recorded), refuse a pending transfer past its expiry, refuse a
// move whose source incarnation is not FromEpoch (its row locked, so a
// new incarnation waits for the decision), then move the row only where
// it still names From. The source's row is locked FOR NO KEY UPDATE: a
// crossing the other way, moving its character into this source, checks
// the reference against that row and must not wait for this one (which
// waits on its own reference to the other's source: a deadlock).
func (c *Core) MoveCharacter(ctx context.Context, t store.Transfer, now time.Time) (store.Transfer, error) {
	if err := t.Validate(); err != nil {
		return store.Transfer{}, fmt.Errorf("move character, transfer %q: %w", t.ID, err)
	}
	if t.Created.IsZero() {
		t.Created = now
	}
	if t.Expires.IsZero() {
		t.Expires = now
	}
	var rec store.Transfer
	err := c.tx(ctx, func(q Querier) error {
		var inserted bool
		var err error
		rec, inserted, err = c.claimTransfer(ctx, q, t)
		if err != nil || rec.Status != store.TransferPending {
			return err // replay: the recorded result
		}
		if !inserted && !now.Before(rec.Expires) {
			return c.finishTransfer(ctx, q, &rec, store.TransferRejected, store.ResultTimeout)
		}
		if t.FromEpoch != 0 || t.FromSeq != 0 || t.FenceFrom {
			var epoch store.Epoch
			var seq store.Seq
			if err := q.QueryRow(ctx, `SELECT epoch, seq FROM areas WHERE id = $1`+c.d.ForNoKeyUpdate(), int64(rec.From)).Scan(&epoch, &seq); err != nil {
				return err
			}
			if (t.FromEpoch != 0 || t.FenceFrom) && epoch != t.FromEpoch {
				return c.finishTransfer(ctx, q, &rec, store.TransferRejected, store.ResultStaleSource)
			}
			if seq < t.FromSeq {
				// The snapshot holding the character's final state in From is
				// not stored: the move would take the character on with a
				// state From's blob does not agree with.
				return c.finishTransfer(ctx, q, &rec, store.TransferRejected, store.ResultUnsaved)
			}
		}
		// The move never writes the character's state: that changes only
		// with the snapshots of the Area it is in.
		n, err := q.Exec(ctx, `UPDATE characters
			SET area_id = $3, x = $4, y = $5, placed = $6, version = version + 1, updated_at = $7
			WHERE account_id = $1 AND area_id = $2`,
			int64(rec.Account), int64(rec.From), int64(rec.To), rec.X, rec.Y, t.Placed, c.d.Time(now))
		if err != nil {
			return err
		}
		if n == 0 {
			return c.finishTransfer(ctx, q, &rec, store.TransferRejected, store.ResultNotInSource)
		}
		if t.FenceFrom {
			if _, err := q.Exec(ctx, `UPDATE areas SET epoch = epoch + 1 WHERE id = $1`, int64(rec.From)); err != nil {
				return err
			}
		}
		return c.finishTransfer(ctx, q, &rec, store.TransferDone, store.ResultMoved)
	})
	if err != nil {
		return store.Transfer{}, fmt.Errorf("move character of account %d, transfer %q: %w", t.Account, t.ID, c.mapErr(err))
	}
	return rec, nil
}

// RejectTransfer implements store.Store.
func (c *Core) RejectTransfer(ctx context.Context, id store.TransferID, result store.TransferResult) (store.Transfer, error) {
	var rec store.Transfer
	err := c.tx(ctx, func(q Querier) error {
		var err error
		rec, err = c.lockTransfer(ctx, q, id)
		if err != nil || rec.Status != store.TransferPending {
			return err
		}
		return c.finishTransfer(ctx, q, &rec, store.TransferRejected, result)
	})
	if err != nil {
		return store.Transfer{}, fmt.Errorf("reject transfer %q: %w", id, c.mapErr(err))
	}
	return rec, nil
}

// Transfer implements store.Store.
func (c *Core) Transfer(ctx context.Context, id store.TransferID) (store.Transfer, error) {
	t, err := c.scanTransfer(c.db.QueryRow(ctx, `SELECT `+transferCols+` FROM transfers WHERE transfer_id = $1`, string(id)))
	if err != nil {
		return store.Transfer{}, fmt.Errorf("transfer %q: %w", id, c.mapErr(err))
	}
	return t, nil
}

// PendingTransfers implements store.Store.
func (c *Core) PendingTransfers(ctx context.Context) ([]store.Transfer, error) {
	rows, err := c.db.Query(ctx, `SELECT `+transferCols+` FROM transfers WHERE status = 'pending' ORDER BY created_at, transfer_id`)
	ts, err := collect(rows, err, c.scanTransfer)
	if err != nil {
		return nil, fmt.Errorf("pending transfers: %w", c.mapErr(err))
	}
	return ts, nil
}

// ExpireTransfers implements store.Store.
func (c *Core) ExpireTransfers(ctx context.Context, now time.Time) ([]store.Transfer, error) {
	var ts []store.Transfer
	err := c.write(ctx, func(q Querier) error {
		rows, err := q.Query(ctx, `UPDATE transfers SET status = 'rejected', result = $2
			WHERE status = 'pending' AND expires_at <= $1 RETURNING `+transferCols, c.d.Time(now), string(store.ResultTimeout))
		ts, err = collect(rows, err, c.scanTransfer)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("expire transfers: %w", c.mapErr(err))
	}
	return ts, nil
}

// PruneTransfers implements store.Store.
func (c *Core) PruneTransfers(ctx context.Context, olderThan time.Time) (int, error) {
	n, err := c.count(ctx, `DELETE FROM transfers WHERE status <> 'pending' AND created_at < $1`, c.d.Time(olderThan))
	if err != nil {
		return 0, fmt.Errorf("prune transfers: %w", err)
	}
	return n, nil
}
