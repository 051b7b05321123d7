package gate

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gobwas/ws"
)

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func expectClose(t *testing.T, c *rawConn, code uint16) {
	t.Helper()
	for {
		h, p, err := c.next()
		if err != nil {
			t.Fatalf("reading close: %v", err)
		}
		if h.OpCode != ws.OpClose {
			continue
		}
		if got := binary.BigEndian.Uint16(p); got != code {
			t.Fatalf("close code = %d; want %d", got, code)
		}
		return
	}
}

func TestHugeHeaderAndContinuationFlood(t *testing.T) {
	rec := newRecorder()
	s := startServer(t, testConfig(), rec.handler(true))

	t.Run("header announcing 2^62 bytes", func(t *testing.T) {
		before := heapAlloc()
		c := dialRaw(t, s)
		c.send(t, frame{fin: true, op: ws.OpBinary, length: 1 << 62})
		expectClose(t, c, CloseTooBig)
		if after := heapAlloc(); after > before+1<<20 {
			t.Fatalf("heap grew by %d bytes; want < 1 MiB", after-before)
		}
	})
	t.Run("1-byte continuation flood past MaxMessageSize", func(t *testing.T) {
		before := heapAlloc()
		c := dialRaw(t, s)
		var out []byte
		out = append(out, frame{op: ws.OpBinary, payload: []byte{1}}.bytes()...)
		one := frame{op: ws.OpContinuation, payload: []byte{1}}
		for i := 0; i < 70_000; i++ { // 70,000 > MaxMessageSize (64 KiB)
			out = append(out, one.bytes()...)
		}
		go c.Write(out) // the server stops reading once it has closed
		expectClose(t, c, CloseTooBig)
		out = nil
		if after := heapAlloc(); after > before+1<<20 {
			t.Fatalf("heap grew by %d bytes; want < 1 MiB", after-before)
		}
	})
}

