package director

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/leyworks/ley/director/auth"
	"github.com/leyworks/ley/store"
)

// The quotas' names, as QUOTA_EXCEEDED messages give them.
const (
	quotaOwnedAreas    = "owned_areas"
	quotaPendingGrants = "pending_grants"
	quotaJoinsPerMin   = "joins_per_minute"
)

// quotas holds the state of the per-account quotas (Config.MaxOwnedAreas,
// MaxPendingGrants, JoinsPerMinute) beyond the director's registries.
type quotas struct {
	// joins limits each account's joins; nil when JoinsPerMinute is 0.
	// Keyed by account id: a Limiter of its own, apart from the address
	// limiter.
	joins *auth.Limiter
	// creating serialises one account's Area creations, so that the
	// owned count checked is the count the creation adds to.
	creating accountLocks
}

func newQuotas(cfg Config) (*quotas, error) {
	q := &quotas{}
	if n := cfg.JoinsPerMinute; n > 0 {
		l, err := auth.NewLimiter(auth.LimiterConfig{Every: time.Minute / time.Duration(n), Burst: n, MaxKeys: 100_000})
		if err != nil {
			return nil, fmt.Errorf("director: joins per minute: %w", err)
		}
		q.joins = l
	}
	return q, nil
}

// quotaExceeded is the refusal of a request past quota; retry, if not
// zero, is when it may succeed (a 429's Retry-After).
func quotaExceeded(status int, quota, msg string, retry time.Duration) *apiError {
	e := apiErr(status, "QUOTA_EXCEEDED", "quota "+quota+": "+msg)
	e.retry = retry
	return e
}

// joinRate takes one of acct's joins a minute, or refuses with 429
// QUOTA_EXCEEDED and when to retry. Admins are not exempt: an admin plays
// as one player.
func (d *Director) joinRate(acct store.Account) *apiError {
	if d.quotas.joins == nil {
		return nil
	}
	key := strconv.FormatUint(uint64(acct.ID), 10)
	if d.quotas.joins.Allow(key) {
		return nil
	}
	return quotaExceeded(http.StatusTooManyRequests, quotaJoinsPerMin,
		fmt.Sprintf("at most %d joins a minute", d.cfg.JoinsPerMinute), d.quotas.joins.Retry(key))
}

// pendingGrants refuses (429 QUOTA_EXCEEDED, retry when the first of them
// lapses) a join of acct to area while acct holds MaxPendingGrants grants,
// answered and neither used nor expired, for other Areas; a new grant for
// area replaces acct's grant there, so it does not count. The caller holds
// acct's account lock, so no grant of acct is registered meanwhile.
func (d *Director) pendingGrants(acct store.AccountID, area store.AreaID) *apiError {
	if d.cfg.MaxPendingGrants == 0 {
		return nil
	}
	now := time.Now()
	n := 0
	var first time.Time
	d.mu.Lock()
	for id, l := range d.areas {
		if until, ok := l.grants[acct]; ok && id != area && now.Before(until) {
			n++
			if first.IsZero() || until.Before(first) {
				first = until
			}
		}
	}
	d.mu.Unlock()
	if n < d.cfg.MaxPendingGrants {
		return nil
	}
	return quotaExceeded(http.StatusTooManyRequests, quotaPendingGrants,
		fmt.Sprintf("at most %d joins answered and not yet used at once: connect with one, or wait for one to lapse", d.cfg.MaxPendingGrants),
		first.Sub(now))
}

// ownedAreas refuses (403 QUOTA_EXCEEDED) a new Area to an account that
// owns MaxOwnedAreas already. Admins are exempt: they own the realm's
// shared Areas and the load driver's provisioned ones. The caller holds
// acct's creating lock.
func (d *Director) ownedAreas(ctx context.Context, acct store.Account) *apiError {
	if acct.Admin || d.cfg.MaxOwnedAreas == 0 {
		return nil
	}
	areas, err := d.store.AreasOf(ctx, acct.ID)
	if err != nil {
		return internalErr(err)
	}
	owned := 0
	for _, a := range areas {
		if a.Owner == acct.ID {
			owned++
		}
	}
	if owned < d.cfg.MaxOwnedAreas {
		return nil
	}
	return quotaExceeded(http.StatusForbidden, quotaOwnedAreas, fmt.Sprintf("an account owns at most %d Areas", d.cfg.MaxOwnedAreas), 0)
}
