package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/net/poll"
)

// Errors reported by the gate.
var (
	// ErrClosed is returned by Send on a connection that is closing or closed.
	ErrClosed = errors.New("gate: connection closed")
	// ErrSlowConsumer is passed to OnClose when a reliable queue overflowed.
	ErrSlowConsumer = errors.New("gate: reliable queue overflow (slow consumer)")
	// ErrProtocol wraps RFC 6455 violations by the peer (close code 1002).
	ErrProtocol = errors.New("gate: protocol error")
	// ErrTooBig wraps frames or messages over the configured limits (1009).
	ErrTooBig = errors.New("gate: frame or message too big")
	// ErrUnsupportedData is passed to OnClose when a peer sent text (1003).
	ErrUnsupportedData = errors.New("gate: text messages are not accepted")
	// ErrInvalidPayload wraps a close reason that is not UTF-8 (1007).
	ErrInvalidPayload = errors.New("gate: invalid close reason")
	// ErrPeerGone is passed to OnClose when the TCP connection ended without
	// a close handshake.
	ErrPeerGone = errors.New("gate: peer went away")
	// ErrServerClosed is passed to OnClose for connections closed by Server.Close.
	ErrServerClosed = errors.New("gate: server closed")
	// ErrHeaderTooLarge ends handshakes whose request exceeds MaxHeaderBytes.
	ErrHeaderTooLarge = errors.New("gate: handshake request too large")
	// ErrFlood is passed to OnClose for a peer closed for sending control
	// frames (pings) faster than Config.PingRate (1008).
	ErrFlood = errors.New("gate: control frame flood")
)

// CloseError is passed to OnClose when the peer started the close handshake.
type CloseError struct {
	Code   uint16
	Reason string
}

func (e *CloseError) Error() string {
	return "gate: peer closed with " + strconv.Itoa(int(e.Code)) + " " + strconv.Quote(e.Reason)
}

// Close codes used by the gate (RFC 6455 section 7.4.1).
const (
	CloseNormal          uint16 = 1000
	CloseGoingAway       uint16 = 1001
	CloseProtocolError   uint16 = 1002
	CloseUnsupportedData uint16 = 1003
	CloseNoStatus        uint16 = 1005
	CloseInvalidPayload  uint16 = 1007
	ClosePolicyViolation uint16 = 1008
	CloseTooBig          uint16 = 1009
	CloseInternalError   uint16 = 1011
)

