package client

import (
	"testing"

	"github.com/leyworks/ley/net/wire"
)

// seqs returns the seqs of answers.
func seqs(as []Answer) []uint32 {
	var out []uint32
	for _, a := range as {
		out = append(out, a.Intent.Seq)
	}
	return out
}

func equal(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestWindowThroughTheWrap: seqs go on after 2^32-1 with 0, and ack_seq,
// refusals, resends and drains keep serial order across it.
func TestWindowThroughTheWrap(t *testing.T) {
	w := newWindow(8)
	w.last, w.acked, w.sent = 1<<32-3, 1<<32-3, 100 // a long session near the wrap
	step := wire.Intent{Kind: wire.IntentStep, Dir: wire.DirE}
	var got []uint32
	for range 5 {
		seq, ok := w.add(&step, 10)
		if !ok {
			t.Fatal("add refused in an empty window")
		}
		got = append(got, seq)
	}
	if want := []uint32{1<<32 - 2, 1<<32 - 1, 0, 1, 2}; !equal(got, want) {
		t.Fatalf("seqs = %v; want %v", got, want)
	}
	out, r := w.refuse(0, wire.CodeBlocked, 30, 1, nil)
	if r != refusalSettled || len(out) != 1 || out[0].Outcome != Refused || out[0].Code != wire.CodeBlocked || out[0].RTT != 20 {
		t.Fatalf("refuse(0) = %+v, %v; want seq 0 refused BLOCKED after 20 ns", out, r)
	}
	out, bad := w.ack(1, Applied, 40, 1, nil)
	if bad || !equal(seqs(out), []uint32{1<<32 - 2, 1<<32 - 1, 1}) {
		t.Fatalf("ack(1) settled %v (bad %v); want 2^32-2, 2^32-1, 1", seqs(out), bad)
	}
	if out, _ := w.ack(1<<32-1, Applied, 50, 1, nil); len(out) != 0 || w.acked != 1 {
		t.Fatalf("an older ack_seq settled %v and moved acked to %d", seqs(out), w.acked)
	}
	if p := w.pending(nil, true); len(p) != 1 || p[0].Seq != 2 || p[0].Dir != wire.DirE {
		t.Fatalf("pending = %+v; want seq 2, a step east", p)
	}
	if _, r := w.refuse(2, wire.CodeStaleSeq, 60, 2, nil); r != refusalCopy {
		t.Fatalf("STALE_SEQ of a resent copy = %v; want the copy's", r)
	}
	if out, r := w.refuse(1, wire.CodeTooFast, 60, 2, nil); r != refusalDuplicate || len(out) != 0 {
		t.Fatalf("refusing an applied seq = %v, %v; want a duplicate", out, r)
	}
	if _, r := w.refuse(3, wire.CodeTooFast, 60, 2, nil); r != refusalStray {
		t.Fatalf("refusing a seq never sent = %v; want a stray", r)
	}
	if out := w.drain(Void, 2, nil); !equal(seqs(out), []uint32{2}) || out[0].Outcome != Void || w.open != 0 {
		t.Fatalf("drain = %+v (open %d); want seq 2 void", out, w.open)
	}
}

// TestWindowFullAndUnsend: a full window refuses rather than forget an
// unanswered seq; a seq whose write failed is taken back.
func TestWindowFullAndUnsend(t *testing.T) {
	w := newWindow(4)
	in := wire.Intent{Kind: wire.IntentStop}
	for i := range 4 {
		if seq, ok := w.add(&in, 1); !ok || seq != uint32(i+1) {
			t.Fatalf("add %d = %d, %v", i, seq, ok)
		}
	}
	if _, ok := w.add(&in, 1); ok {
		t.Fatal("a full window took a fifth seq")
	}
	if w.unsend(3) || !w.unsend(4) || w.last != 3 || w.open != 3 {
		t.Fatalf("unsend: last %d, open %d; want only the last seq taken back", w.last, w.open)
	}
	if out, _ := w.ack(1, Applied, 2, 1, nil); len(out) != 1 {
		t.Fatalf("ack(1) settled %v", seqs(out))
	}
	if seq, ok := w.add(&in, 3); !ok || seq != 4 {
		t.Fatalf("add after an answer = %d, %v; want 4", seq, ok)
	}
	if seq, ok := w.add(&in, 3); !ok || seq != 5 {
		t.Fatalf("add into the answered slot = %d, %v; want 5", seq, ok)
	}
	if a, ok := w.answer(1); ok {
		t.Fatalf("answer(1) = %+v after its slot was reused", a)
	}
}

// TestWindowAckPastTheLastSent: a snapshot acknowledging a seq never sent
// is the server's error: what was sent is settled, and it is reported.
func TestWindowAckPastTheLastSent(t *testing.T) {
	w := newWindow(4)
	in := wire.Intent{Kind: wire.IntentStop}
	w.add(&in, 1)
	out, bad := w.ack(9, Applied, 2, 1, nil)
	if !bad || !equal(seqs(out), []uint32{1}) || w.acked != 1 {
		t.Fatalf("ack(9) after one seq = %v, bad %v, acked %d; want seq 1, bad, acked 1", seqs(out), bad, w.acked)
	}
	if out, bad := w.ack(0, Applied, 2, 1, nil); bad || len(out) != 0 {
		t.Fatalf("ack(0) = %v, %v; want nothing", seqs(out), bad)
	}
}