func TestSlowHandshakesClosedByDeadline(t *testing.T) {
	cfg := testConfig()
	cfg.HandshakeTimeout = 1500 * time.Millisecond
	rec := newRecorder()
	s := startServer(t, cfg, rec.handler(true))

	// A thousand slow handshakes from a hundred addresses (each within its
	// per-address share), and a normal one from yet another.
	const slow = 1000
	conns := make([]net.Conn, 0, slow)
	for i := 0; i < slow; i++ {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 20, byte(1+i/10))}}
		nc, err := d.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		// An unfinished request: the server waits for the rest.
		if _, err := nc.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n")); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
	}
	// A normal handshake completes while the slow ones are held open.
	c := dialRaw(t, s)
	c.send(t, bin([]byte("hello")))
	if _, p, err := c.next(); err != nil || string(p) != "hello" {
		t.Fatalf("echo = %q, %v; want hello", p, err)
	}
	for _, nc := range conns {
		if err := nc.SetReadDeadline(time.Now().Add(15 * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var notClosed atomic.Int64
	for _, nc := range conns {
		wg.Add(1)
		go func(nc net.Conn) {
			defer wg.Done()
			_, err := io.Copy(io.Discard, nc)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				notClosed.Add(1)
			}
		}(nc)
	}
	wg.Wait()
	if n := notClosed.Load(); n != 0 {
		t.Fatalf("%d slow handshakes were not closed by the server", n)
	}
	if n := rec.opens.Load(); n != 1 {
		t.Fatalf("opens = %d; want 1", n)
	}
}

func TestOriginAndHeaderLimit(t *testing.T) {
	cfg := testConfig()
	cfg.CheckOrigin = func(o []byte) bool { return string(o) == "https://good.example" }
	cfg.MaxHeaderBytes = 1024
	s := startServer(t, cfg, Handler{})
	try := func(extra string) string {
		nc, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		req := "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" +
			"Sec-WebSocket-Extensions: permessage-deflate\r\n" + extra + "\r\n"
		nc.Write([]byte(req))
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		var resp []byte
		buf := make([]byte, 512)
		for !contains(string(resp), "\r\n\r\n") {
			n, err := nc.Read(buf)
			resp = append(resp, buf[:n]...)
			if err != nil {
				break
			}
		}
		return string(resp)
	}
	if got := try("Origin: https://good.example\r\n"); !contains(got, " 101 ") || contains(got, "deflate") {
		t.Fatalf("good origin: got %q; want 101 without deflate", got)
	}
	if got := try("Origin: https://evil.example\r\n"); !contains(got, " 403 ") {
		t.Fatalf("bad origin: got %q; want 403", got)
	}
	big := ""
	for i := 0; i < 40; i++ {
		big += "X-Pad: 0123456789012345678901234567890123456789\r\n"
	}
	if got := try(big); contains(got, " 101 ") {
		t.Fatalf("oversized request: got %q; want refusal", got)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestInteropCoderWebsocket(t *testing.T) { writePaths(t, testInteropCoderWebsocket) }

func testInteropCoderWebsocket(t *testing.T, base Config) {
	rec := newRecorder()
	s := startServer(t, base, rec.handler(true))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+s.Addr().String()+"/", &websocket.DialOptions{CompressionMode: websocket.CompressionContextTakeover})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// Binary both ways.
	if err := c.Write(ctx, websocket.MessageBinary, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if typ, p, err := c.Read(ctx); err != nil || typ != websocket.MessageBinary || string(p) != "abc" {
		t.Fatalf("read = %v %q %v; want binary abc", typ, p, err)
	}
	// A fragmented message through the Writer API.
	w, err := c.Writer(ctx, websocket.MessageBinary)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"frag-1/", "frag-2/", "frag-3"} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, p, err := c.Read(ctx); err != nil || string(p) != "frag-1/frag-2/frag-3" {
		t.Fatalf("read = %q %v; want the reassembled message", p, err)
	}
	// Ping needs a concurrent reader to see the pong.
	readErr := make(chan error, 1)
	go func() {
		_, _, err := c.Read(ctx)
		readErr <- err
	}()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if err := c.Close(websocket.StatusCode(4001), "bye"); err != nil {
		t.Fatalf("close: %v", err)
	}
	<-readErr
	waitFor(t, "OnClose", func() bool { return rec.closes.Load() == 1 })
	for _, errs := range rec.errs {
		var ce *CloseError
		if len(errs) != 1 || !errors.As(errs[0], &ce) || ce.Code != 4001 || ce.Reason != "bye" {
			t.Fatalf("OnClose errors = %v; want one CloseError 4001 bye", errs)
		}
	}
}

// snapshotHost builds one shared set of chunks per round and hands every
// peer a Frame pointing into it, as the area host does.
type snapshotHost struct {
	freed  atomic.Int64
	handed atomic.Int64
}

func (h *snapshotHost) round(conns []*Conn, chunk []byte) {
	sh := NewShared(func(*Shared) { h.freed.Add(1) })
	sh.Bufs = append(sh.Bufs[:0], chunk)
	for _, c := range conns {
		f := NewFrame()
		f.Buf = binary.BigEndian.AppendUint64(f.Buf[:0], c.ID())
		f.Parts = append(f.Parts, f.Buf, chunk, chunk)
		f.Attach(sh)
		h.handed.Add(1)
		c.SendVolatile(f)
	}
	sh.Release()
}

func TestSlowReaderDoesNotDelayFastReaders(t *testing.T) {
	writePaths(t, testSlowReaderDoesNotDelayFastReaders)
}

func testSlowReaderDoesNotDelayFastReaders(t *testing.T, base Config) {
	cfg := base
	cfg.CloseTimeout = 200 * time.Millisecond
	rec := newRecorder()
	s := startServer(t, cfg, rec.handler(false))
	const fast = 4
	const rounds = 200
	var clients []*ClientConn
	for i := 0; i < fast; i++ {
		c, err := Dial(context.Background(), "ws://"+s.Addr().String()+"/")
		if err != nil {
			t.Fatal(err)
		}
		defer c.NetConn().Close()
		clients = append(clients, c)
	}
	slow := dialRaw(t, s) // never reads
	_ = slow
	waitFor(t, "opens", func() bool { return rec.opens.Load() == fast+1 })
	rec.mu.Lock()
	var conns []*Conn
	for _, c := range rec.conns {
		conns = append(conns, c)
	}
	rec.mu.Unlock()

	chunk := pattern(16 << 10) // 32 KiB per frame: the slow peer's socket fills quickly
	host := &snapshotHost{}
	var got atomic.Int64
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func(c *ClientConn) {
			defer wg.Done()
			for {
				p, err := c.ReadMessage()
				if err != nil {
					return
				}
				if len(p) != 8+2*len(chunk) {
					t.Errorf("frame of %d bytes; want %d", len(p), 8+2*len(chunk))
					return
				}
				got.Add(1)
			}
		}(c)
	}
	// Rounds pace themselves on the fast readers: each fast reader gets the
	// round's frame (or a later one) before the next round starts.
	for r := 1; r <= rounds; r++ {
		host.round(conns, chunk)
		want := int64(r * fast)
		waitFor(t, "fast readers", func() bool { return got.Load() >= want-int64(fast) })
	}
	waitFor(t, "last round", func() bool { return got.Load() >= int64(rounds*fast-fast) })
	s.Close()
	wg.Wait()
	waitFor(t, "all frames released", func() bool { return host.freed.Load() == rounds })
	if n := rec.closes.Load(); n != fast+1 {
		t.Fatalf("closes = %d; want %d", n, fast+1)
	}
}

// TestFrameReleaseAccounting: every Frame given to SendVolatile is released
// exactly once, whether written, replaced or dropped at close.
func TestFrameReleaseAccounting(t *testing.T) { writePaths(t, testFrameReleaseAccounting) }

func testFrameReleaseAccounting(t *testing.T, base Config) {
	rec := newRecorder()
	s := startServer(t, base, rec.handler(false))
	const peers = 6
	var readers []*ClientConn
	for i := 0; i < peers; i++ {
		c, err := Dial(context.Background(), "ws://"+s.Addr().String()+"/")
		if err != nil {
			t.Fatal(err)
		}
		readers = append(readers, c)
		if i%2 == 0 { // half read, half never do
			go func() {
				for {
					if _, err := c.ReadMessage(); err != nil {
						return
					}
				}
			}()
		}
	}
	waitFor(t, "opens", func() bool { return rec.opens.Load() == peers })
	rec.mu.Lock()
	var conns []*Conn
	for _, c := range rec.conns {
		conns = append(conns, c)
	}
	rec.mu.Unlock()
	var freed atomic.Int64
	chunk := pattern(4 << 10)
	var handed int64
	for r := 0; r < 300; r++ {
		for i, c := range conns {
			sh := NewShared(func(*Shared) { freed.Add(1) }) // one per frame: counts exact releases
			f := NewFrame()
			f.Parts = append(f.Parts, chunk)
			f.Attach(sh)
			sh.Release()
			handed++
			c.SendVolatile(f)
			if r == 150 && i == 0 {
				readers[1].NetConn().Close() // a peer dies mid-stream
			}
		}
	}
	s.Close()
	// Frames after close are released at once.
	sh := NewShared(func(*Shared) { freed.Add(1) })
	f := NewFrame()
	f.Attach(sh)
	sh.Release()
	handed++
	conns[0].SendVolatile(f)
	if got := freed.Load(); got != handed {
		t.Fatalf("released %d frames; want %d", got, handed)
	}
	for id := range rec.conns {
		if n := len(rec.closeErrs(id)); n != 1 {
			t.Fatalf("conn %d: OnClose ran %d times; want 1", id, n)
		}
	}
}

func TestDeadPeerAndSlowConsumer(t *testing.T) { writePaths(t, testDeadPeerAndSlowConsumer) }

func testDeadPeerAndSlowConsumer(t *testing.T, base Config) {
	cfg := base
	cfg.ReliableQueueLimit = 256 << 10
	rec := newRecorder()
	s := startServer(t, cfg, rec.handler(false))

	// Dead peer: the client drops TCP without a close frame.
	c := dialRaw(t, s)
	waitFor(t, "open", func() bool { return rec.opens.Load() == 1 })
	c.Conn.(*net.TCPConn).SetLinger(0)
	c.Close()
	waitFor(t, "OnClose for dead peer", func() bool { return rec.closes.Load() == 1 })

	// Slow consumer: a peer that never reads overflows its reliable queue.
	slow := dialRaw(t, s)
	_ = slow
	waitFor(t, "open", func() bool { return rec.opens.Load() == 2 })
	var sc *Conn
	rec.mu.Lock()
	for _, cc := range rec.conns {
		if cc.ID() == 2 {
			sc = cc
		}
	}
	rec.mu.Unlock()
	msg := pattern(8 << 10)
	var sendErr error
	for i := 0; i < 100_000 && sendErr == nil; i++ {
		sendErr = sc.Send(msg)
	}
	if !errors.Is(sendErr, ErrSlowConsumer) {
		t.Fatalf("Send error = %v; want ErrSlowConsumer", sendErr)
	}
	waitFor(t, "OnClose for slow consumer", func() bool { return rec.closes.Load() == 2 })
	if errs := rec.closeErrs(2); len(errs) != 1 || !errors.Is(errs[0], ErrSlowConsumer) {
		t.Fatalf("slow consumer OnClose errors = %v; want [ErrSlowConsumer]", errs)
	}
	if errs := rec.closeErrs(1); len(errs) != 1 || !errors.Is(errs[0], ErrPeerGone) {
		t.Fatalf("dead peer OnClose errors = %v; want [ErrPeerGone]", errs)
	}
	if err := sc.Send(msg); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after close = %v; want ErrClosed", err)
	}
}

