package director

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/store"
)

// JoinAnswer is what a successful join returns to the client: a grant
// for its hello, where to use it, and its join id (a decimal string in
// JSON: its values exceed 2^53, past which JavaScript's numbers round).
type JoinAnswer = registry.Answer

func grantFailed(format string, args ...any) *apiError {
	return apiErr(503, "GRANT_FAILED", fmt.Sprintf(format, args...))
}

// errElsewhere is the refusal of a join while the character's body
// elsewhere cannot leave yet, with when to try again.
func errElsewhere(retry time.Duration) *apiError {
	return &apiError{Status: 409, Code: "IN_ANOTHER_AREA",
		Message: "your character is crossing between areas, or its area's host is out of touch, right now; try again in a moment", retry: max(retry, time.Second)}
}

// registryErr answers a failure of the registry to make an Area live, to
// register a grant or to evict: each kind with its code, and its cause
// logged beside the answer's error id.
func registryErr(err error) *apiError {
	var retry time.Duration
	var re *registry.RetryError
	if errors.As(err, &re) {
		retry = re.Retry
	}
	switch {
	case errors.Is(err, store.ErrUnavailable):
		return withCause(errUnavailable, err)
	case errors.Is(err, registry.ErrElsewhere):
		return errElsewhere(retry)
	case errors.Is(err, registry.ErrHostsCannotStart):
		return withCause(errHostsCannotStart, err)
	case errors.Is(err, registry.ErrAtCapacity):
		return withCause(errAtCapacity, err)
	case errors.Is(err, registry.ErrHostLost):
		e := grantFailed("the area's host is out of touch; it comes back, or the area moves to another host, within %d s", int(max(retry, time.Second).Seconds()+0.5))
		e.retry = max(retry, time.Second)
		return withCause(e, err)
	case errors.Is(err, registry.ErrUnsaved):
		e := grantFailed("your character's state in the area you left could not be saved; try again in a moment")
		e.retry = time.Second
		return withCause(e, err)
	case errors.Is(err, registry.ErrGrantFailed):
		return withCause(grantFailed("the area's host did not take the grant; try again"), err)
	}
	return withCause(grantFailed("the area could not start"), err)
}

// join makes area live, registers a grant for account there, and returns
// where to connect. Every refusal says why.
//
// A missing Area and another's Area are refused alike (NO_SUCH_AREA, after
// the same one query), so Area ids cannot be enumerated.
func (d *Director) join(ctx context.Context, acct store.Account, areaID store.AreaID) (*JoinAnswer, *apiError) {
	area, member, err := d.store.MemberArea(ctx, areaID, acct.ID)
	if errors.Is(err, store.ErrNotMember) {
		return nil, errNoSuchArea
	} else if err != nil {
		return nil, storeErr(err)
	}
	settings, err := d.realmSettings(ctx)
	if err != nil {
		return nil, storeErr(err)
	}
	defer d.transfers.Lock(acct.ID)()
	if apiE := d.pendingGrants(acct.ID, areaID); apiE != nil {
		return nil, apiE
	}
	char, err := d.store.Character(ctx, acct.ID)
	isNew := errors.Is(err, store.ErrNotFound)
	if err != nil && !isNew {
		return nil, storeErr(err)
	}
	if apiE := d.door(settings, acct.ID, isNew); apiE != nil {
		return nil, apiE
	}
	// A join that fails changes nothing: the Area is made live and the
	// grant registered first; only then is a new character made, or one
	// that lives elsewhere moved by the door (if that write fails, the
	// grant is never handed out and expires unused).
	moving := !isNew && char.Area != areaID
	// The Area joined goes live first: its new incarnation fences from
	// here on any crossing of a stale incarnation of it (the store's epoch
	// check).
	l, err := d.registry.EnsureLive(ctx, area)
	if err != nil {
		return nil, registryErr(err)
	}
	// One character, one Area: wherever else its body may be (bound, away
	// for a resume, on its way in with a grant), it leaves first, its
	// session there taken over, its final state made durable.
	if err := d.registry.EvictElsewhere(ctx, acct.ID, areaID, char.Area); err != nil {
		return nil, registryErr(err)
	}
	if !isNew && !moving && !rejoinEvictOff() {
		// And here: a body of it here (away for a resume) or the final
		// state of one that left (its snapshot maybe still on its way) is
		// newer than the store's. The join binds from the stored state, so
		// it is made durable first, as for a join elsewhere; the new body
		// stands where the old one did, carrying what it carried.
		if err := d.registry.EvictFrom(ctx, acct.ID, areaID); err != nil {
			return nil, registryErr(err)
		}
	}
	var fromSeq store.Seq
	var fence *store.Epoch // the incarnation of the Area it leaves that the move ends
	var ended store.Epoch  // and once it did
	if !isNew && !joinRecheckOff() {
		// The evictions stored its final state; and should a crossing have
		// moved it meanwhile, this join is not the one to decide where it is.
		now, err := d.store.Character(ctx, acct.ID)
		if err != nil {
			return nil, storeErr(err)
		}
		if now.Area != char.Area {
			return nil, errElsewhere(time.Second)
		}
		char = now
		switch from := d.registry.Area(char.Area); {
		case moving && from != nil:
			fromSeq = d.registry.Flush(ctx, char.Area) // what the eviction stored, at least
		case moving && !doorFenceOff():
			// No host runs it for this director; one cut off may still (its
			// lease ran out, so it binds no one, but it holds what it did
			// before): the move ends that incarnation.
			done, ok := d.registry.EndIncarnation(char.Area)
			if !ok {
				return nil, errElsewhere(time.Second) // it went live meanwhile: its host answers for it next time
			}
			a, err := d.store.Area(ctx, char.Area)
			if err != nil {
				done(0)
				return nil, storeErr(err)
			}
			fence = &a.Epoch
			defer func() { done(ended) }()
		}
	}
	arriving := char
	if isNew || moving {
		// Its state (inventory) goes with it; it lands where newcomers do.
		arriving = store.Character{Account: acct.ID, Area: areaID, State: char.State, Placed: false}
	}
	ans, err := d.registry.Grant(ctx, l, acct.ID, acct.Name, arriving, registry.Arrival{Builder: isBuilder(member.Role), New: isNew})
	if err != nil {
		return nil, registryErr(err)
	}
	switch {
	case isNew:
		if _, _, err := d.store.EnsureCharacter(ctx, acct.ID, areaID, time.Now()); err != nil {
			d.registry.ForgetGrant(l, acct.ID)
			return nil, storeErr(err)
		}
	case moving:
		// Going home or to another Area by the door, not a portal: the
		// character moves in one transaction, once the snapshot with its
		// final state where it was is stored.
		if err := d.transfers.MoveByDoor(ctx, acct.ID, char.Area, areaID, fromSeq, fence); err != nil {
			d.registry.ForgetGrant(l, acct.ID)
			if errors.Is(err, store.ErrUnavailable) {
				return nil, storeErr(err)
			}
			return nil, withCause(grantFailed("could not move your character; try again"), err)
		}
		if fence != nil {
			ended = *fence
		}
	}
	return &ans, nil
}

// isBuilder reports whether a member of role may build where the rules
// build by builders: the Area's owner and the members it named builders.
func isBuilder(role store.Role) bool { return role == store.RoleOwner || role == store.RoleBuilder }
