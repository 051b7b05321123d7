package registry

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// Answer is where a granted player connects: a single-use grant for its
// hello on the Area's host. JoinID is a decimal string in JSON: its values
// exceed 2^53, past which JavaScript's numbers round.
type Answer struct {
	Grant  string `json:"grant"`
	WSURL  string `json:"ws_url"`
	JoinID uint64 `json:"join_id,string"`
	Area   uint32 `json:"area"`
}

// joinSeq numbers join attempts (their join ids), from a random start, so
// that ids of two directors of a realm never meet. The start is always
// above 2^53, where JavaScript's numbers round: a client that reads a join
// id as a number fails on every join, not on one in 512 (the share of
// random starts below 2^53 when it was drawn from [0, 2^62)).
var joinSeq = func() *atomic.Uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var s atomic.Uint64
	s.Store(1<<53 + binary.LittleEndian.Uint64(b[:])>>3)
	return &s
}()

// Arrival is how a character comes into an Area with a grant.
type Arrival struct {
	// Builder: the Area's rules let it build there (its owner, or a
	// member it named a builder).
	Builder bool
	// New: the join made the character; the Area gives it the content's
	// starter kit.
	New bool
	// Portal: it arrives through a portal (the host places it on the
	// character's square).
	Portal bool
}

// Grant registers a join grant for acct's character char on l's host and
// waits for its ack. name is the display name the host shows; how says
// how the character arrives.
func (r *Registry) Grant(ctx context.Context, l *Live, acct store.AccountID, name string, char store.Character, how Arrival) (Answer, error) {
	token := hex.EncodeToString(randomBytes(16))
	joinID := joinSeq.Add(1)
	h := l.Host
	call, err := h.grants.Expect(token)
	if err != nil {
		return Answer{}, fmt.Errorf("%w: %w", ErrGrantFailed, err)
	}
	now := time.Now()
	until := now.Add(r.cfg.GrantTTL)
	r.mu.Lock()
	if l.grants == nil {
		l.grants = map[store.AccountID]time.Time{}
	}
	l.grants[acct] = until
	l.know(acct, now.Add(r.grantWindow()))
	r.mu.Unlock()
	fail := func(why error) (Answer, error) {
		r.metrics.grants.WithLabelValues("failed").Inc()
		call.Cancel()
		r.mu.Lock()
		delete(l.grants, acct)
		r.mu.Unlock()
		return Answer{}, fmt.Errorf("%w: %w", ErrGrantFailed, why)
	}
	msg := &control.Grant{Area: uint32(l.ID), Token: token, JoinID: joinID, TTLMS: r.cfg.GrantTTL.Milliseconds(), Name: name,
		Character: control.Character{Account: uint64(acct), X: char.X, Y: char.Y, State: char.State, Placed: char.Placed && char.Area == l.ID, Builder: how.Builder, New: how.New},
		Portal:    how.Portal}
	if err := h.conn.Send(msg); err != nil {
		return fail(fmt.Errorf("the area's host is unreachable: %w", err))
	}
	wctx, cancel := context.WithTimeout(ctx, r.cfg.JoinTimeout)
	ack, err := call.Wait(wctx)
	cancel()
	switch {
	case err != nil:
		return fail(fmt.Errorf("the area's host did not register the grant: %w", err))
	case ack.Error != "": // the host's words: logged by the caller, not shown
		return fail(fmt.Errorf("host %d refused the grant: %s", h.ID, ack.Error))
	}
	r.metrics.grants.WithLabelValues("ok").Inc()
	return Answer{Grant: token, WSURL: h.WSURL, JoinID: joinID, Area: uint32(l.ID)}, nil
}

