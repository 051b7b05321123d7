package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

func (p *pendingWrites) put(h *Host, m *control.Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[store.AreaID]pendingWrite{}
	}
	if old, ok := p.m[store.AreaID(m.Area)]; ok && later(old.m, m) {
		return
	}
	p.m[store.AreaID(m.Area)] = pendingWrite{h, m}
}

// later reports whether a is of a later incarnation than b, or of the same
// and later in it.
func later(a, b *control.Snapshot) bool {
	return a.Epoch > b.Epoch || (a.Epoch == b.Epoch && a.Seq > b.Seq)
}

// all returns the writes waiting, each staying until its write is done
// (done), so that a placement never misses one being written.
func (p *pendingWrites) all() []pendingWrite {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]pendingWrite, 0, len(p.m))
	for _, w := range p.m {
		out = append(out, w)
	}
	return out
}

// len is the number of writes waiting.
func (p *pendingWrites) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

// get returns the write of area waiting, if one does.
func (p *pendingWrites) get(area store.AreaID) (pendingWrite, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.m[area]
	return w, ok
}

// done forgets the write of m's Area waiting, unless it is later than m:
// the store answered m (or a later snapshot of the same Area).
func (p *pendingWrites) done(m *control.Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.m[store.AreaID(m.Area)]; ok && !later(old.m, m) {
		delete(p.m, store.AreaID(m.Area))
	}
}

// groupCommitMax and groupCommitBytes bound a group commit: at most 64
// snapshots (their acks go out together, within a host's queue of 256
// answers) and 8 MiB of them.
const (
	groupCommitMax   = 64
	groupCommitBytes = 8 << 20
)

// persist writes an Area's snapshot and acks it. One past the host's
// budget (Config.SnapshotRate) is dropped unread. One checkSnapshot
// refuses (another host's Area, a stale incarnation, a seq past the bound,
// a character off the grid, a blob no host could load) is answered with an
// error and never reaches the store, so the sender (a zombie, or a broken
// host) stops sending it; one the store could not take now is kept and
// written again when it can (not acked meanwhile: the host keeps it too).
func (r *Registry) persist(ctx context.Context, h *Host, m *control.Snapshot) {
	if r.admitSnapshot(h, m) {
		r.write(ctx, h, m)
	}
}

// persistGroup persists snapshots h sent together (handleLink: those
// read before the handler came to them), each admitted as persist admits
// it, in one transaction of the store: one commit, one sync of its log,
// for all of them. Each is behind its own fences in it and acked by its
// own outcome (store.Store.WriteSnapshots); none is acked before the
// commit. A transaction that fails for want of the store keeps them all
// to be written again, as persist keeps one; one that fails otherwise
// may have failed for one of them, and each is written alone.
func (r *Registry) persistGroup(ctx context.Context, h *Host, ms []*control.Snapshot) {
	if len(ms) == 1 {
		r.persist(ctx, h, ms[0])
		return
	}
	admitted := make([]*control.Snapshot, 0, len(ms))
	for _, m := range ms {
		if r.admitSnapshot(h, m) {
			admitted = append(admitted, m)
		}
	}
	switch len(admitted) {
	case 0:
		return
	case 1:
		r.write(ctx, h, admitted[0])
		return
	}
	ws := make([]pendingWrite, len(admitted))
	for i, m := range admitted {
		ws[i] = pendingWrite{h, m}
	}
	r.commitGroup(ctx, ws)
}

