package control

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/fxamacker/cbor/v2"
)

// MaxFrameSize bounds one control frame (a snapshot blob with its
// characters fits well inside).
const MaxFrameSize = 16 << 20

// MaxRegisterFrameSize bounds a frame from a peer whose credentials have
// not been checked yet, so that an unauthenticated connection never makes
// the director hold more than this. A Register fits; the Areas of a host
// that runs hundreds of them (an AreaRef with its placement credential
// takes some 50 bytes) follow it in an [AreaList] (see [Conn.SendRegister]).
// See [Conn.SetMaxFrame].
const MaxRegisterFrameSize = 16 << 10

// Sentinel errors of the control channel.
var (
	// ErrFrameTooLarge: a frame announced past the Conn's limit (see
	// SetMaxFrame) or built past MaxFrameSize.
	ErrFrameTooLarge = errors.New("control: frame too large")
	// ErrMalformed: a frame that is not [type, body] of a known type.
	ErrMalformed = errors.New("control: malformed frame")
)

var (
	encMode cbor.EncMode
	decMode cbor.DecMode
)

func init() {
	var err error
	encMode, err = cbor.CoreDetEncOptions().EncMode()
	if err != nil {
		panic(err)
	}
	decMode, err = cbor.DecOptions{
		MaxNestedLevels:  16,
		MaxArrayElements: 1 << 16,
		MaxMapPairs:      1 << 10,
		DupMapKey:        cbor.DupMapKeyEnforcedAPF,
		IndefLength:      cbor.IndefLengthForbidden,
		TagsMd:           cbor.TagsForbidden,
	}.DecMode()
	if err != nil {
		panic(err)
	}
}

type envelope struct {
	_    struct{} `cbor:",toarray"`
	T    Type
	Body cbor.RawMessage
}

// Conn is one end of a control channel. Send may be called from any
// goroutine (writes are serialised); Recv from one goroutine at a time.
type Conn struct {
	nc  net.Conn
	r   *bufio.Reader
	max uint32     // the longest frame Recv accepts; set before Recv, never during
	wmu sync.Mutex // guards writes on nc and wbuf
	// WriteTimeout bounds each Send (default 10 s): a stuck director never
	// blocks a host's goroutine for ever. Set it before the Conn is shared.
	WriteTimeout time.Duration
}

// Reserve takes the Conn's writes for the caller: every Send and SendAll
// of other goroutines waits until release is called, and the caller sends
// with send meanwhile (each write bounded by timeout). A director answers
// a host's registration this way: the answer goes first, before any
// message another goroutine has for the newly registered host. Call
// release once.
func (c *Conn) Reserve(timeout time.Duration) (send func(Message) error, release func()) {
	c.wmu.Lock()
	send = func(msg Message) error {
		frame, err := Encode(msg)
		if err != nil {
			return err
		}
		_ = c.nc.SetWriteDeadline(time.Now().Add(timeout))
		if _, err := c.nc.Write(frame); err != nil {
			return fmt.Errorf("control: send %s: %w", msg.Type(), err)
		}
		return nil
	}
	return send, c.wmu.Unlock
}

// NewConn wraps nc.
func NewConn(nc net.Conn) *Conn {
	return &Conn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10), max: MaxFrameSize, WriteTimeout: 10 * time.Second}
}

// SetMaxFrame sets the longest frame Recv accepts, at most [MaxFrameSize]
// (a larger or non-positive n means MaxFrameSize). A longer announcement
// fails Recv with [ErrFrameTooLarge] before anything is allocated for it.
// The director holds a peer that has not registered to
// [MaxRegisterFrameSize]. Call it from the goroutine that calls Recv.
func (c *Conn) SetMaxFrame(n int) {
	if n <= 0 || n > MaxFrameSize {
		n = MaxFrameSize
	}
	c.max = uint32(n)
}

// Dial connects to a control listener at addr without TLS: "unix:/path"
// for a unix socket, anything else is a TCP host:port. See DialContext.
func Dial(addr string, timeout time.Duration) (*Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return DialContext(ctx, addr, nil)
}

// Encode returns msg as one frame (length prefix included).
func Encode(msg Message) ([]byte, error) {
	body, err := encMode.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("control: encode %s: %w", msg.Type(), err)
	}
	item, err := encMode.Marshal(envelope{T: msg.Type(), Body: body})
	if err != nil {
		return nil, fmt.Errorf("control: encode %s: %w", msg.Type(), err)
	}
	if len(item) > MaxFrameSize {
		return nil, fmt.Errorf("%w: %s of %d bytes", ErrFrameTooLarge, msg.Type(), len(item))
	}
	frame := make([]byte, 4, 4+len(item))
	binary.BigEndian.PutUint32(frame, uint32(len(item)))
	return append(frame, item...), nil
}

// Decode parses one frame's CBOR item (without its length prefix).
func Decode(item []byte) (Message, error) {
	var env envelope
	if err := decMode.Unmarshal(item, &env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	msg := newMessage(env.T)
	if msg == nil {
		return nil, fmt.Errorf("%w: unknown type %d", ErrMalformed, env.T)
	}
	if err := decMode.Unmarshal(env.Body, msg); err != nil {
		return nil, fmt.Errorf("%w: %s body: %v", ErrMalformed, env.T, err)
	}
	return msg, nil
}

// Send writes msg as one frame. Safe for concurrent use.
func (c *Conn) Send(msg Message) error {
	frame, err := Encode(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.WriteTimeout > 0 {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.WriteTimeout))
	}
	if _, err := c.nc.Write(frame); err != nil {
		return fmt.Errorf("control: send %s: %w", msg.Type(), err)
	}
	return nil
}

// SendAll writes msgs in order with one write: what a burst of messages
// costs is one system call, not one each. On an error none, some or all of
// them may have been written; the Conn is then unusable, as after Send.
func (c *Conn) SendAll(msgs []Message) error {
	var buf []byte
	for _, msg := range msgs {
		frame, err := Encode(msg)
		if err != nil {
			return err
		}
		buf = append(buf, frame...)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.WriteTimeout > 0 {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.WriteTimeout))
	}
	if _, err := c.nc.Write(buf); err != nil {
		return fmt.Errorf("control: send %d messages: %w", len(msgs), err)
	}
	return nil
}

// SendRegister sends reg, the first message of a host's link, in one
// write: its Areas inline when the frame fits [MaxRegisterFrameSize],
// else reg without them (AreasFollow says how many) and an [AreaList]
// with them right after. reg is not changed.
func (c *Conn) SendRegister(reg *Register) error {
	frame, err := Encode(reg)
	if err != nil {
		return err
	}
	if len(frame)-4 <= MaxRegisterFrameSize {
		return c.SendAll([]Message{reg})
	}
	head := *reg
	head.Areas, head.AreasFollow = nil, len(reg.Areas)
	return c.SendAll([]Message{&head, &AreaList{Areas: reg.Areas}})
}

// Recv reads the next frame. A read error or a malformed frame leaves the
// Conn unusable; close it.
func (c *Conn) Recv() (Message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > c.max {
		return nil, fmt.Errorf("%w: %d bytes announced, at most %d taken", ErrFrameTooLarge, n, c.max)
	}
	item := make([]byte, n)
	if _, err := io.ReadFull(c.r, item); err != nil {
		return nil, err
	}
	return Decode(item)
}

// SetReadDeadline bounds the next Recv.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.nc.SetReadDeadline(t) }

// Close closes the underlying connection.
func (c *Conn) Close() error { return c.nc.Close() }

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }
