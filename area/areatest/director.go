// Package areatest is a scripted stand-in for the director, speaking the
// control protocol, for tests and benchmarks of area hosts before (and
// apart from) the real director: it accepts host registrations, makes
// Areas live, registers grants, and records everything hosts send.
package areatest

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/net/control"
)

// Director is a fake director listening on 127.0.0.1.
type Director struct {
	ln net.Listener
	// AutoAck makes the director ack every snapshot at once, as a real
	// director with a healthy store would.
	AutoAck atomic.Bool
	// LeaseMS is the lease its registrations give (control.Registered):
	// 0, none. While Mute is set, it answers no heartbeat (the host's
	// lease runs out as if the director were cut off).
	LeaseMS atomic.Int64
	Mute    atomic.Bool

	mu     sync.Mutex // guards conn, refuse, away
	conn   *control.Conn
	refuse string
	away   bool

	msgs  chan control.Message
	conns chan *control.Conn
	seq   atomic.Uint64
}

// New starts a Director; Close stops it.
func New() (*Director, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &Director{ln: ln, msgs: make(chan control.Message, 1<<16), conns: make(chan *control.Conn, 16)}
	go d.accept()
	return d, nil
}

// Addr is the control address hosts dial.
func (d *Director) Addr() string { return d.ln.Addr().String() }

// Close stops listening and drops the host connection.
func (d *Director) Close() {
	d.ln.Close()
	d.mu.Lock()
	if d.conn != nil {
		d.conn.Close()
	}
	d.mu.Unlock()
}

// Refuse makes the next registrations fail with reason ("" accepts).
func (d *Director) Refuse(reason string) {
	d.mu.Lock()
	d.refuse = reason
	d.mu.Unlock()
}

// Away makes registrations answered "not the leader" (the host keeps
// trying) while on: a realm between leaders, as a host sees it.
func (d *Director) Away(on bool) {
	d.mu.Lock()
	d.away = on
	d.mu.Unlock()
}

// DropLink closes the current host connection (the host reconnects).
func (d *Director) DropLink() {
	d.mu.Lock()
	if d.conn != nil {
		d.conn.Close()
	}
	d.mu.Unlock()
}

// Registered waits for a host to register and returns its registration.
func (d *Director) Registered(within time.Duration) (*control.Register, error) {
	reg, err := Expect[*control.Register](d, within)
	if err != nil {
		return nil, err
	}
	select {
	case <-d.conns:
		return reg, nil
	case <-time.After(within):
		return nil, fmt.Errorf("areatest: host registered but its link did not come up")
	}
}

func (d *Director) accept() {
	for {
		nc, err := d.ln.Accept()
		if err != nil {
			return
		}
		go d.serve(control.NewConn(nc))
	}
}

func (d *Director) serve(c *control.Conn) {
	defer c.Close()
	// Held as the director holds a connection before its credentials,
	// and the Areas that did not fit read after them.
	c.SetMaxFrame(control.MaxRegisterFrameSize)
	msg, err := c.Recv()
	if err != nil {
		return
	}
	reg, ok := msg.(*control.Register)
	if !ok {
		return
	}
	c.SetMaxFrame(control.MaxFrameSize)
	if reg.AreasFollow > 0 {
		m, err := c.Recv()
		list, ok := m.(*control.AreaList)
		if err != nil || !ok {
			return
		}
		reg.Areas = list.Areas
	}
	d.msgs <- reg
	d.mu.Lock()
	refuse, away := d.refuse, d.away
	d.mu.Unlock()
	if refuse != "" {
		_ = c.Send(&control.Registered{Error: refuse})
		return
	}
	if away {
		_ = c.Send(&control.Registered{Error: "not the leader", NotLeader: true})
		return
	}
	if err := c.Send(&control.Registered{HostID: 1, LeaseMS: d.LeaseMS.Load()}); err != nil {
		return
	}
	d.mu.Lock()
	d.conn = c
	d.mu.Unlock()
	d.conns <- c
	for {
		msg, err := c.Recv()
		if err != nil {
			return
		}
		if s, ok := msg.(*control.Snapshot); ok && d.AutoAck.Load() {
			_ = c.Send(&control.SnapshotAck{Area: s.Area, Seq: s.Seq})
		}
		if hb, ok := msg.(*control.Heartbeat); ok && d.LeaseMS.Load() > 0 && !d.Mute.Load() {
			_ = c.Send(&control.HeartbeatAck{SentMS: hb.UnixMS})
		}
		select {
		case d.msgs <- msg:
		default: // nobody reads: keep the link alive, drop the record
		}
	}
}

// Send sends m to the registered host.
func (d *Director) Send(m control.Message) error {
	d.mu.Lock()
	c := d.conn
	d.mu.Unlock()
	if c == nil {
		return fmt.Errorf("areatest: no host connected")
	}
	return c.Send(m)
}

// Expect returns the next message of T's type, skipping others.
func Expect[T control.Message](d *Director, within time.Duration) (T, error) {
	deadline := time.After(within)
	for {
		select {
		case m := <-d.msgs:
			if v, ok := m.(T); ok {
				return v, nil
			}
		case <-deadline:
			var zero T
			return zero, fmt.Errorf("areatest: no %T within %v", zero, within)
		}
	}
}

// Spawn makes a village Area live on the host and waits for it.
func (d *Director) Spawn(id uint32, w, h int) error {
	return d.SpawnTemplate(id, w, h, "village", "")
}

// SpawnTemplate makes an Area of kind live on the host with the content
// template named (see control.SpawnArea) and waits for it.
func (d *Director) SpawnTemplate(id uint32, w, h int, kind, template string) error {
	// A placement credential as long as the director's (32 hex digits).
	placement := fmt.Sprintf("%032x", id)
	if err := d.Send(&control.SpawnArea{Area: id, Epoch: 1, Kind: kind, W: w, H: h, Seed: uint64(id), Template: template, Placement: placement}); err != nil {
		return err
	}
	r, err := Expect[*control.AreaReady](d, 10*time.Second)
	if err != nil {
		return err
	}
	if r.Error != "" || r.Area != id {
		return fmt.Errorf("areatest: area %d not ready: %+v", id, r)
	}
	return nil
}

// Grant registers a join grant for account in area, placing a new
// character at (x, y), and returns its token once the host acked it.
func (d *Director) Grant(area uint32, account, joinID uint64, x, y int32, ttl time.Duration) (string, error) {
	tok := fmt.Sprintf("grant-%d", d.seq.Add(1))
	err := d.Send(&control.Grant{Area: area, Token: tok, JoinID: joinID, TTLMS: ttl.Milliseconds(), Name: "p",
		Character: control.Character{Account: account, X: x, Y: y, Placed: true}})
	if err != nil {
		return "", err
	}
	a, err := Expect[*control.GrantAck](d, 10*time.Second)
	if err != nil {
		return "", err
	}
	if a.Error != "" || a.Token != tok {
		return "", fmt.Errorf("areatest: grant refused: %+v", a)
	}
	return tok, nil
}