// commitGroup writes ws (checked snapshots, each with the host it came
// from) in one transaction and acts on each one's outcome (written). A
// transaction that fails for want of the store keeps them all to be
// written again, and commitGroup reports false; one that fails
// otherwise may have failed for one of them, and each is written alone.
func (r *Registry) commitGroup(ctx context.Context, ws []pendingWrite) bool {
	now := time.Now()
	snaps := make([]store.Snapshot, len(ws))
	for i, w := range ws {
		snaps[i] = storeSnapshot(w.m, now)
	}
	res, err := r.store.WriteSnapshots(ctx, snaps)
	switch {
	case errors.Is(err, store.ErrUnavailable):
		for _, w := range ws {
			r.written(w.h, w.m, store.SnapshotResult{}, err)
		}
		return false
	case err != nil:
		if held, ok := r.logs.Allow("group commit"); ok {
			r.log.Warn("a group commit of snapshots failed; each is written alone", "snapshots", len(ws), "err", err, "suppressed", held)
		}
		for _, w := range ws {
			r.write(ctx, w.h, w.m)
		}
	default:
		r.metrics.commitSizes.Observe(float64(len(ws)))
		for i, w := range ws {
			r.written(w.h, w.m, res[i].Result, res[i].Err)
		}
	}
	return true
}

// admitSnapshot reports whether m is to be written: within its host's
// budget and past checkSnapshot (one refused is answered with its error).
func (r *Registry) admitSnapshot(h *Host, m *control.Snapshot) bool {
	size := snapshotBytes(m)
	if !h.budget.take(float64(size), r.cfg.SnapshotRate, r.cfg.SnapshotBurst, time.Now()) {
		// Past the host's budget: not decoded, not written, not acked (the
		// host sends it, or a newer one, again).
		r.metrics.snapshots.WithLabelValues("over_budget").Inc()
		if held, ok := r.logs.Allow("snapshot budget"); ok {
			r.log.Warn("a host's snapshots are past its budget; left unacked", "host", h.ID, "name", h.Name, "area", m.Area,
				"bytes", size, "rate", r.cfg.SnapshotRate, "suppressed", held)
		}
		return false
	}
	if reason, why := r.checkSnapshot(h, m); reason != "" {
		r.metrics.snapshots.WithLabelValues("refused").Inc()
		if !r.givenUp(h, m.Area, m.Epoch, false) { // a late incarnation's final snapshot: refused, as expected
			r.refuseHost(h, m.Type(), reason, m.Area, "epoch", m.Epoch, "seq", m.Seq, "err", why)
		}
		r.SendSoon(h, &control.SnapshotAck{Area: m.Area, Seq: m.Seq, Error: "refused: " + reason})
		return false
	}
	return true
}

// snapshotBytes is what m counts against its host's budget and backlog:
// its blob and its characters' states.
func snapshotBytes(m *control.Snapshot) int64 {
	size := int64(len(m.Blob))
	for _, c := range m.Characters {
		size += int64(len(c.State))
	}
	return size
}

// storeSnapshot is m (checked) as the store writes it, stamped at.
func storeSnapshot(m *control.Snapshot, at time.Time) store.Snapshot {
	chars := make([]store.CharacterState, len(m.Characters))
	for i, c := range m.Characters {
		chars[i] = store.CharacterState{Account: store.AccountID(c.Account), X: c.X, Y: c.Y, State: c.State}
	}
	return store.Snapshot{
		Area: store.AreaID(m.Area), Epoch: store.Epoch(m.Epoch), Seq: store.Seq(m.Seq),
		Blob: m.Blob, Characters: chars, At: at,
	}
}

// write stores m (checked) alone and acks it to h.
func (r *Registry) write(ctx context.Context, h *Host, m *control.Snapshot) {
	res, err := r.store.WriteSnapshot(ctx, storeSnapshot(m, time.Now()))
	if err == nil {
		r.metrics.commitSizes.Observe(1)
	}
	r.written(h, m, res, err)
}

