//go:build linux

package gate

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/leyworks/ley/net/poll"
	"github.com/leyworks/ley/net/uring"
	"golang.org/x/sys/unix"
)

// maxReadsPerEvent bounds the reads one readiness event may do before the
// connection yields the loop to others (it reschedules itself).
const maxReadsPerEvent = 16

// readBufSize is the loop's shared read buffer: bytes are parsed straight
// from it, and only an incomplete frame's tail is copied to the connection.
const readBufSize = 64 << 10

// ringEntries is how many writes one io_uring submission carries; a
// batch with more is submitted in parts.
const ringEntries = 256

// shard is the per-loop state. Every field is owned by the loop goroutine.
type shard struct {
	srv   *Server
	loop  *poll.Loop
	rbuf  []byte
	iov   [][]byte
	iovec []unix.Iovec
	conns map[*Conn]struct{}

	// With a ring, flushes asked for from other goroutines (kicks) gather
	// in batch while the loop runs its batch of work, and writeBatch
	// writes them all with one io_uring submission per ringEntries
	// connections. Without one, each connection is written with its own
	// writev as its kick runs.
	ring   *uring.Ring
	batch  []*Conn      // connections to write after the loop's batch
	spare  []*Conn      // batch's other backing array
	writes []ringWrite  // the submission being made, by tag
	flat   []unix.Iovec // every write's iovecs, back to back
	doneFn func(tag uint64, n int, err error)
}

// ringWrite is one connection's write in a submission: what
// advanceLocked needs when it completes, and its iovecs in shard.flat.
type ringWrite struct {
	c          *Conn
	curFirst   bool
	k          int
	start, end int
	total      int
}

func newShard(s *Server, l *poll.Loop) *shard {
	sh := &shard{
		srv:   s,
		loop:  l,
		rbuf:  make([]byte, readBufSize),
		iov:   make([][]byte, 0, maxIov+8),
		iovec: make([]unix.Iovec, 0, maxIov+8),
		conns: make(map[*Conn]struct{}),
	}
	if !s.cfg.Writev {
		r, err := uring.New(ringEntries)
		if err != nil {
			s.log.Warn("gate: writing with writev: io_uring is not available", "err", err)
		} else {
			sh.ring = r
			sh.doneFn = sh.completed
			l.SetAfterBatch(sh.writeBatch)
		}
	}
	return sh
}

// queueFlush puts c in its loop's batch of writes (with a ring, this is
// what a kick runs). Loop goroutine only.
func (c *Conn) queueFlush() {
	if c.dead || c.inBatch {
		return
	}
	c.inBatch = true
	c.sh.batch = append(c.sh.batch, c)
}

// writeBatch writes every connection queued by queueFlush: one io_uring
// submission per ringEntries connections, and again for those with more
// to write after it, until each is written out, blocked or gone. It runs
// on the loop after each batch of events and tasks.
func (sh *shard) writeBatch() {
	for len(sh.batch) > 0 && sh.ring != nil {
		cur := sh.batch
		sh.batch = sh.spare[:0]
		for rest := cur; len(rest) > 0; {
			n := min(len(rest), sh.ring.Room())
			sh.submit(rest[:n])
			rest = rest[n:]
		}
		clear(cur)
		sh.spare = cur[:0]
	}
	// A ring that failed left its connections to writev.
	for len(sh.batch) > 0 {
		c := sh.batch[len(sh.batch)-1]
		sh.batch = sh.batch[:len(sh.batch)-1]
		c.inBatch = false
		c.flush()
	}
}

