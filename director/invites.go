package director

import (
	"net/http"
	"time"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/store"
)

// maxInvitesListed bounds the invites GET /v1/me/invites answers.
const maxInvitesListed = 500

// myInvites: GET /v1/me/invites -> {invites, more}: the invites the
// account made that can still be redeemed (not expired, a use left),
// newest first, at most maxInvitesListed; more says whether there are
// others past them.
func (d *Director) myInvites(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	invs, err := d.store.InvitesBy(r.Context(), acct.ID, time.Now(), maxInvitesListed+1)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	more := len(invs) > maxInvitesListed
	if more {
		invs = invs[:maxInvitesListed]
	}
	out := make([]apijson.Invite, len(invs))
	for i, inv := range invs {
		out[i] = apijson.Invite{Code: inv.Code, Area: uint32(inv.Area), Expires: inv.Expires.UTC(), UsesLeft: inv.UsesLeft}
	}
	return http.StatusOK, map[string]any{"invites": out, "more": more}, nil
}
