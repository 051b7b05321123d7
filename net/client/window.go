package client

import (
	"time"

	"github.com/leyworks/ley/net/wire"
)

// window is one session's seq space: the seqs it sent, in serial-number
// order on 32 bits (wire.SeqAfter), the ones still unanswered, and the
// answers they got. Seq s lives in slots[s&mask] while it is one of the
// last len(slots) seqs sent; an open slot is never overwritten (add
// refuses instead), so an unanswered intent can always be sent again after
// a resume. It is not safe for concurrent use: the Client's mu guards it.
type window struct {
	id    uint64 // the session's number, for its answers
	slots []slot
	mask  uint32
	last  uint32 // the last seq sent (0 before the first)
	sent  uint64 // seqs sent in this session
	acked uint32 // the highest ack_seq seen, in serial order
	open  int    // unanswered seqs
}

// slot is one seq of the window: its intent and send time while open, its
// answer once settled (kept until the slot is reused, for WaitAnswer).
type slot struct {
	seq     uint32
	kind    wire.IntentKind
	dir     wire.Dir
	target  wire.Cell
	at      int64 // ns since the Client's epoch, at the (first) send
	open    bool
	resent  bool // sent again after a resume: its first STALE_SEQ is the copy's
	outcome Outcome
	code    wire.Code
}

func newWindow(n int) window {
	return window{slots: make([]slot, n), mask: uint32(n - 1)}
}

func (s *slot) intent() wire.Intent {
	return wire.Intent{Seq: s.seq, Kind: s.kind, Dir: s.dir, Target: s.target}
}

// add takes the next seq for in, sent at at; it reports false when the
// window holds len(slots) unanswered seqs already.
func (w *window) add(in *wire.Intent, at int64) (uint32, bool) {
	seq := w.last + 1 // after 2^32-1 comes 0
	s := &w.slots[seq&w.mask]
	if s.open {
		return 0, false
	}
	*s = slot{seq: seq, kind: in.Kind, dir: in.Dir, target: in.Target, at: at, open: true}
	w.last = seq
	w.sent++
	w.open++
	return seq, true
}

// unsend takes back seq, the last one added, if it is still open: its
// write failed, so it never left. It reports whether it did.
func (w *window) unsend(seq uint32) bool {
	s := &w.slots[seq&w.mask]
	if seq != w.last || !s.open || s.seq != seq {
		return false
	}
	*s = slot{}
	w.last--
	w.sent--
	w.open--
	return true
}

// settle closes the open slot s with outcome and appends its answer.
func (w *window) settle(s *slot, outcome Outcome, code wire.Code, now int64, conn uint64, out []Answer) []Answer {
	s.open, s.outcome, s.code = false, outcome, code
	w.open--
	a := Answer{Intent: s.intent(), Outcome: outcome, Code: code, Session: w.id, Conn: conn}
	if outcome == Applied || outcome == Refused {
		a.RTT = time.Duration(now - s.at)
	}
	return append(out, a)
}

// sentSeq reports whether seq is one of the last len(slots) seqs this
// session sent.
func (w *window) sentSeq(seq uint32) bool {
	d := uint64(w.last - seq) // serial distance back from the last
	return d < w.sent && d < uint64(len(w.slots)) && w.slots[seq&w.mask].seq == seq
}

// ack settles every open seq at or before ack (serial order) with
// outcome, appending their answers oldest first. An ack_seq not after the
// highest one seen settles nothing; one after the last seq sent is a
// server's error: it settles what was sent and reports bad.
func (w *window) ack(ack uint32, outcome Outcome, now int64, conn uint64, out []Answer) (_ []Answer, bad bool) {
	if !wire.SeqAfter(ack, w.acked) {
		return out, false
	}
	if wire.SeqAfter(ack, w.last) {
		bad, ack = true, w.last
		if !wire.SeqAfter(ack, w.acked) {
			return out, true
		}
	}
	from := w.acked + 1
	if ack-from >= uint32(len(w.slots)) {
		from = ack - uint32(len(w.slots)) + 1 // older seqs left the window answered
	}
	for seq := from; ; seq++ {
		if s := &w.slots[seq&w.mask]; s.open && s.seq == seq {
			out = w.settle(s, outcome, wire.CodeOK, now, conn, out)
		}
		if seq == ack {
			break
		}
	}
	w.acked = ack
	return out, bad
}

// refusal is what an intent_result (or an error naming a seq) was to the
// window.
type refusal uint8

const (
	refusalSettled   refusal = iota // it answered an open seq
	refusalCopy                     // STALE_SEQ for a copy a resume sent again: the first copy's answer counts
	refusalDuplicate                // a second answer to a seq already answered
	refusalStray                    // a seq this session did not send (or no longer remembers)
)

// refuse matches a refusal of seq with code, appending its answer when it
// settles one.
func (w *window) refuse(seq uint32, code wire.Code, now int64, conn uint64, out []Answer) ([]Answer, refusal) {
	if !w.sentSeq(seq) {
		return out, refusalStray
	}
	s := &w.slots[seq&w.mask]
	if s.resent && code == wire.CodeStaleSeq {
		s.resent = false
		return out, refusalCopy
	}
	if !s.open {
		return out, refusalDuplicate
	}
	return w.settle(s, Refused, code, now, conn, out), refusalSettled
}

// drain settles every open seq with outcome (the session ended, or the
// client left it), oldest first.
func (w *window) drain(outcome Outcome, conn uint64, out []Answer) []Answer {
	if w.open == 0 {
		return out
	}
	n := min(w.sent, uint64(len(w.slots)))
	for seq := w.last - uint32(n) + 1; ; seq++ {
		if s := &w.slots[seq&w.mask]; s.open && s.seq == seq {
			out = w.settle(s, outcome, wire.CodeOK, 0, conn, out)
		}
		if seq == w.last {
			break
		}
	}
	return out
}

// pending appends the open intents oldest first; with resend set it marks
// them sent again (a resume does).
func (w *window) pending(dst []wire.Intent, resend bool) []wire.Intent {
	if w.open == 0 {
		return dst
	}
	n := min(w.sent, uint64(len(w.slots)))
	for seq := w.last - uint32(n) + 1; ; seq++ {
		if s := &w.slots[seq&w.mask]; s.open && s.seq == seq {
			dst = append(dst, s.intent())
			if resend {
				s.resent = true
			}
		}
		if seq == w.last {
			break
		}
	}
	return dst
}

// answer returns seq's answer if the window still remembers it settled.
func (w *window) answer(seq uint32) (Answer, bool) {
	if !w.sentSeq(seq) {
		return Answer{}, false
	}
	s := &w.slots[seq&w.mask]
	if s.open {
		return Answer{}, false
	}
	return Answer{Intent: s.intent(), Outcome: s.outcome, Code: s.code, Session: w.id}, true
}