// submit writes conns with one io_uring submission. The iovecs of all of
// them are built first, into one array, and only then handed to the ring:
// an array that grew while the writes were queued would leave the kernel
// pointers into the old one.
func (sh *shard) submit(conns []*Conn) {
	sh.writes = sh.writes[:0]
	sh.flat = sh.flat[:0]
	for _, c := range conns {
		c.inBatch = false
		if c.dead {
			continue
		}
		iov, curFirst, k := c.nextWrite(sh.iov[:0])
		if len(iov) == 0 {
			continue
		}
		w := ringWrite{c: c, curFirst: curFirst, k: k, start: len(sh.flat)}
		sh.flat, w.total = poll.AppendIovecs(sh.flat, iov)
		clear(iov)
		w.end = len(sh.flat)
		sh.writes = append(sh.writes, w)
	}
	for i := range sh.writes {
		w := &sh.writes[i]
		sh.ring.Writev(w.c.sys.fd, sh.flat[w.start:w.end], uint64(i))
	}
	err := sh.ring.Submit(sh.doneFn)
	clear(sh.flat) // drop the references to the buffers
	if err == nil && len(sh.writes) > 0 {
		sh.srv.ringSubmits.Add(1)
		sh.srv.ringWrites.Add(uint64(len(sh.writes)))
	}
	if err != nil {
		// Nothing of this submission reached the kernel (Submit fails
		// only before it submits): its connections are written with
		// writev, and so is everything after.
		sh.srv.log.Error("gate: io_uring failed; writing with writev from now on", "err", err)
		sh.ring.Close()
		sh.ring = nil
		for i := range sh.writes {
			sh.batch = append(sh.batch, sh.writes[i].c)
			sh.writes[i].c.inBatch = true
		}
	}
	clear(sh.writes)
}

// completed applies one write's result, as flush does after its writev.
func (sh *shard) completed(tag uint64, n int, err error) {
	w := &sh.writes[tag]
	c := w.c
	if c.dead {
		return
	}
	switch {
	case err == unix.EINTR:
		c.queueFlush()
		return
	case err == unix.EAGAIN:
		c.mu.Lock()
		c.blocked = true
		c.mu.Unlock()
		return
	case err != nil:
		c.destroy(fmt.Errorf("%w: write: %w", ErrPeerGone, err))
		return
	}
	c.mu.Lock()
	done := c.advanceLocked(n, w.curFirst, w.k)
	more := n < w.total || c.cur != nil || len(c.rq) > 0 || c.vol != nil || c.state.Load() == stateClosing
	c.mu.Unlock()
	if done != nil {
		done.Release()
	}
	if more {
		// A part written, or more queued than one write takes (a frame
		// promoted after the queue, iovecs past maxIov): as flush
		// loops, write again (a full socket says EAGAIN then).
		c.queueFlush()
	}
}

// RingStats reports the io_uring submissions the gate has made and the
// writes they carried: their ratio is how many connections one system
// call wrote.
func (s *Server) RingStats() (submissions, writes uint64) {
	return s.ringSubmits.Load(), s.ringWrites.Load()
}

// WritePath reports how the gate writes to its connections: "io_uring"
// (one submission per loop batch) or "writev" (one call per connection).
func (s *Server) WritePath() string {
	for _, sh := range s.shards {
		if sh.ring == nil {
			return "writev"
		}
	}
	return "io_uring"
}

// connSys is the Linux part of a Conn: its own descriptor (a dup of the
// accepted socket, see detach) and method values created once so that
// queuing work on the loop does not allocate.
type connSys struct {
	fd        int
	flushFn   func()
	readFn    func()
	timeoutFn func()
	abortFn   func()
}

// detach takes the socket away from Go's netpoller: it duplicates the
// descriptor (F_DUPFD_CLOEXEC; the duplicate shares the open file
// description, so it is already non-blocking), then closes nc, which
// unregisters and closes only the original descriptor. The socket itself
// lives on through the duplicate, which the gate alone owns and closes.
func detach(nc net.Conn) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		nc.Close()
		return -1, errors.New("gate: connection has no descriptor")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		nc.Close()
		return -1, err
	}
	nfd := -1
	var derr error
	if err := rc.Control(func(fd uintptr) {
		nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		derr = err
	}
	nc.Close()
	if derr != nil {
		return -1, fmt.Errorf("gate: dup socket: %w", derr)
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return -1, fmt.Errorf("gate: set non-blocking: %w", err)
	}
	return nfd, nil
}

