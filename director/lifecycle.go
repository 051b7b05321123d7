package director

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
)

// Wire codes the director sends in close orders.
const (
	codeAreaClosing = uint16(wire.CodeAreaClosing)
	codeRealmClosed = uint16(wire.CodeRealmClosed)
)

// live is an Area that is live (or being made live) on a host. Guarded by
// Director.mu.
type live struct {
	id    store.AreaID
	host  *host
	epoch store.Epoch
	kind  string
	// template is the Area's template; portals are the portals its
	// incarnation was spawned with (the admin's and its map's), which a
	// crossing it asks for must take.
	template string
	portals  []control.Portal
	// ready is closed once the Area is live on host (err nil) or failed.
	ready chan struct{}
	err   error

	peers     int
	accounts  []store.AccountID
	zeroSince time.Time // since when the host reported zero peers
	closing   bool
	lastSnap  time.Time // when a snapshot of this incarnation was last applied
	// width and height are the Area's size (a snapshot's blob and
	// characters must fit it); seqFrom, seqSince and tickRate bound the
	// seq of its snapshots (see seqLimit).
	width, height int
	seqFrom       store.Seq
	seqSince      time.Time
	tickRate      int
	// grants holds the expiry of each grant registered for this Area that
	// its player has not used yet (by account): an Area is never closed
	// while someone is on their way in.
	grants map[store.AccountID]time.Time
}

// JoinAnswer is what a successful join returns to the client. JoinID is
// a decimal string in JSON: its values exceed 2^53, past which
// JavaScript's numbers round (DESIGN.md, protocol principles).
type JoinAnswer struct {
	Grant  string `json:"grant"`
	WSURL  string `json:"ws_url"`
	JoinID uint64 `json:"join_id,string"`
	Area   uint32 `json:"area"`
}

// Refusal codes of a join, each with its HTTP status.
var (
	errNoSuchArea       = apiErr(404, "NO_SUCH_AREA", "no such area, or you are not one of its members")
	errNotMember        = apiErr(403, "NOT_MEMBER", "you are not a member of this area")
	errRealmClosed      = apiErr(403, "REALM_CLOSED", "the realm is closed")
	errRealmFull        = apiErr(503, "REALM_FULL", "the realm is full")
	errNewPlayersClosed = apiErr(403, "NEW_PLAYERS_CLOSED", "the realm is not taking new players")
	errAtCapacity       = apiErr(503, "AT_CAPACITY", "no area host has room for this area")
	errElsewhere        = apiErr(409, "IN_ANOTHER_AREA", "you are playing in another area; leave it first")
	// errHostsCannotStart: no host has room and the ones the director
	// starts exit before they register. Their reason is logged with the
	// answer's error id and shown by GET /readyz.
	errHostsCannotStart = apiErr(503, "GRANT_FAILED", "no area host can start right now; the realm's operator sees why in the director's log and at /readyz")
)

func grantFailed(format string, args ...any) *apiError {
	return apiErr(503, "GRANT_FAILED", fmt.Sprintf(format, args...))
}

