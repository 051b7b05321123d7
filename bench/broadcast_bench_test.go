package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
	"github.com/leyworks/ley/net/gate"
	"golang.org/x/sys/unix"
)

const (
	frameBytes  = 400
	broadcastHz = 10
	window      = 3 * time.Second
)

// BenchmarkBroadcastLoopback sends a 400-byte frame 10 times a second to
// 1,000 and 5,000 loopback connections for a 3 s window, with the clients in
// a separate process (bench/internal/wsclients), through net/gate's epoll
// layer (volatile Frames over one Shared chunk per round) and through a
// plain goroutine-per-connection gobwas/ws server (wsutil writes). It
// reports the server process's CPU time (getrusage RUSAGE_SELF, user+sys)
// per frame the clients received, frames/s, and on the goroutines run the
// ratio of its CPU per frame to the epoll run's.
//
//	go test -run '^$' -bench BroadcastLoopback -benchtime 1x -count 3 ./bench/
func BenchmarkBroadcastLoopback(b *testing.B) {
	bin := buildClients(b)
	for _, n := range []int{1000, 5000} {
		var epollCPU float64
		b.Run(fmt.Sprintf("conns=%d/impl=epoll", n), func(b *testing.B) {
			epollCPU = runBroadcast(b, bin, n, newEpollServer)
		})
		b.Run(fmt.Sprintf("conns=%d/impl=goroutines", n), func(b *testing.B) {
			cpu := runBroadcast(b, bin, n, newGoroutineServer)
			if epollCPU > 0 {
				b.ReportMetric(cpu/epollCPU, "cpu-ratio-vs-epoll")
			}
		})
	}
}

// broadcaster is a server under test.
type broadcaster interface {
	addr() string
	conns() int
	broadcast(payload []byte)
	close()
}

func buildClients(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "wsclients")
	cmd := exec.Command("go", "build", "-o", bin, "./internal/wsclients")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("build wsclients: %v", err)
	}
	return bin
}

func raiseNoFile(b *testing.B, n uint64) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	if lim.Cur < n {
		lim.Cur = min(n, lim.Max)
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runBroadcast returns the CPU microseconds per delivered frame of the last
// window.
func runBroadcast(b *testing.B, bin string, n int, start func(b *testing.B) broadcaster) float64 {
	raiseNoFile(b, uint64(n)+2000)
	srv := start(b)
	defer srv.close()
	cmd := exec.Command(bin, "-addr", srv.addr(), "-n", strconv.Itoa(n))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	out := bufio.NewScanner(stdout)
	if !out.Scan() || out.Text() != "READY" {
		b.Fatalf("clients did not start: %q", out.Text())
	}
	deadline := time.Now().Add(30 * time.Second)
	for srv.conns() < n {
		if time.Now().After(deadline) {
			b.Fatalf("server saw %d of %d connections", srv.conns(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	count := func() int64 {
		fmt.Fprintln(stdin)
		if !out.Scan() {
			b.Fatal("clients exited")
		}
		v, _ := strconv.ParseInt(out.Text(), 10, 64)
		return v
	}
	payload := make([]byte, frameBytes)
	var cpuPer float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f0, c0, t0 := count(), cpuTime(), time.Now()
		rounds := int(window / (time.Second / broadcastHz))
		tick := time.NewTicker(time.Second / broadcastHz)
		for r := 0; r < rounds; r++ {
			binary.BigEndian.PutUint32(payload, uint32(r))
			srv.broadcast(payload)
			<-tick.C
		}
		tick.Stop()
		// Let the last round drain (bounded), then read the counters.
		want := f0 + int64(rounds*n)
		for end := time.Now().Add(2 * time.Second); count() < want && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
		c1, t1, f1 := cpuTime(), time.Now(), count()
		frames := f1 - f0
		if frames == 0 {
			b.Fatal("no frames delivered")
		}
		cpuPer = float64((c1 - c0).Microseconds()) / float64(frames)
		b.ReportMetric(cpuPer, "cpu-µs/frame")
		b.ReportMetric(float64(frames)/t1.Sub(t0).Seconds(), "frames/s")
		b.ReportMetric(float64(frames)/float64(rounds*n), "delivered-ratio")
	}
	return cpuPer
}

// epollServer is net/gate: one Shared chunk per round, a pooled Frame per
// peer with an 8-byte per-peer header part.
type epollServer struct {
	s    *gate.Server
	mu   sync.Mutex
	cs   []*gate.Conn
	free chan *gate.Shared
}

func newEpollServer(b *testing.B) broadcaster {
	e := &epollServer{free: make(chan *gate.Shared, 16)}
	cfg := gate.DefaultConfig()
	s, err := gate.Listen(context.Background(), cfg, gate.Handler{
		OnOpen: func(c *gate.Conn) {
			e.mu.Lock()
			e.cs = append(e.cs, c)
			e.mu.Unlock()
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	e.s = s
	return e
}

func (e *epollServer) addr() string { return e.s.Addr().String() }
func (e *epollServer) conns() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.cs)
}
func (e *epollServer) close() { e.s.Close() }

func (e *epollServer) broadcast(payload []byte) {
	var sh *gate.Shared
	select {
	case sh = <-e.free:
		sh.Rearm()
	default:
		sh = gate.NewShared(func(s *gate.Shared) {
			select {
			case e.free <- s:
			default:
			}
		})
	}
	if len(sh.Bufs) == 0 {
		sh.Bufs = append(sh.Bufs, make([]byte, 0, frameBytes))
	}
	sh.Bufs[0] = append(sh.Bufs[0][:0], payload[8:]...) // reused: every peer released it
	e.mu.Lock()
	cs := e.cs
	e.mu.Unlock()
	for _, c := range cs {
		f := gate.NewFrame()
		f.Buf = append(f.Buf[:0], payload[:8]...)
		f.Parts = append(f.Parts, f.Buf, sh.Bufs[0])
		f.Attach(sh)
		c.SendVolatile(f)
	}
	sh.Release()
}

// goroutineServer is the baseline: gobwas/ws upgrade, then a reader and a
// writer goroutine per connection; the writer sends the latest payload
// with wsutil.WriteServerBinary.
type goroutineServer struct {
	ln net.Listener
	mu sync.Mutex
	ch []chan []byte
}

func newGoroutineServer(b *testing.B) broadcaster {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	g := &goroutineServer{ln: ln}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go g.serve(nc)
		}
	}()
	return g
}

func (g *goroutineServer) serve(nc net.Conn) {
	if _, err := ws.Upgrade(nc); err != nil {
		nc.Close()
		return
	}
	ch := make(chan []byte, 1)
	g.mu.Lock()
	g.ch = append(g.ch, ch)
	g.mu.Unlock()
	go func() {
		_, _ = io.Copy(io.Discard, nc)
		nc.Close()
	}()
	for p := range ch {
		if err := wsutil.WriteServerBinary(nc, p); err != nil {
			nc.Close()
			for range ch {
			}
			return
		}
	}
	nc.Close()
}

func (g *goroutineServer) addr() string { return g.ln.Addr().String() }
func (g *goroutineServer) conns() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.ch)
}

func (g *goroutineServer) broadcast(payload []byte) {
	p := append([]byte(nil), payload...) // one shared copy per round
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ch := range g.ch {
		select {
		case ch <- p:
		default: // latest-wins like the volatile slot: skip if one is pending
		}
	}
}

func (g *goroutineServer) close() {
	g.ln.Close()
	g.mu.Lock()
	for _, ch := range g.ch {
		close(ch)
	}
	g.ch = nil
	g.mu.Unlock()
}