func TestServerCloseAndConnClose(t *testing.T) { writePaths(t, testServerCloseAndConnClose) }

func testServerCloseAndConnClose(t *testing.T, base Config) {
	rec := newRecorder()
	s := startServer(t, base, rec.handler(true))
	c, err := Dial(context.Background(), "ws://"+s.Addr().String()+"/")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "open", func() bool { return rec.opens.Load() == 1 })
	if err := c.WriteMessage([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if p, err := c.ReadMessage(); err != nil || string(p) != "x" {
		t.Fatalf("echo = %q %v", p, err)
	}
	rec.mu.Lock()
	sc := rec.conns[1]
	rec.mu.Unlock()
	sc.SetValue("session")
	if v := sc.Value(); v != "session" {
		t.Fatalf("Value = %v", v)
	}
	sc.Close(4000, "done")
	_, err = c.ReadMessage()
	var ce *CloseError
	if !errors.As(err, &ce) || ce.Code != 4000 || ce.Reason != "done" {
		t.Fatalf("ReadMessage = %v; want CloseError 4000 done", err)
	}
	waitFor(t, "OnClose", func() bool { return rec.closes.Load() == 1 })
	if errs := rec.closeErrs(1); len(errs) != 1 || errs[0] != nil {
		t.Fatalf("OnClose errors = %v; want [nil]", errs)
	}
}

// TestFrameDelivered: Delivered reports the round of a frame once it is
// written whole, and never the round of a frame a slow reader never got.
func TestFrameDelivered(t *testing.T) { writePaths(t, testFrameDelivered) }

func testFrameDelivered(t *testing.T, base Config) {
	rec := newRecorder()
	s := startServer(t, base, rec.handler(false))
	fast, err := Dial(context.Background(), "ws://"+s.Addr().String()+"/")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			if _, err := fast.ReadMessage(); err != nil {
				return
			}
		}
	}()
	slow := dialRaw(t, s) // never reads
	_ = slow
	waitFor(t, "opens", func() bool { return rec.opens.Load() == 2 })
	rec.mu.Lock()
	var conns []*Conn
	for _, c := range rec.conns {
		conns = append(conns, c)
	}
	rec.mu.Unlock()
	delivered := make([]atomic.Uint64, len(conns))
	fastIdx, slowIdx := 0, 1
	if conns[1].RemoteAddr().String() == fast.NetConn().LocalAddr().String() {
		fastIdx, slowIdx = 1, 0
	}
	chunk := pattern(64 << 10)
	const rounds = 400 // 25 MiB: more than loopback socket buffers hold
	for r := uint64(1); r <= rounds; r++ {
		for i, c := range conns {
			f := NewFrame()
			f.Parts = append(f.Parts, chunk)
			f.Delivered, f.Round = &delivered[i], r
			c.SendVolatile(f)
		}
		// Pace on the fast reader, so the slow one's socket fills for real.
		waitFor(t, "fast reader's frame", func() bool { return delivered[fastIdx].Load() == r })
	}
	waitFor(t, "the fast reader's last frame delivered", func() bool { return delivered[fastIdx].Load() == rounds })
	if got := delivered[slowIdx].Load(); got == rounds {
		t.Fatalf("slow reader: delivered = %d; the last frame cannot have been written", got)
	}
}

