package director

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"sync"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/systems/persist/blob"
)

// What the director refuses from the control channel. A host holding the
// host key is trusted with the Areas the director placed on it, and with
// nothing else: every message about an Area must come from that Area's
// host, for its current incarnation (epoch), and a snapshot must be one a
// host could load and could have produced. Every refusal is counted (by
// reason) and logged, at most one line per reason a second.

// Reasons a registered host's message is refused: the reason label of
// ley_host_message_refusals_total.
const (
	refuseNotLive      = "not_live"          // the Area is live on no host
	refuseOtherHost    = "other_host"        // the Area is live on another host
	refuseStaleEpoch   = "stale_epoch"       // not the Area's current incarnation
	refuseSeqJump      = "seq_jump"          // a seq past what the incarnation could have produced
	refuseBadCharacter = "bad_character"     // a character off the Area's grid
	refuseBadBlob      = "bad_blob"          // a blob no host could load (blob.Check)
	refuseUnsolicited  = "unsolicited"       // an answer to nothing the director asked this host
	refuseTransfer     = "transfer_mismatch" // a crossing's id reused for another Area or account
	refuseUnexpected   = "unexpected_type"   // a type hosts never send
)

// Reasons a control connection is closed before it registers: the reason
// label of ley_control_refusals_total.
const (
	controlCap        = "unregistered_cap" // ControlMaxUnregistered connections were already waiting
	controlFrameSize  = "frame_too_large"  // a frame past control.MaxRegisterFrameSize
	controlDeadline   = "register_timeout" // no register within ControlRegisterTimeout
	controlMalformed  = "malformed"        // a frame that is not a control message
	controlClosed     = "closed"           // the peer closed before registering
	controlNotReg     = "not_register"     // a first message other than register
	controlBadCreds   = "bad_credentials"  // no valid spawn token, host key or certificate
	controlBadRequest = "bad_register"     // a register with a bad ws_url or pool size
	controlCleartext  = "cleartext"        // the host key over a plain link from another machine
	controlNotLeader  = "not_leader"       // this director follows: the host is sent to the leader
	controlHandshake  = "tls_handshake"    // a TLS handshake that failed (no or a bad certificate)
	controlNoTLS      = "tls_unconfigured" // a TLS handshake on a director without control TLS
)

// The bound on a snapshot's seq. Seqs continue across incarnations (an
// incarnation starts at the stored seq) and a host raises its Area's seq
// once per snapshot it sends. An Area's loop sends at most one snapshot
// per portal crossing begun in a tick (at most one per portal square: a
// square holds one body, and an Area has at most maxPortals) plus, in
// each of its (at most two) housekeeping rounds a tick, one for dropped
// bodies, one on cadence, one as it freezes and one final: so at most
// maxSnapshotsPerTick a tick, and no more ticks than its host's tick rate
// allows since the incarnation began. The bound counts from the
// incarnation's start (or, for an adopted one, from when its stored seq
// was written), never from a later snapshot's arrival, so a snapshot that
// waited in a queue cannot make it unsound; seqClockSlack covers clock
// skew between directors and a snapshot's way through the store. It is
// loose (about 1.3 million snapshots an hour at 20 Hz) but sound, and it
// keeps any seq a forger or a broken host sends far from the store's
// 2^63-1.
const (
	maxSnapshotsPerTick = maxPortals + 8
	// maxHostTickRate is the highest tick rate a host accepts (area
	// config): the rate assumed for a host the director did not spawn.
	maxHostTickRate = 1000
	seqClockSlack   = 10 * time.Second
	// maxTicksBound caps the tick count of the bound (35 years at 1000 Hz),
	// so its arithmetic never overflows.
	maxTicksBound = 1 << 40
)

// logEvery is the most often one refusal reason is logged.
const logEvery = time.Second

// seqLimit is the highest snapshot seq l's incarnation could have sent by
// now (see maxSnapshotsPerTick). d.mu held.
func seqLimit(l *live, now time.Time) store.Seq {
	elapsed := max(now.Sub(l.seqSince), 0) + seqClockSlack
	ticks := min(uint64(elapsed/time.Millisecond)*uint64(l.tickRate)/1000+1, maxTicksBound)
	limit := uint64(l.seqFrom) + ticks*maxSnapshotsPerTick
	if limit < uint64(l.seqFrom) || limit > math.MaxInt64 {
		limit = math.MaxInt64
	}
	return store.Seq(limit)
}

// hostTickRate is the tick rate the seq bound assumes for h: the one the
// director gave a host it spawned, the highest any host accepts for one
// started elsewhere (it chose its own).
func (d *Director) hostTickRate(h *host) int {
	if h.child != nil {
		return d.cfg.Spawn.TickRate
	}
	return maxHostTickRate
}

