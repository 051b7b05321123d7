package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leyworks/ley/store"
)

// ---- areas and members ----

const areaCols = `id, owner_id, kind, template, name, w, h, seed, rules, seq, epoch, placement, last_played_at, created_at`

func (c *Core) scanArea(r Row) (store.Area, error) {
	var a store.Area
	var seed int64
	var placement []byte
	err := r.Scan(&a.ID, &a.Owner, &a.Kind, &a.Template, &a.Name, &a.W, &a.H, &seed, &a.Rules, &a.Seq, &a.Epoch, &placement,
		c.d.ScanTime(&a.LastPlayed), c.d.ScanTime(&a.Created))
	a.Seed = uint64(seed)
	copy(a.Placement[:], placement)
	return a, err
}

// CreateArea implements store.Store.
func (c *Core) CreateArea(ctx context.Context, na store.NewArea) (store.Area, error) {
	na, err := na.Validate()
	if err != nil {
		return store.Area{}, fmt.Errorf("create area: %w", err)
	}
	var a store.Area
	err = c.tx(ctx, func(q Querier) error {
		var err error
		a, err = c.scanArea(q.QueryRow(ctx, `INSERT INTO areas (owner_id, kind, template, name, w, h, seed, rules, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING `+areaCols,
			int64(na.Owner), na.Kind, na.Template, na.Name, na.W, na.H, int64(na.Seed), nonNil(na.Rules), c.d.Time(na.Created)))
		if err != nil {
			return err
		}
		return c.addMember(ctx, q, a.ID, na.Owner, store.RoleOwner, na.Created)
	})
	if err != nil {
		return store.Area{}, fmt.Errorf("create area %q for account %d: %w", na.Name, na.Owner, c.mapErr(err))
	}
	return a, nil
}

// Area implements store.Store.
func (c *Core) Area(ctx context.Context, id store.AreaID) (store.Area, error) {
	a, err := c.scanArea(c.db.QueryRow(ctx, `SELECT `+areaCols+` FROM areas WHERE id = $1`, int64(id)))
	if err != nil {
		return store.Area{}, fmt.Errorf("area %d: %w", id, c.mapErr(err))
	}
	return a, nil
}

// SetAreaRules implements store.Store.
func (c *Core) SetAreaRules(ctx context.Context, area store.AreaID, rules []byte) error {
	return c.execOne(ctx, fmt.Sprintf("set rules of area %d", area),
		`UPDATE areas SET rules = $1 WHERE id = $2`, nonNil(rules), int64(area))
}

// AreasOf implements store.Store.
func (c *Core) AreasOf(ctx context.Context, account store.AccountID) ([]store.Area, error) {
	rows, err := c.db.Query(ctx, `SELECT `+areaCols+` FROM areas
		WHERE id IN (SELECT area_id FROM area_members WHERE account_id = $1) ORDER BY id`, int64(account))
	as, err := collect(rows, err, c.scanArea)
	if err != nil {
		return nil, fmt.Errorf("areas of account %d: %w", account, c.mapErr(err))
	}
	return as, nil
}

// FirstAreaOf implements store.Store.
func (c *Core) FirstAreaOf(ctx context.Context, template string) (store.Area, error) {
	a, err := c.scanArea(c.db.QueryRow(ctx, `SELECT `+areaCols+` FROM areas WHERE template = $1 ORDER BY id LIMIT 1`, template))
	if err != nil {
		return store.Area{}, fmt.Errorf("first area of template %q: %w", template, c.mapErr(err))
	}
	return a, nil
}

// AddMember implements store.Store.
func (c *Core) AddMember(ctx context.Context, area store.AreaID, account store.AccountID, role store.Role, now time.Time) error {
	err := c.write(ctx, func(q Querier) error { return c.addMember(ctx, q, area, account, role, now) })
	if err != nil {
		return fmt.Errorf("add account %d to area %d: %w", account, area, c.mapErr(err))
	}
	return nil
}

