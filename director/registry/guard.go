package registry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
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
	RefuseNotLive        = "not_live"          // the Area is live on no host
	RefuseBadPlacement   = "bad_placement"     // an Area claimed at registration without its placement credential
	RefuseTooMany        = "too_many_bodies"   // a blob with more creatures or wanderers than the Area's map makes
	RefuseOtherHost      = "other_host"        // the Area is live on another host
	RefuseStaleEpoch     = "stale_epoch"       // not the Area's current incarnation
	RefuseSeqJump        = "seq_jump"          // a seq past what the incarnation could have produced
	RefuseBadCharacter   = "bad_character"     // a character off the Area's grid
	RefuseBadBlob        = "bad_blob"          // a blob no host could load (blob.Check)
	RefuseUnsolicited    = "unsolicited"       // an answer to nothing the director asked this host
	RefuseTransfer       = "transfer_mismatch" // a crossing's id reused for another Area or account
	RefuseUnexpected     = "unexpected_type"   // a type hosts never send
	RefuseUnknownAccount = "unknown_account"   // a presence naming an account the registry never let into the Area
	RefuseBacklog        = "backlog"           // a presence that found its link's backlog full (the host sends another)
)

// Reasons a control connection is closed before it registers: the reason
// label of ley_control_refusals_total.
const (
	ControlCap         = "unregistered_cap"  // the source address held its share of connections waiting to register
	ControlShed        = "shed"              // the oldest connection waiting to register, closed for a newcomer
	ControlFrameSize   = "frame_too_large"   // a frame past control.MaxRegisterFrameSize
	ControlDeadline    = "register_timeout"  // no register within ControlRegisterTimeout
	ControlMalformed   = "malformed"         // a frame that is not a control message
	ControlClosed      = "closed"            // the peer closed before registering
	ControlNotReg      = "not_register"      // a first message other than register
	ControlBadCreds    = "bad_credentials"   // no valid spawn token, host key or certificate
	ControlBadRequest  = "bad_register"      // a register with a bad ws_url, pool size or area list
	ControlCleartext   = "cleartext"         // the host key over a plain link from another machine
	ControlNotLeader   = "not_leader"        // this director follows: the host is sent to the leader
	ControlHandshake   = "tls_handshake"     // a TLS handshake that failed (no or a bad certificate)
	ControlNoTLS       = "tls_unconfigured"  // a TLS handshake on a director without control TLS
	ControlUnavailable = "store_unavailable" // the store could not check the Areas the host claims: it registers again
)

// The bound on a snapshot's seq. Seqs continue across incarnations (an
// incarnation starts at the stored seq) and a host raises its Area's seq
// once per snapshot it sends. An Area's loop sends at most one snapshot
// per portal crossing begun in a tick (at most one per portal square: a
// square holds one body, and an Area has at most MaxPortals) plus, in
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
	// MaxPortals bounds an Area's portals (its rules).
	MaxPortals          = 64
	maxSnapshotsPerTick = MaxPortals + 8
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
func seqLimit(l *Live, now time.Time) store.Seq {
	elapsed := max(now.Sub(l.seqSince), 0) + seqClockSlack
	ticks := min(uint64(elapsed/time.Millisecond)*uint64(l.tickRate)/1000+1, maxTicksBound)
	limit := uint64(l.seqFrom) + ticks*maxSnapshotsPerTick
	if limit < uint64(l.seqFrom) || limit > math.MaxInt64 {
		limit = math.MaxInt64
	}
	return store.Seq(limit)
}

// ownedLocked returns the live record of area when h is the host the
// director placed it on and, with checkEpoch, epoch is its current
// incarnation; otherwise the refusal reason. d.mu held.
func (r *Registry) ownedLocked(h *Host, area uint32, epoch uint64, checkEpoch bool) (*Live, string) {
	l := r.areas[store.AreaID(area)]
	switch {
	case l == nil || l.Host == nil:
		return nil, RefuseNotLive
	case l.Host != h:
		return nil, RefuseOtherHost
	case checkEpoch && uint64(l.Epoch) != epoch:
		return nil, RefuseStaleEpoch
	}
	return l, ""
}

