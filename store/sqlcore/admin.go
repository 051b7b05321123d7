package sqlcore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/leyworks/ley/store"
)

// ---- an admin's acts on accounts and memberships, each audited ----

// maxFound bounds FindAccounts' answer.
const maxFound = 1000

// likeEscaper escapes LIKE's wildcards (and its escape character) in a
// search text, so that it matches only itself.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// FindAccounts implements store.Store.
func (c *Core) FindAccounts(ctx context.Context, q string, limit int) ([]store.Account, error) {
	if limit < 1 || limit > maxFound {
		return nil, fmt.Errorf("find accounts: %w: limit %d", store.ErrInvalid, limit)
	}
	email := "%" + likeEscaper.Replace(strings.ToLower(strings.TrimSpace(q))) + "%"
	name := "%" + likeEscaper.Replace(store.NameKey(strings.TrimSpace(q))) + "%"
	rows, err := c.db.Query(ctx, `SELECT `+accountCols+` FROM accounts
		WHERE email LIKE $1 ESCAPE '\' OR coalesce(name_key, lower(name)) LIKE $2 ESCAPE '\'
		ORDER BY id DESC LIMIT $3`, email, name, limit)
	out, err := collect(rows, err, func(r Row) (store.Account, error) { return c.scanAccount(r) })
	if err != nil {
		return nil, fmt.Errorf("find accounts: %w", c.mapErr(err))
	}
	return out, nil
}

// EndAccountSessions implements store.Store.
func (c *Core) EndAccountSessions(ctx context.Context, account store.AccountID, ch store.Change) (int, error) {
	if err := checkChange(ch); err != nil {
		return 0, fmt.Errorf("end sessions of account %d: %w", account, err)
	}
	var n int64
	err := c.tx(ctx, func(q Querier) error {
		var id int64
		if err := q.QueryRow(ctx, `SELECT id FROM accounts WHERE id = $1`, int64(account)).Scan(&id); err != nil {
			return err
		}
		var err error
		if n, err = q.Exec(ctx, `UPDATE sessions SET revoked = true WHERE account_id = $1 AND NOT revoked`, int64(account)); err != nil {
			return err
		}
		return c.recordChange(ctx, q, ch)
	})
	if err != nil {
		return 0, fmt.Errorf("end sessions of account %d: %w", account, c.mapErr(err))
	}
	return int(n), nil
}

// GiveMembership implements store.Store.
func (c *Core) GiveMembership(ctx context.Context, area store.AreaID, account store.AccountID, role store.Role, ch store.Change) error {
	fail := func(err error) error {
		return fmt.Errorf("give account %d membership of area %d: %w", account, area, err)
	}
	if role != store.RoleMember && role != store.RoleBuilder {
		return fail(fmt.Errorf("%w: role %q (an admin gives member or builder)", store.ErrInvalid, role))
	}
	if err := checkChange(ch); err != nil {
		return fail(err)
	}
	give := func(q Querier) error {
		was, err := c.roleIn(ctx, q, area, account)
		switch {
		case errors.Is(err, store.ErrNotMember):
			if err := c.addMember(ctx, q, area, account, role, ch.At); err != nil {
				return err
			}
		case err != nil:
			return err
		case was == store.RoleOwner:
			return fmt.Errorf("%w: the owner's membership does not change", store.ErrInvalid)
		default:
			if _, err := q.Exec(ctx, `UPDATE area_members SET role = $3 WHERE area_id = $1 AND account_id = $2`,
				int64(area), int64(account), string(role)); err != nil {
				return err
			}
		}
		return c.recordChange(ctx, q, ch)
	}
	err := c.tx(ctx, give)
	if errors.Is(c.mapErr(err), store.ErrDuplicate) {
		// Another give of the same membership inserted the row between this
		// one's read and its insert: given again, this one finds the member
		// and sets the role (the later give's role stands; both are
		// recorded), as two gives one after the other do.
		err = c.tx(ctx, give)
	}
	if err != nil {
		return fail(c.mapErr(err))
	}
	return nil
}

// TakeMembership implements store.Store.
func (c *Core) TakeMembership(ctx context.Context, area store.AreaID, account store.AccountID, ch store.Change) error {
	fail := func(err error) error {
		return fmt.Errorf("take account %d's membership of area %d: %w", account, area, err)
	}
	if err := checkChange(ch); err != nil {
		return fail(err)
	}
	err := c.tx(ctx, func(q Querier) error {
		was, err := c.roleIn(ctx, q, area, account)
		switch {
		case err != nil:
			return err
		case was == store.RoleOwner:
			return fmt.Errorf("%w: the owner's membership cannot be taken", store.ErrInvalid)
		}
		if _, err := q.Exec(ctx, `DELETE FROM area_members WHERE area_id = $1 AND account_id = $2`, int64(area), int64(account)); err != nil {
			return err
		}
		return c.recordChange(ctx, q, ch)
	})
	if err != nil {
		return fail(c.mapErr(err))
	}
	return nil
}

// roleIn reads account's role in area within q's transaction, or
// store.ErrNotMember.
func (c *Core) roleIn(ctx context.Context, q Querier, area store.AreaID, account store.AccountID) (store.Role, error) {
	var role string
	err := q.QueryRow(ctx, `SELECT role FROM area_members WHERE area_id = $1 AND account_id = $2`, int64(area), int64(account)).Scan(&role)
	if errors.Is(c.mapErr(err), store.ErrNotFound) {
		return "", store.ErrNotMember
	}
	return store.Role(role), err
}
