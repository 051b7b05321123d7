package control

import (
	"encoding/binary"
	"errors"
	"net"
	"reflect"
	"testing"
	"time"
)

func TestRoundTripEveryType(t *testing.T) {
	msgs := []Message{
		&Register{SpawnToken: "tok", Name: "h1", WSURL: "ws://127.0.0.1:1/ws", PoolSize: 64, PID: 42, Areas: []AreaRef{{Area: 3, Epoch: 9, Acked: 17}}, Boot: 77},
		&Register{HostKey: "k", Name: "h2", WSURL: "ws://127.0.0.1:2/ws", PoolSize: 4096, AreasFollow: 1},
		&AreaList{Areas: []AreaRef{{Area: 4, Epoch: 2, Acked: 3, Accounts: []uint64{7}, Placement: "p"}}},
		&Registered{HostID: 5},
		&Registered{Error: "bad spawn token"},
		&Heartbeat{UnixMS: 1, Areas: 2, Active: 1, Peers: 3, RSSKiB: 4000, TickP99: 120},
		&SpawnArea{Area: 3, Epoch: 9, Kind: "village", W: 64, H: 64, Seq: 4, Blob: []byte{1, 2}, Seed: 8},
		&AreaReady{Area: 3, Epoch: 9},
		&Grant{Area: 3, Token: "g", JoinID: 11, TTLMS: 90000, Name: "ann", Character: Character{Account: 7, X: 4, Y: 5, State: []byte{9}, Placed: true}},
		&GrantAck{Area: 3, Token: "g", Error: "area full"},
		&Snapshot{Area: 3, Epoch: 9, Seq: 5, Blob: []byte{3}, Characters: []Character{{Account: 7, X: 1, Y: 2, Placed: true}}, Final: true},
		&SnapshotAck{Area: 3, Seq: 5},
		&Presence{Area: 3, Peers: 2, Accounts: []uint64{7, 8}},
		&CloseArea{Area: 3, Reason: 11, GraceMS: 5000},
		&AreaClosed{Area: 3, Seq: 6, Acked: true},
		&SpawnArea{Area: 4, Epoch: 1, Kind: "home", W: 8, H: 8, Portals: []Portal{{X: 1, Y: 2, ToArea: 5, ToX: 3, ToY: 4}}},
		&PortalOut{Transfer: "t1", Area: 3, Epoch: 9, Account: 7, FromX: 1, FromY: 2, ToArea: 4, ToX: 5, ToY: 6, State: []byte{1}, SentMS: 99},
		&PortalResult{Transfer: "t1", Area: 3, Account: 7, OK: true, ToArea: 4, WSURL: "ws://x/ws", Grant: "g", JoinID: 12},
		&PortalResult{Transfer: "t2", Area: 3, Account: 7, Code: 19},
	}
	a, b := net.Pipe()
	ca, cb := NewConn(a), NewConn(b)
	defer ca.Close()
	defer cb.Close()
	go func() {
		for _, m := range msgs {
			if err := ca.Send(m); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for _, want := range msgs {
		got, err := cb.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got = %#v; want %#v", got, want)
		}
	}
}

func TestRecvRejectsBadFrames(t *testing.T) {
	huge := make([]byte, 4)
	binary.BigEndian.PutUint32(huge, MaxFrameSize+1)
	unknown, _ := encMode.Marshal(envelope{T: 200, Body: []byte{0xa0}})
	tests := []struct {
		name  string
		frame []byte
		want  error
	}{
		{"length past the bound", huge, ErrFrameTooLarge},
		{"not cbor", append([]byte{0, 0, 0, 2}, 0xff, 0xff), ErrMalformed},
		{"unknown type", append(binary.BigEndian.AppendUint32(nil, uint32(len(unknown))), unknown...), ErrMalformed},
	}
	for _, tt := range tests {
		a, b := net.Pipe()
		go func() { a.Write(tt.frame); a.Close() }()
		_, err := NewConn(b).Recv()
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v; want %v", tt.name, err, tt.want)
		}
		b.Close()
	}
}

// TestSendRegisterListsManyAreasApart: a host's register goes whole
// when it fits what a director reads before the credentials
// (MaxRegisterFrameSize), and otherwise as a head within it, saying how
// many Areas follow, and an AreaList with all of them.
func TestSendRegisterListsManyAreasApart(t *testing.T) {
	refs := func(n int) []AreaRef {
		out := make([]AreaRef, n)
		for i := range out {
			out[i] = AreaRef{Area: uint32(i + 1), Epoch: 3, Acked: 9, Accounts: []uint64{uint64(i)}, Placement: "a-placement-credential-of-some-length"}
		}
		return out
	}
	for _, n := range []int{0, 10, 2000} {
		reg := &Register{HostKey: "k", Name: "h", WSURL: "ws://127.0.0.1:1/ws", PoolSize: 4096, PID: 1, Boot: 1, Areas: refs(n)}
		a, b := net.Pipe()
		go func() {
			_ = NewConn(a).SendRegister(reg)
		}()
		c := NewConn(b)
		c.SetMaxFrame(MaxRegisterFrameSize)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		m, err := c.Recv()
		if err != nil {
			t.Fatalf("%d areas: the register: %v", n, err)
		}
		head := m.(*Register)
		got := head.Areas
		if head.AreasFollow > 0 {
			c.SetMaxFrame(MaxFrameSize)
			m, err := c.Recv()
			if err != nil {
				t.Fatalf("%d areas: the list: %v", n, err)
			}
			got = m.(*AreaList).Areas
			if len(head.Areas) != 0 || head.AreasFollow != len(got) {
				t.Errorf("%d areas: a head with %d inline and %d to follow, then %d", n, len(head.Areas), head.AreasFollow, len(got))
			}
		}
		if split := head.AreasFollow > 0; split != (n == 2000) {
			t.Errorf("%d areas: listed apart %t", n, split)
		}
		if !reflect.DeepEqual(got, reg.Areas) && (n > 0 || len(got) != 0) {
			t.Errorf("%d areas: %d received, not the ones sent", n, len(got))
		}
		if len(reg.Areas) != n || reg.AreasFollow != 0 {
			t.Errorf("%d areas: SendRegister changed its register", n)
		}
		a.Close()
		b.Close()
	}
}

