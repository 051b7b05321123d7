package sqlcore

import (
	"context"
	"fmt"

	"github.com/leyworks/ley/store"
)

// ---- area hosts a director spawned ----

// PutHost implements store.Store.
func (c *Core) PutHost(ctx context.Context, h store.HostRecord) error {
	err := c.write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO hosts (credential, name, pid, machine, ws_url, started_at, seen_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (credential) DO UPDATE SET name = $2, pid = $3, machine = $4, ws_url = $5, seen_at = $7`,
			h.Credential[:], h.Name, h.PID, h.Machine, h.WSURL, c.d.Time(h.Started), c.d.Time(h.Seen))
		return err
	})
	if err != nil {
		return fmt.Errorf("put host %q: %w", h.Name, c.mapErr(err))
	}
	return nil
}

// Hosts implements store.Store.
func (c *Core) Hosts(ctx context.Context) ([]store.HostRecord, error) {
	rows, err := c.db.Query(ctx, `SELECT credential, name, pid, machine, ws_url, started_at, seen_at FROM hosts ORDER BY started_at, name`)
	hs, err := collect(rows, err, func(r Row) (store.HostRecord, error) {
		var h store.HostRecord
		var cred []byte
		err := r.Scan(&cred, &h.Name, &h.PID, &h.Machine, &h.WSURL, c.d.ScanTime(&h.Started), c.d.ScanTime(&h.Seen))
		copy(h.Credential[:], cred)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("hosts: %w", c.mapErr(err))
	}
	return hs, nil
}

// DeleteHost implements store.Store.
func (c *Core) DeleteHost(ctx context.Context, credential store.TokenHash) error {
	err := c.write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, `DELETE FROM hosts WHERE credential = $1`, credential[:])
		return err
	})
	if err != nil {
		return fmt.Errorf("delete host: %w", c.mapErr(err))
	}
	return nil
}