func (c *Core) addMember(ctx context.Context, q Querier, area store.AreaID, account store.AccountID, role store.Role, now time.Time) error {
	if role != store.RoleOwner && role != store.RoleMember && role != store.RoleBuilder {
		return fmt.Errorf("%w: role %q", store.ErrInvalid, role)
	}
	_, err := q.Exec(ctx, `INSERT INTO area_members (area_id, account_id, role, added_at) VALUES ($1, $2, $3, $4)`,
		int64(area), int64(account), string(role), c.d.Time(now))
	return err
}

// MemberArea implements store.Store.
func (c *Core) MemberArea(ctx context.Context, area store.AreaID, account store.AccountID) (store.Area, store.Account, error) {
	var a store.Area
	var acct store.Account
	var seed int64
	var placement []byte
	err := c.db.QueryRow(ctx, `SELECT a.id, a.owner_id, a.kind, a.template, a.name, a.w, a.h, a.seed, a.rules, a.seq, a.epoch, a.placement,
			a.last_played_at, a.created_at, u.id, u.email, u.name, u.is_admin, u.created_at, m.role
		FROM area_members m JOIN areas a ON a.id = m.area_id JOIN accounts u ON u.id = m.account_id
		WHERE m.area_id = $1 AND m.account_id = $2`, int64(area), int64(account)).Scan(
		&a.ID, &a.Owner, &a.Kind, &a.Template, &a.Name, &a.W, &a.H, &seed, &a.Rules, &a.Seq, &a.Epoch, &placement,
		c.d.ScanTime(&a.LastPlayed), c.d.ScanTime(&a.Created), &acct.ID, &acct.Email, &acct.Name, &acct.Admin, c.d.ScanTime(&acct.Created), &acct.Role)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Area{}, store.Account{}, fmt.Errorf("area %d of account %d: %w", area, account, store.ErrNotMember)
	}
	if err != nil {
		return store.Area{}, store.Account{}, fmt.Errorf("area %d of account %d: %w", area, account, c.mapErr(err))
	}
	a.Seed = uint64(seed)
	copy(a.Placement[:], placement)
	return a, acct, nil
}

// SetMemberRole implements store.Store.
func (c *Core) SetMemberRole(ctx context.Context, area store.AreaID, account store.AccountID, role store.Role) error {
	if role != store.RoleMember && role != store.RoleBuilder {
		return fmt.Errorf("set role of account %d in area %d: %w: role %q", account, area, store.ErrInvalid, role)
	}
	var n int64
	err := c.write(ctx, func(q Querier) error {
		var err error
		n, err = q.Exec(ctx, `UPDATE area_members SET role = $3 WHERE area_id = $1 AND account_id = $2 AND role <> 'owner'`,
			int64(area), int64(account), string(role))
		return err
	})
	if err != nil {
		return fmt.Errorf("set role of account %d in area %d: %w", account, area, c.mapErr(err))
	}
	if n == 0 {
		if r, err := c.MemberRole(ctx, area, account); err != nil {
			return err
		} else if r == store.RoleOwner {
			return fmt.Errorf("set role of account %d in area %d: %w: the owner's role does not change", account, area, store.ErrInvalid)
		}
	}
	return nil
}

// IsMember implements store.Store.
func (c *Core) IsMember(ctx context.Context, area store.AreaID, account store.AccountID) (bool, error) {
	_, err := c.MemberRole(ctx, area, account)
	if errors.Is(err, store.ErrNotMember) {
		return false, nil
	}
	return err == nil, err
}

// MemberRole implements store.Store.
func (c *Core) MemberRole(ctx context.Context, area store.AreaID, account store.AccountID) (store.Role, error) {
	var role string
	err := c.db.QueryRow(ctx, `SELECT role FROM area_members WHERE area_id = $1 AND account_id = $2`, int64(area), int64(account)).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("role of account %d in area %d: %w", account, area, store.ErrNotMember)
	}
	if err != nil {
		return "", fmt.Errorf("role of account %d in area %d: %w", account, area, c.mapErr(err))
	}
	return store.Role(role), nil
}