// join makes area live, registers a grant for account there, and returns
// where to connect. Every refusal says why.
//
// A missing Area and another's Area are refused alike (NO_SUCH_AREA, after
// the same one query), so Area ids cannot be enumerated.
func (d *Director) join(ctx context.Context, acct store.Account, areaID store.AreaID) (*JoinAnswer, *apiError) {
	member, err := d.store.IsMember(ctx, areaID, acct.ID)
	if err != nil {
		return nil, internalErr(err)
	}
	if !member {
		return nil, errNoSuchArea
	}
	area, err := d.store.Area(ctx, areaID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoSuchArea
	} else if err != nil {
		return nil, internalErr(err)
	}
	settings, err := d.store.RealmSettings(ctx)
	if err != nil {
		return nil, internalErr(err)
	}
	defer d.accounts.lock(acct.ID)()
	if apiE := d.pendingGrants(acct.ID, areaID); apiE != nil {
		return nil, apiE
	}
	char, err := d.store.Character(ctx, acct.ID)
	isNew := errors.Is(err, store.ErrNotFound)
	if err != nil && !isNew {
		return nil, internalErr(err)
	}
	if apiE := d.door(settings, acct.ID, isNew); apiE != nil {
		return nil, apiE
	}
	// A join that fails changes nothing: the Area is made live and the
	// grant registered first; only then is a new character made, or one
	// that lives elsewhere moved by the door (if that write fails, the
	// grant is never handed out and expires unused).
	moving := !isNew && char.Area != areaID
	if moving && d.present(acct.ID, char.Area) {
		return nil, errElsewhere // in play in its current Area right now
	}
	l, apiE := d.ensureLive(ctx, area)
	if apiE != nil {
		return nil, apiE
	}
	arriving := char
	if isNew || moving {
		arriving = store.Character{Account: acct.ID, Area: areaID, Placed: false}
	}
	ans, apiE := d.grant(ctx, l, acct, arriving)
	if apiE != nil {
		return nil, apiE
	}
	switch {
	case isNew:
		if _, _, err := d.store.EnsureCharacter(ctx, acct.ID, areaID, time.Now()); err != nil {
			return nil, internalErr(err)
		}
	case moving:
		// Going home or to another Area by the door, not a portal: the
		// character moves in one transaction.
		t, err := d.store.MoveCharacter(ctx, store.Transfer{ID: store.TransferID("join-" + randomHex(12)), Account: acct.ID, From: char.Area, To: areaID, X: 0, Y: 0}, time.Now())
		if err != nil {
			return nil, internalErr(err)
		}
		if t.Result != store.ResultMoved {
			return nil, grantFailed("could not move your character: %s", t.Result)
		}
		d.log.Info("character moved by the door", "account", acct.ID, "from", char.Area, "to", areaID)
	}
	return ans, nil
}

// door applies the realm door: open, cap, new players. Someone already
// inside (present in an Area or holding a grant) is never refused.
func (d *Director) door(s store.RealmSettings, acct store.AccountID, isNew bool) *apiError {
	d.mu.Lock()
	defer d.mu.Unlock()
	inside, count := false, 0
	seen := map[store.AccountID]bool{}
	count1 := func(a store.AccountID) {
		if !seen[a] {
			seen[a] = true
			count++
		}
		inside = inside || a == acct
	}
	now := time.Now()
	for _, l := range d.areas {
		for _, a := range l.accounts {
			count1(a)
		}
		for a, until := range l.grants { // on their way in
			if now.Before(until) {
				count1(a)
			}
		}
	}
	switch {
	case inside:
		return nil
	case !s.Open:
		return errRealmClosed
	case isNew && !s.NewPlayersWelcome:
		return errNewPlayersClosed
	case count >= s.Cap:
		return errRealmFull
	}
	return nil
}

// present reports whether acct is bound in a live Area other than except
// (by the hosts' presence reports).
func (d *Director) present(acct store.AccountID, in store.AreaID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l := d.areas[in]; l != nil {
		for _, a := range l.accounts {
			if a == acct {
				return true
			}
		}
	}
	return false
}

