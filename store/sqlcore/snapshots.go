package sqlcore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/leyworks/ley/store"
)

// ---- incarnations and snapshots ----

// BeginIncarnation implements store.Store.
func (c *Core) BeginIncarnation(ctx context.Context, area store.AreaID, placement store.TokenHash) (store.Epoch, error) {
	var e store.Epoch
	err := c.write(ctx, func(q Querier) error {
		return q.QueryRow(ctx, `UPDATE areas SET epoch = epoch + 1, placement = $2 WHERE id = $1 RETURNING epoch`, int64(area), placement[:]).Scan(&e)
	})
	if err != nil {
		return 0, fmt.Errorf("begin incarnation of area %d: %w", area, c.mapErr(err))
	}
	return e, nil
}

// WriteSnapshot implements store.Store. One transaction: a conditional
// UPDATE of the Area row (which takes its row lock, so concurrent writers
// serialise and the highest Seq wins), then one UPDATE of the characters'
// rows, each written only where it still names the Area.
func (c *Core) WriteSnapshot(ctx context.Context, snap store.Snapshot) (store.SnapshotResult, error) {
	if err := checkSnapshotSeq(snap); err != nil {
		return store.SnapshotResult{}, err
	}
	var res store.SnapshotResult
	split := snapshotSplit()
	err := c.tx(ctx, func(q Querier) error {
		var err error
		res, err = c.writeSnapshot(ctx, q, snap, split == nil) // with split, the characters in a transaction of their own
		return err
	})
	if err == nil && split != nil && res.Applied {
		if err = split(ctx); err == nil {
			err = c.tx(ctx, func(q Querier) error {
				var err error
				res.Characters, err = c.snapshotCharacters(ctx, q, snap)
				return err
			})
		}
	}
	if err != nil {
		return store.SnapshotResult{}, snapshotErr(snap, c.mapErr(err))
	}
	return res, nil
}