// attach hands an upgraded connection to a loop. Called on the handshake
// goroutine; OnOpen runs on the loop.
func (s *Server) attach(nc net.Conn, ip netip.Addr) {
	remote := nc.RemoteAddr()
	fd, err := detach(nc)
	if err != nil {
		s.log.Warn("gate: attach failed", "remote", remote, "err", err)
		s.release(ip)
		return
	}
	sh := s.pickShard()
	c := &Conn{id: s.nextID.Add(1), srv: s, sh: sh, remote: remote, ip: ip, pingTokens: float64(s.cfg.PingBurst), pingAt: time.Now(), pongAt: -1}
	c.sys.fd = fd
	c.sys.flushFn = c.flush
	if sh.ring != nil {
		c.sys.flushFn = c.queueFlush
	}
	c.sys.readFn = c.readable
	c.sys.timeoutFn = c.onTimeout
	c.sys.abortFn = c.onAbort
	if err := sh.loop.Run(c.register); err != nil {
		unix.Close(fd)
		s.release(ip)
	}
}

// register runs on the loop: add the descriptor and open the connection.
func (c *Conn) register() {
	if err := c.sh.loop.Add(c.sys.fd, c); err != nil {
		c.srv.log.Warn("gate: register failed", "remote", c.remote, "err", err)
		unix.Close(c.sys.fd)
		c.dead = true
		c.srv.release(c.ip)
		return
	}
	c.sh.conns[c] = struct{}{}
	if c.srv.h.OnOpen != nil {
		c.srv.h.OnOpen(c)
	}
	// Bytes that arrived before registration produced an edge already
	// consumed by nobody; read once now.
	c.readable()
}

// HandleEvent implements poll.Handler; it runs on the connection's loop.
// It is exported only to satisfy the interface: do not call it.
func (c *Conn) HandleEvent(fd int, ev poll.Event) {
	if ev&(poll.EventHangup|poll.EventError) != 0 {
		c.hup = true // read to the end: the close must be seen
	}
	if ev&(poll.EventRead|poll.EventHangup|poll.EventError) != 0 {
		c.readable()
	}
	if ev&poll.EventWrite != 0 && !c.dead {
		c.mu.Lock()
		c.blocked = false
		c.mu.Unlock()
		c.flush()
	}
}

// kick queues a flush on the loop (the caller set flushQueued).
func (c *Conn) kick() {
	if c.sh.loop.Run(c.sys.flushFn) != nil {
		c.mu.Lock()
		c.flushQueued = false
		c.mu.Unlock()
	}
}

// abort queues a last flush attempt and an immediate close (slow consumer).
func (c *Conn) abort() { _ = c.sh.loop.Run(c.sys.abortFn) }

func (c *Conn) onAbort() {
	if c.dead {
		return
	}
	c.flush()
	c.destroy(c.closeErrValue())
}

// closeTimeout runs on the timer goroutine.
func (c *Conn) closeTimeout() { _ = c.sh.loop.Run(c.sys.timeoutFn) }

func (c *Conn) onTimeout() { c.destroy(c.closeErrValue()) }

// readable reads until EAGAIN (or maxReadsPerEvent, then yields), parsing
// frames from the loop's shared buffer. Loop goroutine only.
func (c *Conn) readable() {
	sh := c.sh
	for i := 0; i < maxReadsPerEvent; i++ {
		if c.dead {
			return
		}
		fromPend := c.pend != nil
		var buf []byte
		if fromPend {
			if len(c.pend) == cap(c.pend) {
				c.growPend()
			}
			buf = c.pend[len(c.pend):cap(c.pend)]
		} else {
			buf = sh.rbuf
		}
		n, err := poll.Read(c.sys.fd, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return
		case err != nil:
			c.lost(fmt.Errorf("%w: read: %w", ErrPeerGone, err))
			return
		case n == 0:
			c.lost(ErrPeerGone)
			return
		}
		if c.discard {
			continue
		}
		var data []byte
		if fromPend {
			c.pend = c.pend[:len(c.pend)+n]
			data = c.pend
		} else {
			data = buf[:n]
		}
		used := c.consume(data)
		if c.dead {
			return
		}
		c.keepRest(data[used:], fromPend)
		if n < len(buf) && !c.hup {
			// A short read drained the socket: on an edge-triggered
			// socket, bytes that arrive from now on make a new event, so
			// another read now would only say EAGAIN (one syscall per
			// arriving batch, not two). After a hang-up the loop reads on
			// to the end of the stream.
			return
		}
	}
	_ = sh.loop.Run(c.sys.readFn)
}