// Owned returns the live record of area when h is the host the registry
// placed it on and, with checkEpoch, epoch is its current incarnation;
// otherwise the refusal reason (for Refuse).
func (r *Registry) Owned(h *Host, area uint32, epoch uint64, checkEpoch bool) (*Live, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ownedLocked(h, area, epoch, checkEpoch)
}

// owned is Owned, for the registry's own messages.
func (r *Registry) owned(h *Host, area uint32, epoch uint64, checkEpoch bool) (*Live, string) {
	return r.Owned(h, area, epoch, checkEpoch)
}

// checkSnapshot returns why m must not be written ("" if it may be), with
// what was wrong: it must come from the Area's host for its current
// incarnation, stay within the seq bound, keep its characters on the grid,
// and carry a blob blob.Check accepts for the Area's size.
func (r *Registry) checkSnapshot(h *Host, m *control.Snapshot) (string, error) {
	r.mu.Lock()
	l, reason := r.ownedLocked(h, m.Area, m.Epoch, true)
	var w, ht, npcs int
	var limit store.Seq
	if l != nil {
		w, ht, limit, npcs = l.width, l.height, seqLimit(l, time.Now()), l.maxNPCs
	}
	r.mu.Unlock()
	if reason != "" {
		return reason, nil
	}
	if store.Seq(m.Seq) > limit {
		return RefuseSeqJump, fmt.Errorf("seq %d past the incarnation's bound %d", m.Seq, limit)
	}
	for _, c := range m.Characters {
		if c.X < 0 || c.Y < 0 || int(c.X) >= w || int(c.Y) >= ht {
			return RefuseBadCharacter, fmt.Errorf("account %d at (%d,%d) in a %dx%d area", c.Account, c.X, c.Y, w, ht)
		}
	}
	b, err := blob.Decode(m.Blob, w, ht)
	if err != nil {
		return RefuseBadBlob, err
	}
	if npcs >= 0 && len(b.Wanderers)+len(b.Creatures) > npcs {
		return RefuseTooMany, fmt.Errorf("%d wanderers and %d creatures in an area whose map makes at most %d", len(b.Wanderers), len(b.Creatures), npcs)
	}
	return "", nil
}

// Refuse counts and logs (rate-limited) a refused message of type t from
// host h about area, for a reason of Owned's.
func (r *Registry) Refuse(h *Host, t control.Type, reason string, area uint32, attrs ...any) {
	r.refuseHost(h, t, reason, area, attrs...)
}

// refuseHost counts and logs (rate-limited) a refused message of type t
// from host h about area.
func (r *Registry) refuseHost(h *Host, t control.Type, reason string, area uint32, attrs ...any) {
	r.metrics.hostRefusals.WithLabelValues(t.String(), reason).Inc()
	if held, ok := r.logs.Allow("host " + t.String() + " " + reason); ok {
		r.log.Warn("refused a host's message", append([]any{"host", h.ID, "name", h.Name, "type", t.String(), "reason", reason,
			"area", area, "suppressed", held}, attrs...)...)
	}
}

// refuseControl counts and logs (rate-limited) a control connection closed
// before it registered.
func (r *Registry) refuseControl(reason string, from net.Addr, why error) {
	r.metrics.controlRefusals.WithLabelValues(reason).Inc()
	if reason == ControlClosed {
		return // a peer that hung up: counted, not worth a line
	}
	if held, ok := r.logs.Allow("control " + reason); ok {
		r.log.Warn("control connection refused before registering", "from", from.String(), "reason", reason, "err", why, "suppressed", held)
	}
}

// acceptRefusal names why readying a connection failed (control.Accept).
func acceptRefusal(err error) string {
	switch {
	case errors.Is(err, control.ErrTLSNotConfigured):
		return ControlNoTLS
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return ControlDeadline
	case errors.Is(err, control.ErrHandshake):
		return ControlHandshake
	}
	return ControlClosed
}

// recvRefusal names why the first Recv of a connection failed.
func recvRefusal(err error) string {
	switch {
	case errors.Is(err, control.ErrFrameTooLarge):
		return ControlFrameSize
	case errors.Is(err, os.ErrDeadlineExceeded):
		return ControlDeadline
	case errors.Is(err, control.ErrMalformed):
		return ControlMalformed
	}
	return ControlClosed
}