// WriteSnapshots implements store.Store: the snapshots' writes, each as
// WriteSnapshot's transaction makes it, one after another in a single
// transaction. They are taken by Area id (one Area's in the order they
// came), so that two group commits lock the Areas' rows in one order and
// never wait on each other in a cycle. A fenced snapshot's UPDATE
// matched no row: it wrote nothing, and the transaction goes on with the
// next.
func (c *Core) WriteSnapshots(ctx context.Context, snaps []store.Snapshot) ([]store.SnapshotWrite, error) {
	out := make([]store.SnapshotWrite, len(snaps))
	if snapshotSplit() != nil {
		// The snapshot_tx mutation (leytest builds only): each snapshot
		// written as WriteSnapshot then writes it, in two transactions.
		for i, snap := range snaps {
			out[i].Result, out[i].Err = c.WriteSnapshot(ctx, snap)
			if err := out[i].Err; err != nil && !errors.Is(err, store.ErrFenced) && !errors.Is(err, store.ErrInvalid) && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
		}
		return out, nil
	}
	order := make([]int, len(snaps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(snaps[i].Area, snaps[j].Area) })
	err := c.tx(ctx, func(q Querier) error {
		for _, i := range order {
			snap := snaps[i]
			if err := checkSnapshotSeq(snap); err != nil {
				out[i] = store.SnapshotWrite{Err: err}
				continue
			}
			res, err := c.writeSnapshot(ctx, q, snap, true)
			switch {
			case errors.Is(err, store.ErrFenced):
				out[i] = store.SnapshotWrite{Err: snapshotErr(snap, err)}
			case errors.Is(err, sql.ErrNoRows): // no such Area: nothing to write
				out[i] = store.SnapshotWrite{Err: snapshotErr(snap, store.ErrNotFound)}
			case err != nil:
				return snapshotErr(snap, err)
			default:
				out[i] = store.SnapshotWrite{Result: res}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("write %d snapshots in one transaction: %w", len(snaps), c.mapErr(err))
	}
	return out, nil
}

// checkSnapshotSeq refuses a Seq past what the databases' signed columns
// hold.
func checkSnapshotSeq(snap store.Snapshot) error {
	if snap.Seq > math.MaxInt64 {
		return fmt.Errorf("write snapshot area %d seq %d: %w: seq past 2^63-1", snap.Area, snap.Seq, store.ErrInvalid)
	}
	return nil
}

// snapshotErr names snap in err.
func snapshotErr(snap store.Snapshot, err error) error {
	return fmt.Errorf("write snapshot area %d epoch %d seq %d: %w", snap.Area, snap.Epoch, snap.Seq, err)
}

// writeSnapshot is one snapshot's write in transaction q: the Area's row
// where its epoch is snap's and its seq older (the row's lock taken),
// and, if that applied and withChars, the characters' rows. A row with
// another epoch is ErrFenced; one with the same or a newer seq changes
// nothing and reports Applied=false.
func (c *Core) writeSnapshot(ctx context.Context, q Querier, snap store.Snapshot, withChars bool) (store.SnapshotResult, error) {
	var res store.SnapshotResult
	n, err := q.Exec(ctx, `UPDATE areas SET state = $3, seq = $4, last_played_at = $5
		WHERE id = $1 AND epoch = $2 AND seq < $4`,
		int64(snap.Area), int64(snap.Epoch), nonNil(snap.Blob), int64(snap.Seq), c.d.Time(snap.At))
	if err != nil {
		return res, err
	}
	if n == 0 {
		var epoch store.Epoch
		if err := q.QueryRow(ctx, `SELECT epoch FROM areas WHERE id = $1`, int64(snap.Area)).Scan(&epoch); err != nil {
			return res, err
		}
		if epoch != snap.Epoch {
			return res, fmt.Errorf("%w: epoch %d, current %d", store.ErrFenced, snap.Epoch, epoch)
		}
		return res, nil // an older or repeated seq: idempotent no-op
	}
	res.Applied = true
	if withChars {
		res.Characters, err = c.snapshotCharacters(ctx, q, snap)
	}
	return res, err
}

// snapshotCharacters writes the characters' states of snap, each only
// where its row still names snap's Area, and reports how many it wrote.
func (c *Core) snapshotCharacters(ctx context.Context, q Querier, snap store.Snapshot) (int, error) {
	if len(snap.Characters) == 0 {
		return 0, nil
	}
	where := ` AND characters.area_id = $1`
	if snapshotAreaCheckOff() {
		where = ` AND $1 > 0` // the fence removed: a row naming another Area is written too
	}
	from, args := c.d.CharacterRows(nonNilStates(snap.Characters), 3)
	n, err := q.Exec(ctx, `UPDATE characters
		SET x = v.x, y = v.y, state = v.state, placed = true, version = characters.version + 1, updated_at = $2
		FROM `+from+`
		WHERE characters.account_id = v.account_id`+where,
		append([]any{int64(snap.Area), c.d.Time(snap.At)}, args...)...)
	return int(n), err
}

// nonNilStates returns cs, copied with an empty State for each nil one
// (the column is NOT NULL) if it has any.
func nonNilStates(cs []store.CharacterState) []store.CharacterState {
	for i := range cs {
		if cs[i].State == nil {
			out := make([]store.CharacterState, len(cs))
			copy(out, cs)
			for j := range out {
				out[j].State = nonNil(out[j].State)
			}
			return out
		}
	}
	return cs
}

// AreaSnapshot implements store.Store.
func (c *Core) AreaSnapshot(ctx context.Context, area store.AreaID) ([]byte, store.Seq, store.Epoch, error) {
	var blob []byte
	var seq store.Seq
	var e store.Epoch
	err := c.db.QueryRow(ctx, `SELECT state, seq, epoch FROM areas WHERE id = $1`, int64(area)).Scan(&blob, &seq, &e)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("snapshot of area %d: %w", area, c.mapErr(err))
	}
	return blob, seq, e, nil
}

// ---- characters ----

const charCols = `account_id, area_id, home_id, x, y, state, placed, version, updated_at`

func (c *Core) scanChar(r Row) (store.Character, error) {
	var ch store.Character
	err := r.Scan(&ch.Account, &ch.Area, &ch.Home, &ch.X, &ch.Y, &ch.State, &ch.Placed, &ch.Version, c.d.ScanTime(&ch.Updated))
	return ch, err
}

// Character implements store.Store.
func (c *Core) Character(ctx context.Context, account store.AccountID) (store.Character, error) {
	ch, err := c.scanChar(c.db.QueryRow(ctx, `SELECT `+charCols+` FROM characters WHERE account_id = $1`, int64(account)))
	if err != nil {
		return store.Character{}, fmt.Errorf("character of account %d: %w", account, c.mapErr(err))
	}
	return ch, nil
}

// EnsureCharacter implements store.Store.
func (c *Core) EnsureCharacter(ctx context.Context, account store.AccountID, home store.AreaID, now time.Time) (store.Character, bool, error) {
	var ch store.Character
	err := c.write(ctx, func(q Querier) error {
		var err error
		ch, err = c.scanChar(q.QueryRow(ctx, `INSERT INTO characters (account_id, area_id, home_id, updated_at)
			VALUES ($1, $2, $2, $3) ON CONFLICT (account_id) DO NOTHING RETURNING `+charCols,
			int64(account), int64(home), c.d.Time(now)))
		return err
	})
	if err == nil {
		return ch, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.Character{}, false, fmt.Errorf("ensure character of account %d: %w", account, c.mapErr(err))
	}
	ch, err = c.Character(ctx, account)
	return ch, false, err
}

// CharactersIn implements store.Store.
func (c *Core) CharactersIn(ctx context.Context, area store.AreaID) ([]store.Character, error) {
	rows, err := c.db.Query(ctx, `SELECT `+charCols+` FROM characters WHERE area_id = $1 ORDER BY account_id`, int64(area))
	cs, err := collect(rows, err, c.scanChar)
	if err != nil {
		return nil, fmt.Errorf("characters in area %d: %w", area, c.mapErr(err))
	}
	return cs, nil
}

// Holdings implements store.Store: one statement, so every row is read
// at the same instant on either dialect.
func (c *Core) Holdings(ctx context.Context, fn func(store.Holding) error) error {
	rows, err := c.db.Query(ctx, `SELECT id, w, h, 0, state, 0 FROM areas WHERE seq > 0
		UNION ALL SELECT 0, 0, 0, account_id, state, area_id FROM characters`)
	if err != nil {
		return fmt.Errorf("holdings: %w", c.mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var h store.Holding
		var area, account, in int64
		if err := rows.Scan(&area, &h.W, &h.H, &account, &h.State, &in); err != nil {
			return fmt.Errorf("holdings: %w", c.mapErr(err))
		}
		h.Area, h.Account, h.In = store.AreaID(area), store.AccountID(account), store.AreaID(in)
		if err := fn(h); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("holdings: %w", c.mapErr(err))
	}
	return nil
}