// lost handles EOF or a read error: the end of a close handshake we are in,
// or an abrupt disconnect.
func (c *Conn) lost(err error) {
	if c.state.Load() != stateOpen {
		err = c.closeErrValue()
	}
	c.destroy(err)
}

// nextWrite builds into iov what c writes next (buildIovLocked), for a
// flush or a ring submission, clearing flushQueued. It returns an empty
// iov when c is blocked or has nothing left to write, half-closing c then
// if its close frame is out (finFlushed). Loop goroutine only.
func (c *Conn) nextWrite(iov [][]byte) ([][]byte, bool, int) {
	c.mu.Lock()
	c.flushQueued = false
	if c.blocked {
		c.mu.Unlock()
		return iov[:0], false, 0
	}
	iov, curFirst, k := c.buildIovLocked(iov)
	closing := c.state.Load() == stateClosing
	c.mu.Unlock()
	if len(iov) == 0 && closing {
		c.finFlushed()
	}
	return iov, curFirst, k
}

// flush writes queued frames with writev until done or EAGAIN. Loop
// goroutine only; c.mu is released around the system call so that Send
// never waits for the kernel.
func (c *Conn) flush() {
	sh := c.sh
	for !c.dead {
		iov, curFirst, k := c.nextWrite(sh.iov[:0])
		if len(iov) == 0 {
			return
		}
		n, err := writev(c.sys.fd, iov, &sh.iovec)
		clear(iov)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			c.mu.Lock()
			c.blocked = true
			c.mu.Unlock()
			return
		}
		if err != nil {
			c.destroy(fmt.Errorf("%w: write: %w", ErrPeerGone, err))
			return
		}
		c.mu.Lock()
		done := c.advanceLocked(n, curFirst, k)
		c.mu.Unlock()
		if done != nil {
			done.Release()
		}
	}
}

// finFlushed runs once our close frame is on the wire: half-close, and
// close the socket now if the peer already sent its close frame.
func (c *Conn) finFlushed() {
	if c.flushedFin {
		return
	}
	c.flushedFin = true
	_ = unix.Shutdown(c.sys.fd, unix.SHUT_WR)
	if c.peerClosed {
		c.destroy(c.closeErrValue())
	}
}

// destroy closes the socket, releases everything and calls OnClose, once.
// Loop goroutine only.
func (c *Conn) destroy(err error) {
	if c.dead {
		return
	}
	c.dead = true
	_ = c.sh.loop.Remove(c.sys.fd)
	_ = unix.Close(c.sys.fd)
	delete(c.sh.conns, c)
	c.srv.release(c.ip)
	if vol := c.releaseAll(); vol != nil {
		vol.Release()
	}
	if c.srv.h.OnClose != nil {
		c.srv.h.OnClose(c, err)
	}
}

// closeAll sends 1001 to every connection of the shard (one non-blocking
// attempt) and destroys them. Loop goroutine only.
func (sh *shard) closeAll() {
	for c := range sh.conns {
		c.mu.Lock()
		var old *Frame
		if c.state.Load() == stateOpen {
			old = c.closeLocked(CloseGoingAway, "server closing", ErrServerClosed)
		}
		c.closeErr = ErrServerClosed
		c.mu.Unlock()
		if old != nil {
			old.Release()
		}
		c.flush()
		c.destroy(ErrServerClosed)
	}
	if sh.ring != nil {
		_ = sh.ring.Close()
		sh.ring = nil
	}
}

// writev writes bufs with one writev(2) (poll.WriteBuffers: a reused
// iovec array, no scheduler round trip).
func writev(fd int, bufs [][]byte, scratch *[]unix.Iovec) (int, error) {
	return poll.WriteBuffers(fd, bufs, scratch)
}