// ownedLocked returns the live record of area when h is the host the
// director placed it on and, with checkEpoch, epoch is its current
// incarnation; otherwise the refusal reason. d.mu held.
func (d *Director) ownedLocked(h *host, area uint32, epoch uint64, checkEpoch bool) (*live, string) {
	l := d.areas[store.AreaID(area)]
	switch {
	case l == nil || l.host == nil:
		return nil, refuseNotLive
	case l.host != h:
		return nil, refuseOtherHost
	case checkEpoch && uint64(l.epoch) != epoch:
		return nil, refuseStaleEpoch
	}
	return l, ""
}

// checkSnapshot returns why m must not be written ("" if it may be), with
// what was wrong: it must come from the Area's host for its current
// incarnation, stay within the seq bound, keep its characters on the grid,
// and carry a blob blob.Check accepts for the Area's size.
func (d *Director) checkSnapshot(h *host, m *control.Snapshot) (string, error) {
	d.mu.Lock()
	l, reason := d.ownedLocked(h, m.Area, m.Epoch, true)
	var w, ht int
	var limit store.Seq
	if l != nil {
		w, ht, limit = l.width, l.height, seqLimit(l, time.Now())
	}
	d.mu.Unlock()
	if reason != "" {
		return reason, nil
	}
	if store.Seq(m.Seq) > limit {
		return refuseSeqJump, fmt.Errorf("seq %d past the incarnation's bound %d", m.Seq, limit)
	}
	for _, c := range m.Characters {
		if c.X < 0 || c.Y < 0 || int(c.X) >= w || int(c.Y) >= ht {
			return refuseBadCharacter, fmt.Errorf("account %d at (%d,%d) in a %dx%d area", c.Account, c.X, c.Y, w, ht)
		}
	}
	if err := blob.Check(m.Blob, w, ht); err != nil {
		return refuseBadBlob, err
	}
	return "", nil
}

// refuseHost counts and logs (rate-limited) a refused message of type t
// from host h about area.
func (d *Director) refuseHost(h *host, t control.Type, reason string, area uint32, attrs ...any) {
	d.counters.hostRefusals.WithLabelValues(t.String(), reason).Inc()
	if held, ok := d.logs.allow("host " + t.String() + " " + reason); ok {
		d.log.Warn("refused a host's message", append([]any{"host", h.id, "name", h.name, "type", t.String(), "reason", reason,
			"area", area, "suppressed", held}, attrs...)...)
	}
}

// refuseControl counts and logs (rate-limited) a control connection closed
// before it registered.
func (d *Director) refuseControl(reason string, from net.Addr, why error) {
	d.counters.controlRefusals.WithLabelValues(reason).Inc()
	if reason == controlClosed {
		return // a peer that hung up: counted, not worth a line
	}
	if held, ok := d.logs.allow("control " + reason); ok {
		d.log.Warn("control connection refused before registering", "from", from.String(), "reason", reason, "err", why, "suppressed", held)
	}
}

// acceptRefusal names why readying a connection failed (control.Accept).
func acceptRefusal(err error) string {
	switch {
	case errors.Is(err, control.ErrTLSNotConfigured):
		return controlNoTLS
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return controlDeadline
	case errors.Is(err, control.ErrHandshake):
		return controlHandshake
	}
	return controlClosed
}

// recvRefusal names why the first Recv of a connection failed.
func recvRefusal(err error) string {
	switch {
	case errors.Is(err, control.ErrFrameTooLarge):
		return controlFrameSize
	case errors.Is(err, os.ErrDeadlineExceeded):
		return controlDeadline
	case errors.Is(err, control.ErrMalformed):
		return controlMalformed
	}
	return controlClosed
}

// logLimiter lets at most one log line a key through each period and
// counts the lines it held back, so a peer sending the same garbage in a
// loop costs a counter increment, not a line each. Its keys are a small
// fixed set (message types and refusal reasons). Safe for concurrent use.
type logLimiter struct {
	every time.Duration
	mu    sync.Mutex // guards slots
	slots map[string]*logSlot
}

type logSlot struct {
	last time.Time
	held int
}

// allow reports whether a line for key may be logged now, and how many
// were held back since the last one that was.
func (l *logLimiter) allow(key string) (held int, ok bool) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.slots == nil {
		l.slots = map[string]*logSlot{}
	}
	s := l.slots[key]
	if s == nil {
		s = &logSlot{}
		l.slots[key] = s
	}
	if !s.last.IsZero() && now.Sub(s.last) < l.every {
		s.held++
		return 0, false
	}
	held, s.held, s.last = s.held, 0, now
	return held, true
}
