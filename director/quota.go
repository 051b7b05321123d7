package director

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/leyworks/ley/store"
)

// The quotas' names, as QUOTA_EXCEEDED messages give them.
const (
	quotaOwnedAreas    = "owned_areas"
	quotaPendingGrants = "pending_grants"
	quotaJoinsPerMin   = "joins_per_minute"
	quotaLiveInvites   = "live_invites"
	quotaOwnedSquares  = "owned_squares"
)

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
	n, first := d.registry.PendingGrants(acct, area)
	if n < d.cfg.MaxPendingGrants {
		return nil
	}
	return quotaExceeded(http.StatusTooManyRequests, quotaPendingGrants,
		fmt.Sprintf("at most %d joins answered and not yet used at once: connect with one, or wait for one to lapse", d.cfg.MaxPendingGrants),
		time.Until(first))
}

// ownedAreas refuses (403 QUOTA_EXCEEDED) a new Area of w x h squares to
// an account that owns MaxOwnedAreas already, or whose Areas would then
// cover more than MaxOwnedSquares (an Area's memory on its host grows
// with its squares: three accounts' 1024x1024 Areas once filled a host).
// Admins are exempt: they own the realm's shared Areas and the load
// driver's provisioned ones. The caller holds acct's creating lock.
func (d *Director) ownedAreas(ctx context.Context, acct store.Account, w, h int) *apiError {
	if acct.Admin || (d.cfg.MaxOwnedAreas == 0 && d.cfg.MaxOwnedSquares == 0) {
		return nil
	}
	areas, err := d.store.AreasOf(ctx, acct.ID)
	if err != nil {
		return storeErr(err)
	}
	owned, squares := 0, int64(w)*int64(h)
	for _, a := range areas {
		if a.Owner == acct.ID {
			owned++
			squares += int64(a.W) * int64(a.H)
		}
	}
	if d.cfg.MaxOwnedAreas > 0 && owned >= d.cfg.MaxOwnedAreas {
		return quotaExceeded(http.StatusForbidden, quotaOwnedAreas, fmt.Sprintf("an account owns at most %d Areas", d.cfg.MaxOwnedAreas), 0)
	}
	if d.cfg.MaxOwnedSquares > 0 && squares > d.cfg.MaxOwnedSquares {
		return quotaExceeded(http.StatusForbidden, quotaOwnedSquares,
			fmt.Sprintf("an account's Areas cover at most %d squares (this one would make %d)", d.cfg.MaxOwnedSquares, squares), 0)
	}
	return nil
}

// liveInvites refuses (403 QUOTA_EXCEEDED) a new invite to an account
// with MaxLiveInvites invites that can still be redeemed (the probe made
// 300 invites of 10,000 uses in 0.6 s). Admins are exempt. The caller
// holds acct's creating lock.
func (d *Director) liveInvites(ctx context.Context, acct store.Account) *apiError {
	if acct.Admin || d.cfg.MaxLiveInvites == 0 {
		return nil
	}
	invs, err := d.store.InvitesBy(ctx, acct.ID, time.Now(), d.cfg.MaxLiveInvites)
	if err != nil {
		return storeErr(err)
	}
	if len(invs) < d.cfg.MaxLiveInvites {
		return nil
	}
	return quotaExceeded(http.StatusForbidden, quotaLiveInvites,
		fmt.Sprintf("an account has at most %d invites that can still be redeemed; wait for one to be used up or to expire", d.cfg.MaxLiveInvites), 0)
}