// TestSetMaxFrame: a Conn held to a smaller frame refuses a longer
// announcement from its header alone, without waiting for (or allocating)
// the body, and still takes frames within the limit.
func TestSetMaxFrame(t *testing.T) {
	reg, err := Encode(&Register{SpawnToken: "tok", Name: "h", WSURL: "ws://127.0.0.1:1/ws", PoolSize: 64, Areas: make([]AreaRef, 64)})
	if err != nil {
		t.Fatal(err)
	}
	announce := func(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }
	tests := []struct {
		name  string
		limit int
		frame []byte // written, then the writer waits: a Recv reading a body would time out
		want  error
	}{
		{"register within the register limit", MaxRegisterFrameSize, reg, nil},
		{"1 MiB announced to an unregistered peer", MaxRegisterFrameSize, announce(1 << 20), ErrFrameTooLarge},
		{"one byte past the register limit", MaxRegisterFrameSize, announce(MaxRegisterFrameSize + 1), ErrFrameTooLarge},
		{"zero means the default", 0, announce(MaxFrameSize + 1), ErrFrameTooLarge},
		{"past the default means the default", MaxFrameSize * 2, announce(MaxFrameSize + 1), ErrFrameTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := net.Pipe()
			defer a.Close()
			defer b.Close()
			go a.Write(tt.frame)
			c := NewConn(b)
			c.SetMaxFrame(tt.limit)
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := c.Recv()
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v; want %v", err, tt.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range []Message{&Register{Name: "x"}, &Snapshot{Area: 1, Blob: []byte{1}}, &Grant{Token: "t"}} {
		fr, _ := Encode(m)
		f.Add(fr[4:])
	}
	f.Fuzz(func(t *testing.T, item []byte) {
		msg, err := Decode(item)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		fr, err := Encode(msg)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := Decode(fr[4:])
		if err != nil || !reflect.DeepEqual(again, msg) {
			t.Fatalf("round trip: %#v vs %#v (%v)", again, msg, err)
		}
	})
}

// TestSendAllIsOneWriteInOrder: a batch arrives as one write, and the
// receiver reads its messages back in order.
func TestSendAllIsOneWriteInOrder(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	sent := []Message{&Presence{Area: 1, Peers: 2, Accounts: []uint64{7, 8}}, &Heartbeat{UnixMS: 5}, &AreaClosed{Area: 3, Seq: 9}}
	writes := make(chan int, 8)
	go func() {
		_ = NewConn(countWrites{a, writes}).SendAll(sent)
		close(writes)
	}()
	rc := NewConn(b)
	for i, want := range sent {
		got, err := rc.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if got.Type() != want.Type() {
			t.Fatalf("message %d is %s; want %s", i, got.Type(), want.Type())
		}
	}
	if n := len(writes); n != 1 {
		t.Fatalf("%d writes for a batch of %d; want 1", n, len(sent))
	}
}

// countWrites counts the writes made to a net.Conn.
type countWrites struct {
	net.Conn
	n chan int
}

func (c countWrites) Write(p []byte) (int, error) {
	c.n <- len(p)
	return c.Conn.Write(p)
}

// TestReserveSendsFirst: while a Conn's writes are reserved, another
// goroutine's Send waits, so the reserved message arrives first.
func TestReserveSendsFirst(t *testing.T) {
	a, b := net.Pipe()
	ca, cb := NewConn(a), NewConn(b)
	defer ca.Close()
	defer cb.Close()
	send, release := ca.Reserve(time.Second)
	other := make(chan error, 1)
	go func() { other <- ca.Send(&Heartbeat{UnixMS: 2}) }()
	time.Sleep(20 * time.Millisecond) // the other Send is waiting (were it not, it would go first)
	got := make(chan Message, 2)
	go func() {
		for range 2 {
			m, err := cb.Recv()
			if err != nil {
				return
			}
			got <- m
		}
	}()
	if err := send(&Registered{HostID: 7}); err != nil {
		t.Fatal(err)
	}
	release()
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	if m := <-got; m.Type() != TypeRegistered {
		t.Fatalf("first message %s; want the reserved registered", m.Type())
	}
	if m := <-got; m.Type() != TypeHeartbeat {
		t.Fatalf("second message %s; want the heartbeat that waited", m.Type())
	}
}