// written acts on what the store did with m: acks it (applied, stale,
// or fenced, with an error), keeps it to be written again (the store
// unavailable: not acked, the host keeps it too), or logs the error.
func (r *Registry) written(h *Host, m *control.Snapshot, res store.SnapshotResult, err error) {
	if !errors.Is(err, store.ErrUnavailable) {
		r.pendingW.done(m)
	}
	switch {
	case errors.Is(err, store.ErrFenced):
		r.metrics.snapshots.WithLabelValues("fenced").Inc()
		r.log.Warn("refused a snapshot from a stale incarnation", "area", m.Area, "epoch", m.Epoch, "host", h.ID)
		r.SendSoon(h, &control.SnapshotAck{Area: m.Area, Seq: m.Seq, Error: "fenced: a newer incarnation of this area exists"})
	case errors.Is(err, store.ErrUnavailable):
		r.metrics.snapshots.WithLabelValues("unavailable").Inc()
		r.inDoubt.Store(true)
		r.pendingW.put(h, m)
		if held, ok := r.logs.Allow("snapshot unavailable"); ok {
			r.log.Warn("the store is unavailable: snapshots wait and are written when it is back", "area", m.Area, "seq", m.Seq, "err", err, "suppressed", held)
		}
	case err != nil:
		r.metrics.snapshots.WithLabelValues("error").Inc()
		r.log.Error("persist snapshot", "area", m.Area, "seq", m.Seq, "err", err)
	default:
		r.inDoubt.Store(false)
		r.mu.Lock()
		if l := h.areas[store.AreaID(m.Area)]; l != nil {
			if store.Seq(m.Seq) > l.storedSeq {
				l.storedSeq = store.Seq(m.Seq) // applied now, or a newer one was before
			}
			if res.Applied {
				l.lastSnap = time.Now()
			}
		}
		r.mu.Unlock()
		if res.Applied {
			r.metrics.snapshots.WithLabelValues("applied").Inc()
		} else {
			r.metrics.snapshots.WithLabelValues("stale").Inc()
		}
		r.SendSoon(h, &control.SnapshotAck{Area: m.Area, Seq: m.Seq})
	}
}

// retryWrites writes again the snapshots the store could not take, in
// group commits as a link's handler writes them (groupCommitMax
// snapshots or groupCommitBytes at most), until the store refuses again.
// Those of a host that is gone too: a host that stopped in an outage
// gave its final snapshots to this director alone (it unloaded them once
// their acks were late), and the store's fences (epoch, seq) still
// apply.
func (r *Registry) retryWrites(ctx context.Context) {
	waiting := r.pendingW.all()
	for len(waiting) > 0 {
		n, size := 0, int64(0)
		for n < len(waiting) && n < groupCommitMax && size < groupCommitBytes {
			size += snapshotBytes(waiting[n].m)
			n++
		}
		if !r.commitGroup(ctx, waiting[:n]) {
			return // the store is still out: the next round tries again
		}
		waiting = waiting[n:]
	}
}

// StoreInDoubt reports whether the store refused writes as unavailable
// since it last took one.
func (r *Registry) StoreInDoubt() bool { return r.inDoubt.Load() }

// Flush writes now the snapshot of area that waits to be written again
// (the store was unavailable when it came), if one does: a crossing or a
// move by the door waits for the snapshot that holds the character's
// final state. It reports the newest seq of area the store holds, as the
// registry knows it.
func (r *Registry) Flush(ctx context.Context, area store.AreaID) store.Seq {
	_ = r.flushPending(ctx, area)
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.areas[area]; l != nil {
		return l.storedSeq
	}
	return 0
}

// flushPending writes the snapshot of area that waits to be written, if
// one does, and reports an error wrapping store.ErrUnavailable when the
// store still could not take it. A placement calls it before the Area's
// next incarnation begins: that incarnation starts from what the store
// holds, and would fence the waiting snapshot out for good.
func (r *Registry) flushPending(ctx context.Context, area store.AreaID) error {
	w, ok := r.pendingW.get(area)
	if !ok {
		return nil
	}
	r.write(ctx, w.h, w.m)
	if _, still := r.pendingW.get(area); still {
		return fmt.Errorf("area %d's last snapshot waits for the store: %w", area, store.ErrUnavailable)
	}
	return nil
}