// ensureLive returns the live record of area, making it live first if it
// is not: pick a host with room (or spawn one), begin a new incarnation,
// hydrate the Area from its last snapshot. Concurrent joins share one
// attempt.
func (d *Director) ensureLive(ctx context.Context, area store.Area) (*live, *apiError) {
	d.mu.Lock()
	l := d.areas[area.ID]
	if l != nil && !l.closing {
		d.mu.Unlock()
		select {
		case <-l.ready:
		case <-ctx.Done():
			return nil, grantFailed("gave up waiting for the area to start")
		}
		if l.err != nil {
			return nil, withCause(grantFailed("the area could not start"), l.err)
		}
		select {
		case <-l.host.gone:
			return nil, grantFailed("the area's host is gone; try again")
		default:
		}
		return l, nil
	}
	if l != nil && l.closing {
		// Wait (bounded) for the close to finish, then make it live again:
		// a player arriving as an idle Area unloads is not refused for it.
		d.mu.Unlock()
		deadline := time.Now().Add(d.cfg.JoinTimeout)
		for {
			d.mu.Lock()
			still := d.areas[area.ID] == l
			d.mu.Unlock()
			if !still {
				return d.ensureLive(ctx, area)
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return nil, grantFailed("the area is closing; try again in a moment")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	l = &live{id: area.ID, kind: area.Kind, template: area.Template, ready: make(chan struct{}), zeroSince: time.Now()}
	d.areas[area.ID] = l
	d.mu.Unlock()

	err := d.start(ctx, area, l)
	d.mu.Lock()
	l.err = err
	if err != nil && d.areas[area.ID] == l {
		delete(d.areas, area.ID)
	}
	close(l.ready)
	d.mu.Unlock()
	if err != nil {
		var apiE *apiError
		if errors.As(err, &apiE) {
			return nil, apiE
		}
		d.log.Warn("area failed to start", "area", area.ID, "err", err)
		return nil, withCause(grantFailed("the area could not start"), err)
	}
	return l, nil
}

// start makes area live on a host; l is already in d.areas.
func (d *Director) start(ctx context.Context, area store.Area, l *live) error {
	h, err := d.pickHost(ctx)
	if err != nil {
		return err
	}
	epoch, err := d.store.BeginIncarnation(ctx, area.ID)
	if err != nil {
		return err
	}
	blob, seq, _, err := d.store.AreaSnapshot(ctx, area.ID)
	if err != nil {
		return err
	}
	portals := d.spawnPortals(ctx, area)
	w, ht := d.areaSize(area)
	if (w != area.W || ht != area.H) && len(blob) > 0 {
		// An Area stored before templates: its map is another size now,
		// and what its blob kept (wanderers on an open floor) has no place
		// on it. It starts from its map.
		d.warned.once(d, fmt.Sprintf("stale-blob:%d", area.ID), "an area's stored state predates its map; it starts from the map",
			"area", area.ID, "template", area.Template, "stored", fmt.Sprintf("%dx%d", area.W, area.H), "map", fmt.Sprintf("%dx%d", w, ht))
		blob = nil
	}
	ch := make(chan *control.AreaReady, 1)
	d.mu.Lock()
	h.ready[area.ID] = ch
	l.host, l.epoch, l.portals = h, epoch, portals
	l.width, l.height, l.seqFrom, l.seqSince, l.tickRate = w, ht, seq, time.Now(), d.hostTickRate(h)
	h.areas[area.ID] = l
	d.mu.Unlock()
	err = h.conn.Send(&control.SpawnArea{Area: uint32(area.ID), Epoch: uint64(epoch), Kind: area.Kind, Template: area.Template,
		W: w, H: ht, Seq: uint64(seq), Blob: blob, Seed: area.Seed, Portals: portals})
	if err == nil {
		select {
		case r := <-ch:
			if r.Error != "" {
				err = fmt.Errorf("host %d: %s", h.id, r.Error)
			}
		case <-h.gone:
			err = fmt.Errorf("host %d went away", h.id)
		case <-time.After(d.cfg.JoinTimeout):
			err = fmt.Errorf("host %d did not answer in %v", h.id, d.cfg.JoinTimeout)
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err != nil {
		d.mu.Lock()
		delete(h.ready, area.ID)
		if h.areas[area.ID] == l {
			delete(h.areas, area.ID)
		}
		d.mu.Unlock()
		return err
	}
	d.log.Info("area live", "area", area.ID, "host", h.id, "epoch", epoch, "seq", seq)
	return nil
}

// pickHost returns the registered host with the most room, spawning a new
// one (within the process rail) when none has any. While spawned hosts
// exit before they register (a host that failed within hostRetryAfter),
// it refuses at once rather than wait JoinTimeout for one that will not
// come.
func (d *Director) pickHost(ctx context.Context) (*host, error) {
	deadline := time.Now().Add(d.cfg.JoinTimeout)
	spawned := false
	for {
		d.mu.Lock()
		var best *host
		for _, h := range d.hosts {
			if len(h.areas) < h.pool && (best == nil || len(h.areas) < len(best.areas)) {
				best = h
			}
		}
		failed := d.hostFailure
		d.mu.Unlock()
		if best != nil {
			return best, nil
		}
		if failed != nil && time.Since(failed.at) < hostRetryAfter {
			return nil, withCause(errHostsCannotStart, fmt.Errorf("area hosts exit before they register (%d in a row): %s", failed.count, failed.reason))
		}
		// One new host at a time: joins that find every host full while one
		// is already starting wait for it instead of each starting another.
		if !spawned && len(d.spawner.pending()) == 0 {
			if err := d.spawner.startExtra(); err != nil {
				return nil, errAtCapacity
			}
			spawned = true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, errAtCapacity
		}
		d.waitHosts(time.Until(deadline))
	}
}

// waitHosts waits (bounded) for the host registry to change.
func (d *Director) waitHosts(max time.Duration) {
	d.mu.Lock()
	changed := d.hostsChanged
	d.mu.Unlock()
	select {
	case <-changed:
	case <-time.After(min(max, 250*time.Millisecond)):
	}
}

// grant registers a join grant on l's host and waits for its ack.
func (d *Director) grant(ctx context.Context, l *live, acct store.Account, char store.Character) (*JoinAnswer, *apiError) {
	return d.grantAs(ctx, l, acct, char, false)
}

// grantAs is grant, marking the grant of a portal arrival when portal is set.
func (d *Director) grantAs(ctx context.Context, l *live, acct store.Account, char store.Character, portal bool) (*JoinAnswer, *apiError) {
	token := randomHex(16)
	joinID := d.joinSeq.Add(1)
	ch := make(chan *control.GrantAck, 1)
	h := l.host
	d.mu.Lock()
	h.grants[token] = &grantWait{area: l.id, ch: ch}
	until := time.Now().Add(d.cfg.GrantTTL)
	if l.grants == nil {
		l.grants = map[store.AccountID]time.Time{}
	}
	l.grants[acct.ID] = until
	d.mu.Unlock()
	msg := &control.Grant{Area: uint32(l.id), Token: token, JoinID: joinID, TTLMS: d.cfg.GrantTTL.Milliseconds(), Name: acct.Name,
		Character: control.Character{Account: uint64(acct.ID), X: char.X, Y: char.Y, State: char.State, Placed: char.Placed && char.Area == l.id},
		Portal:    portal}
	fail := func(why string) (*JoinAnswer, *apiError) {
		d.counters.grants.WithLabelValues("failed").Inc()
		d.mu.Lock()
		delete(h.grants, token)
		delete(l.grants, acct.ID)
		d.mu.Unlock()
		return nil, grantFailed("%s", why)
	}
	if err := h.conn.Send(msg); err != nil {
		return fail("the area's host is unreachable")
	}
	select {
	case ack := <-ch:
		if ack.Error != "" { // the host's words: logged, not shown
			ans, apiE := fail("the area's host refused the grant")
			return ans, withCause(apiE, fmt.Errorf("host %d: grant ack: %s", h.id, ack.Error))
		}
	case <-h.gone:
		return fail("the area's host went away")
	case <-time.After(d.cfg.JoinTimeout):
		return fail("the area's host did not register the grant in time")
	case <-ctx.Done():
		return fail("the join was cancelled")
	}
	d.counters.grants.WithLabelValues("ok").Inc()
	return &JoinAnswer{Grant: token, WSURL: h.wsURL, JoinID: joinID, Area: uint32(l.id)}, nil
}

// lifecycle closes Areas whose host has reported zero peers for the idle
// grace, and prunes expired grants.
func (d *Director) lifecycle(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d.closeIdle()
	}
}

func (d *Director) closeIdle() {
	now := time.Now()
	var idle []*live
	d.mu.Lock()
	for _, l := range d.areas {
		if l.closing || l.host == nil || l.peers > 0 || l.zeroSince.IsZero() || now.Sub(l.zeroSince) < d.cfg.AreaIdleGrace {
			continue
		}
		select {
		case <-l.ready:
		default:
			continue // still starting
		}
		if l.err != nil || d.grantPending(l) {
			continue
		}
		l.closing = true
		idle = append(idle, l)
	}
	d.mu.Unlock()
	for _, l := range idle {
		d.log.Info("closing an idle area", "area", l.id, "host", l.host.id)
		_ = l.host.conn.Send(&control.CloseArea{Area: uint32(l.id), Reason: codeAreaClosing, GraceMS: 0})
	}
}

// grantPending reports whether a grant for l is being registered or
// registered and not yet used or expired. d.mu held.
func (d *Director) grantPending(l *live) bool {
	now := time.Now()
	for a, until := range l.grants {
		if now.After(until) {
			delete(l.grants, a)
			continue
		}
		return true
	}
	return len(l.host.grants) > 0
}

// drain tells every live Area to close with REALM_CLOSED after the close
// grace; the director itself stays up.
func (d *Director) drain() {
	d.mu.Lock()
	var all []*live
	for _, l := range d.areas {
		if l.host != nil && !l.closing {
			l.closing = true
			all = append(all, l)
		}
	}
	d.mu.Unlock()
	for _, l := range all {
		_ = l.host.conn.Send(&control.CloseArea{Area: uint32(l.id), Reason: codeRealmClosed, GraceMS: d.cfg.CloseGrace.Milliseconds()})
	}
	d.log.Info("realm drained", "areas", len(all))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