// TestPerAddressCapsShedTheCrowder: one address holding its share of
// handshakes in progress (and of connections) has its next connections
// closed at accept, while another address still gets in at once; a
// finished handshake frees its slot for a connection slot, and a closed
// connection frees that.
func TestPerAddressCapsShedTheCrowder(t *testing.T) {
	cfg := testConfig()
	cfg.MaxHandshakesPerAddr, cfg.MaxConnsPerAddr = 4, 6
	cfg.HandshakeTimeout = 10 * time.Second
	rec := newRecorder()
	s := startServer(t, cfg, rec.handler(true))
	crowder := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 30, 1)}}
	var held []net.Conn
	for range 4 { // half-open: an unfinished request each
		nc, err := crowder.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		if _, err := nc.Write([]byte("GET / HTTP/1.1\r\n")); err != nil {
			t.Fatal(err)
		}
		held = append(held, nc)
	}
	waitFor(t, "four handshakes in progress", func() bool {
		s.addrMu.Lock()
		defer s.addrMu.Unlock()
		u := s.addrs[netip.MustParseAddr("127.0.30.1")]
		return u != nil && u.handshakes == 4
	})
	// The fifth from the crowder is shed at accept: answered 503 with
	// Retry-After (not a bare close a client cannot tell from a broken
	// network), then closed.
	nc, err := crowder.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write([]byte("GET /ws HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	answer, err := io.ReadAll(nc)
	if isTimeout(err) {
		t.Fatalf("the crowder's fifth connection stayed open: %v", err)
	}
	if !strings.HasPrefix(string(answer), "HTTP/1.1 503 ") || !strings.Contains(string(answer), "Retry-After: 1\r\n") ||
		!strings.Contains(string(answer), "too many connections from your address") {
		t.Fatalf("the crowder's fifth connection was answered %q; want 503 with Retry-After saying why", answer)
	}
	nc.Close()
	if s.Refused() == 0 {
		t.Fatal("Refused() = 0 after shedding")
	}
	// Another address gets in meanwhile.
	c := dialRaw(t, s)
	c.send(t, bin([]byte("hi")))
	if _, p, err := c.next(); err != nil || string(p) != "hi" {
		t.Fatalf("a player from another address: %q, %v; want an echo", p, err)
	}
	// The crowder's handshakes end (closed): its slots come back.
	for _, nc := range held {
		nc.Close()
	}
	waitFor(t, "the crowder's slots released", func() bool {
		s.addrMu.Lock()
		defer s.addrMu.Unlock()
		return s.addrs[netip.MustParseAddr("127.0.30.1")] == nil
	})
}

// TestPingFloodIsBounded: a peer that sends pings and never reads the
// pongs holds at most one queued pong, whatever it sends; past the
// control-frame rate it is closed 1008.
func TestPingFloodIsBounded(t *testing.T) {
	cfg := testConfig()
	cfg.PingRate, cfg.PingBurst = 5, 1000
	rec := newRecorder()
	s := startServer(t, cfg, rec.handler(false))
	c := dialRaw(t, s)
	waitFor(t, "open", func() bool { return rec.opens.Load() == 1 })
	rec.mu.Lock()
	conn := rec.conns[1]
	rec.mu.Unlock()
	var out []byte
	for range 900 { // within the burst: all taken, none read
		out = append(out, ping(pattern(125)).bytes()...)
	}
	out = append(out, bin([]byte("after")).bytes()...) // read in order after the pings
	if _, err := c.Write(out); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pings read", func() bool { return rec.msgs.Load() == 1 })
	conn.mu.Lock()
	queued, bytes := len(conn.rq), conn.rqBytes
	conn.mu.Unlock()
	if queued > 2 || bytes > 2*(2+125) {
		t.Fatalf("after 900 unread pings: %d frames, %d bytes queued; want at most 2 pongs", queued, bytes)
	}
	// Past the burst: closed 1008.
	out = out[:0]
	for range 200 {
		out = append(out, ping(nil).bytes()...)
	}
	go c.Write(out)
	waitFor(t, "the flooder closed", func() bool { return rec.closes.Load() == 1 })
	if errs := rec.closeErrs(1); len(errs) != 1 || !errors.Is(errs[0], ErrFlood) {
		t.Fatalf("close errors %v; want ErrFlood", errs)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
