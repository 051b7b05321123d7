//go:build !linux

package gate

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/leyworks/ley/net/poll"
)

// On platforms without the epoll reactor each connection has a reader and a
// writer goroutine. sys.lk plays the event loop's role: every owner-side
// field is touched with it held, and callbacks run with it held on the
// reader goroutine. Writes block while holding it (acceptable for the
// development platforms this fallback serves; a slow peer only slows
// itself).

type shard struct {
	srv   *Server
	loop  *poll.Loop
	mu    sync.Mutex
	conns map[*Conn]struct{}
}

func newShard(s *Server, l *poll.Loop) *shard {
	return &shard{srv: s, loop: l, conns: make(map[*Conn]struct{})}
}

type connSys struct {
	nc    net.Conn
	lk    sync.Mutex
	wake  chan struct{}
	abort bool
	iov   [][]byte
	rbuf  []byte
}

func (s *Server) attach(nc net.Conn, ip netip.Addr) {
	sh := s.pickShard()
	c := &Conn{id: s.nextID.Add(1), srv: s, sh: sh, remote: nc.RemoteAddr(), ip: ip, pingTokens: float64(s.cfg.PingBurst), pingAt: time.Now(), pongAt: -1}
	c.sys.nc = nc
	c.sys.wake = make(chan struct{}, 1)
	sh.mu.Lock()
	sh.conns[c] = struct{}{}
	sh.mu.Unlock()
	c.sys.lk.Lock()
	if s.h.OnOpen != nil {
		s.h.OnOpen(c)
	}
	c.sys.lk.Unlock()
	go c.writeLoop()
	go c.readLoop()
}

func (c *Conn) kick() {
	select {
	case c.sys.wake <- struct{}{}:
	default:
	}
}

func (c *Conn) abort() {
	c.mu.Lock()
	c.sys.abort = true
	c.mu.Unlock()
	c.kick()
}

func (c *Conn) closeTimeout() {
	c.sys.nc.Close()
	c.sys.lk.Lock()
	c.destroy(c.closeErrValue())
	c.sys.lk.Unlock()
}

func (c *Conn) readLoop() {
	buf := make([]byte, 16<<10)
	for {
		n, err := c.sys.nc.Read(buf)
		c.sys.lk.Lock()
		if c.dead {
			c.sys.lk.Unlock()
			return
		}
		if n > 0 && !c.discard {
			c.pend = growBuf(c.pend, len(c.pend)+n)
			c.pend = append(c.pend, buf[:n]...)
			used := c.consume(c.pend)
			if !c.dead {
				c.keepRest(c.pend[used:], true)
			}
		}
		if err != nil && !c.dead {
			if c.state.Load() != stateOpen {
				c.destroy(c.closeErrValue())
			} else {
				c.destroy(fmt.Errorf("%w: read: %w", ErrPeerGone, err))
			}
		}
		dead := c.dead
		c.sys.lk.Unlock()
		if dead {
			return
		}
	}
}

func (c *Conn) writeLoop() {
	for range c.sys.wake {
		c.sys.lk.Lock()
		if c.dead {
			c.sys.lk.Unlock()
			return
		}
		c.flush()
		c.mu.Lock()
		abort := c.sys.abort
		c.mu.Unlock()
		if abort {
			c.destroy(c.closeErrValue())
		}
		dead := c.dead
		c.sys.lk.Unlock()
		if dead {
			return
		}
	}
}

// flush writes everything queued. sys.lk held.
func (c *Conn) flush() {
	for !c.dead {
		c.mu.Lock()
		c.flushQueued = false
		iov, curFirst, k := c.buildIovLocked(c.sys.iov[:0])
		closing := c.state.Load() == stateClosing
		c.mu.Unlock()
		if len(iov) == 0 {
			if closing {
				c.finFlushed()
			}
			return
		}
		bufs := net.Buffers(iov)
		n, err := bufs.WriteTo(c.sys.nc)
		clear(iov)
		c.sys.iov = iov[:0]
		if err != nil {
			c.destroy(fmt.Errorf("%w: write: %w", ErrPeerGone, err))
			return
		}
		c.mu.Lock()
		done := c.advanceLocked(int(n), curFirst, k)
		c.mu.Unlock()
		if done != nil {
			done.Release()
		}
	}
}

func (c *Conn) finFlushed() {
	if c.flushedFin {
		return
	}
	c.flushedFin = true
	if cw, ok := c.sys.nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	if c.peerClosed {
		c.destroy(c.closeErrValue())
	}
}

// destroy closes the connection once. sys.lk held.
func (c *Conn) destroy(err error) {
	if c.dead {
		return
	}
	c.dead = true
	_ = c.sys.nc.Close()
	c.srv.release(c.ip)
	c.sh.mu.Lock()
	delete(c.sh.conns, c)
	c.sh.mu.Unlock()
	if vol := c.releaseAll(); vol != nil {
		vol.Release()
	}
	c.kick() // let the writer goroutine see dead and exit
	if c.srv.h.OnClose != nil {
		c.srv.h.OnClose(c, err)
	}
}

func (sh *shard) closeAll() {
	sh.mu.Lock()
	conns := make([]*Conn, 0, len(sh.conns))
	for c := range sh.conns {
		conns = append(conns, c)
	}
	sh.mu.Unlock()
	for _, c := range conns {
		c.sys.nc.Close()
		c.sys.lk.Lock()
		c.destroy(ErrServerClosed)
		c.sys.lk.Unlock()
	}
}

// WritePath reports how the gate writes to its connections: on this
// platform, "net.Conn" (a goroutine per connection).
func (s *Server) WritePath() string { return "net.Conn" }

// RingStats reports no io_uring submissions on this platform.
func (s *Server) RingStats() (submissions, writes uint64) { return 0, 0 }