// Config configures a Server. Build it with DefaultConfig and override fields.
type Config struct {
	// Addr is the TCP listen address, e.g. "127.0.0.1:0".
	Addr string
	// MaxFrameSize bounds one inbound frame's payload; a header announcing
	// more closes the connection with 1009 before anything is allocated.
	MaxFrameSize int64
	// MaxMessageSize bounds one reassembled inbound message (1009 past it).
	MaxMessageSize int64
	// HandshakeTimeout bounds the whole HTTP upgrade, from accept.
	HandshakeTimeout time.Duration
	// CloseTimeout bounds the close handshake we start before the TCP
	// connection is dropped regardless.
	CloseTimeout time.Duration
	// MaxHeaderBytes bounds the upgrade request (request line and headers).
	MaxHeaderBytes int
	// MaxHandshakes bounds concurrent in-progress handshakes; a connection
	// accepted beyond it sheds the oldest handshake in progress (closed),
	// so that idle handshakes cannot lock newcomers out.
	MaxHandshakes int
	// MaxHandshakesPerAddr bounds one client address's handshakes in
	// progress (a handshake ends as its 101 is written), and
	// MaxConnsPerAddr its handshakes and open connections
	// together: past either, its new connections are closed at accept, so
	// that one address holding half-open or idle connections sheds itself
	// rather than other players. An address is an IPv4 address (an
	// IPv4-mapped IPv6 address counts as its IPv4) or an IPv6 /64 prefix,
	// the block one subscriber is given. Clients behind one NAT (or one
	// /64) share an address: raise them for such a venue.
	MaxHandshakesPerAddr int
	MaxConnsPerAddr      int
	// PingRate and PingBurst are each connection's token bucket for
	// control frames it sends (pings, pongs): past it the connection is
	// closed 1008. Only the latest ping is answered: a pong still queued is
	// replaced by the newest (RFC 6455 5.5.3).
	PingRate  float64
	PingBurst int
	// CheckOrigin, if set, is called with the Origin header value (valid only
	// during the call) of requests that carry one; false rejects with 403.
	// Requests without Origin (non-browser clients) are accepted.
	CheckOrigin func(origin []byte) bool
	// ReliableQueueLimit bounds the bytes (frames with headers) queued by
	// Send and not yet written; overflow closes the connection with 1008.
	ReliableQueueLimit int
	// Loops is the number of event loops; <= 0 means GOMAXPROCS.
	Loops int
	// PacedReads, when positive, makes the loops paced (poll.NewPaced):
	// they read, and handle every other socket event, only when Harvest
	// asks them to or when PacedReads went by without a harvest. Sends
	// and closes still go out at once. An Area host harvests at the
	// start of each tick. Zero or below: the loops handle each event as
	// it comes. Other platforms than Linux have no loops to pace.
	PacedReads time.Duration
	// Writev, when true, writes each connection with its own writev(2)
	// as soon as it has something to send. By default a loop gathers the
	// writes asked of it while it runs a batch of work and hands them to
	// the kernel together, one io_uring submission for all of them;
	// where the kernel refuses io_uring (too old, disabled by the sysctl
	// kernel.io_uring_disabled, filtered by seccomp) the gate says so in
	// its log and writes with writev. Server.WritePath tells which.
	Writev bool
	// Logger receives connection-level warnings; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns a fresh Config with ley's defaults.
func DefaultConfig() Config {
	return Config{
		Addr:               "127.0.0.1:0",
		MaxFrameSize:       64 << 10,
		MaxMessageSize:     64 << 10,
		HandshakeTimeout:   5 * time.Second,
		CloseTimeout:       2 * time.Second,
		MaxHeaderBytes:     8 << 10,
		MaxHandshakes:      4096,
		ReliableQueueLimit: 1 << 20,
		// A host serves at most a few hundred players; one address with
		// more than this is a venue behind a NAT (raise it) or an abuser.
		MaxHandshakesPerAddr: 16,
		MaxConnsPerAddr:      256,
		PingRate:             10,
		PingBurst:            20,
	}
}

func (c *Config) validate() error {
	switch {
	case c.MaxFrameSize <= 0 || c.MaxFrameSize > 1<<30:
		return fmt.Errorf("gate: MaxFrameSize %d out of (0, 1GiB]", c.MaxFrameSize)
	case c.MaxMessageSize <= 0 || c.MaxMessageSize > 1<<30:
		return fmt.Errorf("gate: MaxMessageSize %d out of (0, 1GiB]", c.MaxMessageSize)
	case c.HandshakeTimeout <= 0 || c.CloseTimeout <= 0:
		return errors.New("gate: HandshakeTimeout and CloseTimeout must be positive")
	case c.MaxHeaderBytes < 256:
		return errors.New("gate: MaxHeaderBytes must be at least 256")
	case c.MaxHandshakes <= 0:
		return errors.New("gate: MaxHandshakes must be positive")
	case c.MaxHandshakesPerAddr <= 0 || c.MaxConnsPerAddr <= 0:
		return errors.New("gate: MaxHandshakesPerAddr and MaxConnsPerAddr must be positive")
	case c.PingRate <= 0 || c.PingBurst <= 0:
		return errors.New("gate: PingRate and PingBurst must be positive")
	case c.ReliableQueueLimit <= 0:
		return errors.New("gate: ReliableQueueLimit must be positive")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// Handler holds the connection callbacks. They run on event-loop goroutines
// (on non-Linux platforms, on the connection's reader goroutine), one at a
// time per connection, and must not block: a blocked callback stalls every
// connection of its loop. Any field may be nil.
type Handler struct {
	// OnOpen runs once, after the upgrade, before any OnMessage.
	OnOpen func(c *Conn)
	// OnMessage receives one whole binary message. payload is valid only
	// during the call (it points into a reused read buffer).
	OnMessage func(c *Conn, payload []byte)
	// OnTooBig, when set, runs on the connection's event loop when an
	// inbound frame or message exceeds MaxFrameSize or MaxMessageSize
	// (limit is MaxMessageSize), before the connection is closed with
	// 1009: a message it sends with Send is written before the close
	// frame. The oversized payload is never read.
	OnTooBig func(c *Conn, limit int64)
	// OnClose runs exactly once per opened connection, after its socket is
	// closed and its queues released. err says why: nil after Conn.Close,
	// *CloseError when the peer closed, or one of the sentinel errors
	// (possibly wrapped).
	OnClose func(c *Conn, err error)
}

// Server accepts WebSocket connections and serves them on a poll reactor.
//
// Its methods are safe for concurrent use.
type Server struct {
	cfg    Config
	h      Handler
	ln     net.Listener
	poller *poll.Poller
	shards []*shard
	log    *slog.Logger

	// hsMu guards the handshake table: the handshakes in progress, oldest
	// first, and how many of them are live (not shed).
	hsMu     sync.Mutex
	hsHead   *handshaking
	hsTail   *handshaking
	hsLive   int
	shed     atomic.Uint64
	lingers  chan struct{} // semaphore of refused connections being answered
	addrMu   sync.Mutex    // guards addrs
	addrs    map[netip.Addr]*addrUse
	refused  atomic.Uint64
	nextID   atomic.Uint64
	nextLoop atomic.Uint32
	// ringSubmits and ringWrites count io_uring submissions and the
	// writes they carried (RingStats).
	ringSubmits atomic.Uint64
	ringWrites  atomic.Uint64
	closed      atomic.Bool
	hsWG        sync.WaitGroup // accept loop and handshakes
	stopCtx     func() bool
	closeErr    error
	once        sync.Once
}

// Listen validates cfg, starts the reactor and starts accepting on cfg.Addr.
// Cancelling ctx closes the server, like Close.
func Listen(ctx context.Context, cfg Config, h Handler) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("gate: listen %s: %w", cfg.Addr, err)
	}
	var p *poll.Poller
	if cfg.PacedReads > 0 {
		p, err = poll.NewPaced(cfg.Loops, cfg.PacedReads)
	} else {
		p, err = poll.New(cfg.Loops)
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("gate: start reactor: %w", err)
	}
	s := &Server{
		cfg:     cfg,
		h:       h,
		ln:      ln,
		poller:  p,
		log:     cfg.Logger,
		lingers: make(chan struct{}, refuseLingers),
		addrs:   map[netip.Addr]*addrUse{},
	}
	for i := 0; i < p.Len(); i++ {
		s.shards = append(s.shards, newShard(s, p.Loop(i)))
	}
	s.hsWG.Add(1)
	go s.acceptLoop()
	s.stopCtx = context.AfterFunc(ctx, func() { s.Close() })
	return s, nil
}

// Addr reports the listening address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Harvest has paced loops (Config.PacedReads) read what their connections
// sent since the last harvest, and handle their other socket events, and
// returns once they have: the handlers' OnMessage calls are made by then.
// It returns at once when the loops are not paced. One goroutine at a time
// may call it, never from a handler.
func (s *Server) Harvest() { s.poller.Harvest() }

// Close stops accepting, ends in-progress handshakes, sends 1001 to every
// open connection (best effort, without waiting), closes them (each OnClose
// runs with ErrServerClosed) and stops the event loops. It waits for all of
// that and is idempotent.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.closed.Store(true)
		if s.stopCtx != nil {
			s.stopCtx()
		}
		errLn := s.ln.Close()
		s.hsWG.Wait()
		var wg sync.WaitGroup
		for _, sh := range s.shards {
			wg.Add(1)
			sh := sh
			if err := sh.loop.Run(func() { sh.closeAll(); wg.Done() }); err != nil {
				wg.Done()
			}
		}
		wg.Wait()
		s.closeErr = errors.Join(errLn, s.poller.Close())
	})
	return s.closeErr
}

// pickShard spreads new connections round-robin over the loops.
func (s *Server) pickShard() *shard {
	return s.shards[int(s.nextLoop.Add(1))%len(s.shards)]
}
