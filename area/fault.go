package area

import (
	"fmt"
	"strconv"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/internal/failpoint"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// armPanicPoint arms the failpoint that panics inside this Area's tick,
// if the process was started with it (see failpoint.AreaTickPanic).
func (ha *hostArea) armPanicPoint() {
	if name := failpoint.AreaTickPanic + strconv.FormatUint(uint64(ha.id), 10); failpoint.Armed(name) {
		ha.panicPoint = name
	}
}

// joining records that p's hello or resume waits in this Area's inbox, so
// that a failure of the Area can answer it. It reports false, recording
// nothing, when the Area has failed already: the caller answers the join
// itself. Event-loop goroutine.
func (ha *hostArea) joining(p *peer, joinID uint64) bool {
	ha.joinMu.Lock()
	defer ha.joinMu.Unlock()
	if ha.a.Failed() { // fail takes joinMu after the Area is marked failed
		return false
	}
	ha.waiting[p] = joinID
	return true
}

// joined forgets p's waiting join (answered). Area goroutine.
func (ha *hostArea) joined(p *peer) {
	ha.joinMu.Lock()
	delete(ha.waiting, p)
	ha.joinMu.Unlock()
}

// fail takes an Area that panicked out of the host, alone: the panic is
// logged with its stack and counted; every peer is told area_closing
// {INTERNAL, 0}, then rehello{INTERNAL}, and its connection is closed so
// that the client joins again through the director; joins waiting in the
// Area's inbox are answered error{INTERNAL}; nothing of the failed world is
// ever persisted (the last acknowledged snapshot stays the truth); and the
// director is told (area_closed, failed), so the next join makes the Area
// live again from that snapshot. It runs on the goroutine that ran the
// Area, once, after the Clock took the Area out (ecs.Clock).
func (ha *hostArea) fail(p ecs.Panic) {
	h := ha.h
	h.areaFailures.Add(1)
	reason := fmt.Sprintf("panic: %v", p.Value)
	h.log.Error("area panicked; failing it alone", "area", ha.id, "epoch", ha.epoch, "panic", reason, "stack", string(p.Stack))
	ha.fenced = true // a failed world is never persisted
	ha.unacked = nil
	for _, b := range ha.order {
		if pr := b.peer; pr != nil {
			pr.send(&wire.AreaClosing{Reason: wire.CodeInternal, GraceMS: 0})
			pr.unbind(wire.CodeInternal, "the area failed; join it again")
			pr.conn.Close(gate.CloseInternalError, "area failed")
		}
	}
	ha.refuseWaiting(wire.CodeInternal, "the area failed; join it again")
	for tok := range ha.grants {
		h.dropIndex(h.grants, tok)
	}
	ha.forgetBodies()
	h.unload(ha)
	h.link.send(&control.AreaClosed{Area: ha.id, Seq: ha.acked, Acked: true, Failed: true, Reason: reason, Epoch: ha.epoch})
}

// supersede drops an incarnation the director has replaced with a newer
// one (a spawn of the Area with a higher epoch): its sessions end
// (rehello{AREA_CLOSING}: their players join again through the
// director), joins waiting in it are refused, its crossings and grants
// are forgotten, and nothing of its world is persisted (the director
// refuses its epoch). It runs on the Area's goroutine (PostNow).
func (ha *hostArea) supersede() {
	h := ha.h
	ha.fenced = true
	ha.unacked = nil
	ha.release(wire.CodeAreaClosing)
	ha.refuseWaiting(wire.CodeAreaClosing, "the area moved to a newer incarnation; join it again")
	for tok := range ha.grants {
		h.dropIndex(h.grants, tok)
	}
	clear(ha.crossings)
	clear(ha.settling)
	ha.forgetBodies()
	ha.a.Freeze()
	ha.a.SetTimer(time.Time{})
	h.unload(ha)
	h.log.Info("area superseded by a newer incarnation; dropped unpersisted", "area", ha.id, "epoch", ha.epoch)
}

// refuseWaiting answers every hello and resume waiting in the Area's
// inbox error{code}: the Area is going away.
func (ha *hostArea) refuseWaiting(code wire.Code, detail string) {
	ha.joinMu.Lock()
	defer ha.joinMu.Unlock()
	for pr, joinID := range ha.waiting {
		pr.sendError(code, 0, joinID, detail)
		pr.pending.Store(false)
	}
	clear(ha.waiting)
}

// forgetBodies drops every body of an Area going away, with their resume
// tokens; their sessions have ended.
func (ha *hostArea) forgetBodies() {
	ha.endSpectators()
	for _, b := range ha.order {
		ha.h.dropIndex(ha.h.resumes, b.resume)
	}
	ha.bodies = map[uint64]*body{}
	ha.order = nil
	ha.bound = 0
	ha.closing = nil
}