// Members implements store.Store.
func (c *Core) Members(ctx context.Context, area store.AreaID) ([]store.Member, error) {
	rows, err := c.db.Query(ctx, `SELECT m.account_id, a.name, m.role, m.added_at FROM area_members m JOIN accounts a ON a.id = m.account_id
		WHERE m.area_id = $1 ORDER BY m.account_id`, int64(area))
	ms, err := collect(rows, err, func(r Row) (store.Member, error) {
		var m store.Member
		var role string
		err := r.Scan(&m.Account, &m.Name, &role, c.d.ScanTime(&m.Added))
		m.Role = store.Role(role)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("members of area %d: %w", area, c.mapErr(err))
	}
	return ms, nil
}

// ---- invites ----

// CreateInvite implements store.Store.
func (c *Core) CreateInvite(ctx context.Context, inv store.Invite) error {
	if inv.Code == "" || inv.UsesLeft < 0 {
		return fmt.Errorf("create invite: %w", store.ErrInvalid)
	}
	err := c.write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO invite_codes (code, area_id, created_by, uses_left, expires_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`,
			inv.Code, int64(inv.Area), int64(inv.CreatedBy), inv.UsesLeft, c.d.Time(inv.Expires), c.d.Time(inv.Created))
		return err
	})
	if err != nil {
		return fmt.Errorf("create invite to area %d: %w", inv.Area, c.mapErr(err))
	}
	return nil
}

// RedeemInvite implements store.Store. The invite's row is locked first,
// so concurrent redemptions of its last use serialise and one wins.
func (c *Core) RedeemInvite(ctx context.Context, code string, account store.AccountID, now time.Time) (store.AreaID, error) {
	var area store.AreaID
	err := c.tx(ctx, func(q Querier) error {
		var uses int
		var exp time.Time
		err := q.QueryRow(ctx, `SELECT area_id, uses_left, expires_at FROM invite_codes WHERE code = $1`+c.d.ForUpdate(), code).
			Scan(&area, &uses, c.d.ScanTime(&exp))
		if err != nil {
			return err
		}
		var one int
		err = q.QueryRow(ctx, `SELECT 1 FROM area_members WHERE area_id = $1 AND account_id = $2`, int64(area), int64(account)).Scan(&one)
		if err == nil {
			return nil // already a member: no use spent
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		switch {
		case !now.Before(exp):
			return store.ErrExpired
		case uses <= 0:
			return store.ErrUsedUp
		}
		if _, err := q.Exec(ctx, `UPDATE invite_codes SET uses_left = uses_left - 1 WHERE code = $1`, code); err != nil {
			return err
		}
		return c.addMember(ctx, q, area, account, store.RoleMember, now)
	})
	if err != nil {
		return 0, fmt.Errorf("redeem invite for account %d: %w", account, c.mapErr(err))
	}
	return area, nil
}

// InvitesBy implements store.Store.
func (c *Core) InvitesBy(ctx context.Context, account store.AccountID, now time.Time, limit int) ([]store.Invite, error) {
	if limit < 1 {
		return nil, fmt.Errorf("invites by account %d: %w: limit %d", account, store.ErrInvalid, limit)
	}
	rows, err := c.db.Query(ctx, `SELECT code, area_id, created_by, uses_left, expires_at, created_at FROM invite_codes
		WHERE created_by = $1 AND uses_left > 0 AND expires_at > $2 ORDER BY created_at DESC, code LIMIT $3`,
		int64(account), c.d.Time(now), limit)
	invs, err := collect(rows, err, func(r Row) (store.Invite, error) {
		var inv store.Invite
		err := r.Scan(&inv.Code, &inv.Area, &inv.CreatedBy, &inv.UsesLeft, c.d.ScanTime(&inv.Expires), c.d.ScanTime(&inv.Created))
		return inv, err
	})
	if err != nil {
		return nil, fmt.Errorf("invites by account %d: %w", account, c.mapErr(err))
	}
	return invs, nil
}
