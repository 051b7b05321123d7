//go:build linux

package gate

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSendVolatileAllocs demands 0 allocations for the steady-state
// SendVolatile + writev + release path (a pooled Frame over a rearmed
// Shared), with a peer that reads everything.
func TestSendVolatileAllocs(t *testing.T) { writePaths(t, testSendVolatileAllocs) }

func testSendVolatileAllocs(t *testing.T, base Config) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	rec := newRecorder()
	s := startServer(t, base, rec.handler(false))
	c := dialRaw(t, s)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}()
	waitFor(t, "open", func() bool { return rec.opens.Load() == 1 })
	rec.mu.Lock()
	conn := rec.conns[1]
	rec.mu.Unlock()

	freed := make(chan struct{}, 1)
	onFree := func(*Shared) { freed <- struct{}{} }
	sh := NewShared(onFree)
	sh.Bufs = append(sh.Bufs, pattern(400))
	sh.Release()
	<-freed
	step := func() {
		sh.Rearm()
		f := NewFrame()
		f.Buf = append(f.Buf[:0], 1, 2, 3, 4)
		f.Parts = append(f.Parts, f.Buf, sh.Bufs[0])
		f.Attach(sh)
		conn.SendVolatile(f)
		sh.Release()
		<-freed // blocking, so the runtime polls the network and the loop writes
	}
	for i := 0; i < 100; i++ { // warm pools
		step()
	}
	if allocs := testing.AllocsPerRun(500, step); allocs != 0 {
		t.Fatalf("SendVolatile+write allocs = %v; want 0", allocs)
	}
}

func BenchmarkSendVolatile(b *testing.B) {
	rec := newRecorder()
	s := startServer(b, testConfig(), rec.handler(false))
	c := dialRaw(b, s)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}()
	waitFor(b, "open", func() bool { return rec.opens.Load() == 1 })
	rec.mu.Lock()
	conn := rec.conns[1]
	rec.mu.Unlock()
	freed := make(chan struct{}, 1)
	sh := NewShared(func(*Shared) { freed <- struct{}{} })
	sh.Bufs = append(sh.Bufs, pattern(400))
	sh.Release()
	<-freed
	b.ReportAllocs()
	for b.Loop() {
		sh.Rearm()
		f := NewFrame()
		f.Parts = append(f.Parts, sh.Bufs[0])
		f.Attach(sh)
		conn.SendVolatile(f)
		sh.Release()
		<-freed
	}
}

func vmRSS(t testing.TB) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

func raiseNoFile(t testing.TB, n uint64) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < n {
		lim.Cur = min(n, lim.Max)
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			t.Skipf("cannot raise RLIMIT_NOFILE: %v", err)
		}
	}
	if lim.Cur < n {
		t.Skipf("RLIMIT_NOFILE max %d < %d", lim.Max, n)
	}
}

// TestIdleConnClient is the child side of BenchmarkIdleConnRSS (this test
// binary re-executed); run alone it does nothing.
func TestIdleConnClient(t *testing.T) {
	if addr := os.Getenv("GATE_IDLE_CLIENT_ADDR"); addr != "" {
		idleClient(t, addr)
	}
}

// BenchmarkIdleConnRSS opens 10,000 idle connections from a child process
// (this test binary re-executed) and reports the server process's RSS
// growth per connection (bytes/conn). One iteration is the whole run:
// go test -run '^$' -bench IdleConnRSS -benchtime 1x ./net/gate/
func BenchmarkIdleConnRSS(b *testing.B) {
	for b.Loop() {
		idleConnRSS(b)
	}
}

func idleConnRSS(t testing.TB) {
	const n = 10_000
	raiseNoFile(t, n+1000)
	rec := newRecorder()
	cfg := testConfig()
	cfg.MaxConnsPerAddr, cfg.MaxHandshakesPerAddr = n+100, 1000 // one client address on purpose
	s := startServer(t, cfg, rec.handler(false))
	runtime.GC()
	debug.FreeOSMemory()
	before := vmRSS(t)

	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleConnClient$")
	cmd.Env = append(os.Environ(), "GATE_IDLE_CLIENT_ADDR="+s.Addr().String(), "GATE_IDLE_CLIENT_N="+strconv.Itoa(n))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	ready := bufio.NewScanner(stdout)
	for ready.Scan() && !bytes.Contains(ready.Bytes(), []byte("READY")) {
	}
	waitFor(t, "10k opens", func() bool { return rec.opens.Load() == n })
	runtime.GC()
	debug.FreeOSMemory()
	after := vmRSS(t)
	per := float64(after-before) / n
	if b, ok := t.(*testing.B); ok {
		b.ReportMetric(per, "bytes/conn")
	}
	t.Logf("idle connections: %d; server RSS %d -> %d KiB; %.0f bytes per idle connection", n, before>>10, after>>10, per)
}

func idleClient(t *testing.T, addr string) {
	n, _ := strconv.Atoi(os.Getenv("GATE_IDLE_CLIENT_N"))
	raiseNoFile(t, uint64(n)+1000)
	conns := make([]net.Conn, 0, n)
	req := []byte("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	buf := make([]byte, 1024)
	for i := 0; i < n; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		if _, err := nc.Write(req); err != nil {
			t.Fatal(err)
		}
		var got []byte
		for !bytes.Contains(got, []byte("\r\n\r\n")) {
			m, err := nc.Read(buf)
			if err != nil {
				t.Fatalf("handshake %d: %v", i, err)
			}
			got = append(got, buf[:m]...)
		}
		conns = append(conns, nc)
	}
	fmt.Println("READY")
	os.Stdin.Read(buf) // until the parent closes stdin
	for _, c := range conns {
		c.Close()
	}
}