// EvictElsewhere makes sure acct's character has no body in a live Area
// other than keep before it may enter keep: every live Area whose host
// reported the account there (bound or away), holds a grant for it, or is
// home (where its row says it is) is asked to let go of it
// (control.Evict), and the snapshot carrying its final state must be
// durable. A body that cannot leave now (crossing a portal), or home's
// host out of touch (Lost: it may still run the body), is ErrElsewhere
// with when to retry; a final state the store did not take is ErrUnsaved.
// The caller holds acct's account lock, so no grant of acct is registered
// meanwhile.
func (r *Registry) EvictElsewhere(ctx context.Context, acct store.AccountID, keep, home store.AreaID) error {
	if joinEvictOff() {
		return nil
	}
	var targets []*Live
	r.mu.Lock()
	if until, lost := r.lost[home]; lost && home != keep {
		r.mu.Unlock()
		return &RetryError{Err: fmt.Errorf("%w: its area's host is out of touch", ErrElsewhere), Retry: time.Until(until)}
	}
	for id, l := range r.areas {
		if id == keep || l.Host == nil {
			continue
		}
		_, granted := l.grants[acct]
		if granted || id == home || slices.Contains(l.accounts, acct) || slices.Contains(l.away, acct) {
			targets = append(targets, l)
		}
	}
	r.mu.Unlock()
	for _, l := range targets {
		if err := r.evict(ctx, l, acct, keep); err != nil {
			return err
		}
	}
	return nil
}

// evict asks l's host to let go of acct's body there (see
// EvictElsewhere), for a join of keep (0: none).
func (r *Registry) evict(ctx context.Context, l *Live, acct store.AccountID, keep store.AreaID) error {
	select {
	case <-l.ready:
	case <-ctx.Done():
		return fmt.Errorf("%w: the join was cancelled", ErrElsewhere)
	}
	if l.err != nil {
		return nil // it never went live: no body of anyone there
	}
	h := l.Host
	call, err := h.evictions.Expect(evictKey{area: l.ID, account: acct})
	if err != nil {
		return &RetryError{Err: fmt.Errorf("%w: %w", ErrElsewhere, err), Retry: time.Second}
	}
	if err := h.conn.Send(&control.Evict{Area: uint32(l.ID), Epoch: uint64(l.Epoch), Account: uint64(acct)}); err != nil {
		call.Cancel()
		return nil // the link is down: the host is being unregistered, its Areas lost with it
	}
	wctx, cancel := context.WithTimeout(ctx, r.cfg.JoinTimeout)
	ev, err := call.Wait(wctx)
	cancel()
	select {
	case <-h.gone: // the host went away: its Areas (and bodies) are lost with it
		if until, lost := r.Lost(l.ID); lost {
			return &RetryError{Err: fmt.Errorf("%w: its area's host is out of touch", ErrElsewhere), Retry: time.Until(until)}
		}
		return nil
	default:
	}
	if err != nil {
		return &RetryError{Err: fmt.Errorf("%w: area %d did not let go of it: %w", ErrElsewhere, l.ID, err), Retry: time.Second}
	}
	if ev.Busy {
		return &RetryError{Err: fmt.Errorf("%w: it crosses a portal", ErrElsewhere), Retry: time.Second}
	}
	r.mu.Lock()
	delete(l.grants, acct)
	l.accounts = slices.DeleteFunc(l.accounts, func(a store.AccountID) bool { return a == acct })
	l.away = slices.DeleteFunc(l.away, func(a store.AccountID) bool { return a == acct })
	stored := l.storedSeq
	r.mu.Unlock()
	if ev.Seq > 0 && store.Seq(ev.Seq) > stored {
		// Its final state did not reach the store (the snapshot was
		// refused or the store failed): it must not be anywhere else.
		return &RetryError{Err: ErrUnsaved, Retry: time.Second}
	}
	r.log.Info("character evicted for a join elsewhere", "account", acct, "from", l.ID, "to", keep, "seq", ev.Seq)
	return nil
}

// EvictFrom asks the host of area, if it is live, to let go of acct's
// body there (bound, away or holding a grant), its final state made
// durable, as EvictElsewhere does for a join elsewhere: an admin took the
// account's membership. An Area that is not live holds no body.
func (r *Registry) EvictFrom(ctx context.Context, acct store.AccountID, area store.AreaID) error {
	r.mu.Lock()
	l := r.areas[area]
	r.mu.Unlock()
	if l == nil || l.Host == nil {
		return nil
	}
	return r.evict(ctx, l, acct, 0)
}

// ForgetGrant drops acct's grant in l (the join that asked for it
// failed after the grant was registered: it expires on the host unused).
func (r *Registry) ForgetGrant(l *Live, acct store.AccountID) {
	r.mu.Lock()
	delete(l.grants, acct)
	r.mu.Unlock()
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
