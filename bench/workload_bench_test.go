package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leyworks/ley/area"
	"github.com/leyworks/ley/area/areatest"
	"github.com/leyworks/ley/net/client"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// workload is one host workload of issue 16: Areas x players each, all
// stepping 5 times a second (the movement budget), or standing still
// (idle), everyone seeing radius squares (0: the whole Area), players only
// (no creatures).
type workload struct {
	name           string
	areas, perArea int
	w, h           int
	kind           string
	radius         int
	idle           bool
}

var workloads = []workload{
	{name: "villages", areas: 25, perArea: 20, w: 64, h: 64, kind: "village", radius: 0},
	{name: "homes", areas: 500, perArea: 1, w: 32, h: 32, kind: "home", radius: 0},
	{name: "villages-idle", areas: 25, perArea: 20, w: 64, h: 64, kind: "village", radius: 0, idle: true},
	{name: "homes-idle", areas: 500, perArea: 1, w: 32, h: 32, kind: "home", radius: 0, idle: true},
}

// BenchmarkHostWorkload runs one `ley areahost` process (director: the
// scripted areatest stand-in, acking every snapshot) with a workload of
// issue 16 over real loopback WebSockets; the clients run in this process
// and parse only what they count, so the host's figures, read from /proc
// and perf, are its alone. It reports, over the steady window
// (LEY_WORKLOAD_SECONDS, default 20 s):
//
//   - host CPU per player-second, user and system (µs) from /proc (10 ms
//     ticks, so the split is coarse), and % of a core; task-µs/player-s is
//     the same total from perf's task-clock, exact;
//   - syscalls per player-second (perf's raw_syscalls tracepoint), and
//     writev, read, epoll_pwait, futex and nanosleep ones;
//   - bytes and frames per client per second received (payload and
//     WebSocket frame headers);
//   - the snapshot gap's p50 and p99 as clients saw them, less the rounds
//     that sent nothing (a round with nothing new for a session sends no
//     snapshot; the ticks say how many passed);
//   - the host's RSS at the end of the window, per player (the whole
//     process's: its runtime, Areas, connections and GC headroom).
//
// The -idle workloads are the same players standing still: what a player
// costs who is connected and does nothing.
//
// LEY_WORKLOAD_CPUPROFILE=dir also saves the host's CPU profile over the
// window as dir/<workload>.pprof (go tool pprof -top <file>);
// LEY_WORKLOAD_HEAPPROFILE=dir its heap profile after the window as
// dir/<workload>.heap. LEY_WORKLOAD_WRITEV=1 runs the host with --writev
// (each connection written with its own writev, not the loop's io_uring
// batch).
//
// go test -run '^$' -bench HostWorkload -benchtime 1x ./bench/
func BenchmarkHostWorkload(b *testing.B) {
	hold := secondsFromEnv(b, "LEY_WORKLOAD_SECONDS", 20*time.Second)
	raiseNoFile(b, 8192)
	bin := buildBinary(b, "../cmd/ley", "ley")
	for _, wl := range workloads {
		b.Run(fmt.Sprintf("%s/areas=%d/per=%d/radius=%d", wl.name, wl.areas, wl.perArea, wl.radius), func(b *testing.B) {
			for b.Loop() {
				runWorkload(b, bin, wl, hold)
			}
		})
	}
}

func runWorkload(b *testing.B, bin string, wl workload, hold time.Duration) {
	d, err := areatest.New()
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	d.AutoAck.Store(true)
	profileDir, heapDir := os.Getenv("LEY_WORKLOAD_CPUPROFILE"), os.Getenv("LEY_WORKLOAD_HEAPPROFILE")
	pprofAddr := ""
	if profileDir != "" || heapDir != "" {
		pprofAddr = freeLoopbackAddr(b)
	}
	host := exec.Command(bin, "areahost", "--director", d.Addr(), "--listen", "127.0.0.1:0", "--log-level", "warn",
		"--pool-size", strconv.Itoa(wl.areas), "--interest-radius", strconv.Itoa(wl.radius), "--max-conns-per-addr", "100000",
		"--max-handshakes-per-addr", "1000", "--pprof", pprofAddr)
	if os.Getenv("LEY_WORKLOAD_WRITEV") != "" {
		host.Args = append(host.Args, "--writev")
	}
	host.Env = append(os.Environ(), "LEY_SPAWN_TOKEN=bench")
	host.Stderr = os.Stderr
	if err := host.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = host.Process.Signal(os.Interrupt); _ = host.Wait() }()
	reg, err := d.Registered(10 * time.Second)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var players []*loadPlayer
	for a := 1; a <= wl.areas; a++ {
		if err := d.SpawnTemplate(uint32(a), wl.w, wl.h, wl.kind, "empty"); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < wl.perArea; i++ {
			acct := uint64(a*1000 + i)
			tok, err := d.Grant(uint32(a), acct, acct, int32(3*(i%20)+1), int32(3*(i/20)+1), time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			p, err := newLoadPlayer(ctx, reg.WSURL, tok, acct)
			if err != nil {
				b.Fatal(err)
			}
			players = append(players, p)
		}
	}
	var wg sync.WaitGroup
	for _, p := range players {
		wg.Add(2)
		go func() { defer wg.Done(); p.read() }()
		go func() {
			defer wg.Done()
			if !wl.idle {
				p.walk(ctx)
			}
		}()
	}
	time.Sleep(3 * time.Second) // every player walking, every view settled
	for _, p := range players {
		p.window()
	}
	pid := host.Process.Pid
	perf := startPerf(b, pid, hold)
	ut0, st0 := procTimes(b, pid)
	wall0 := time.Now()
	if profileDir != "" {
		saveCPUProfile(b, pprofAddr, hold, filepath.Join(profileDir, wl.name+".pprof"))
	} else {
		time.Sleep(hold)
	}
	ut1, st1 := procTimes(b, pid)
	window := time.Since(wall0)
	rssKiB := procRSSKiB(b, pid)
	counts := perf.wait(b)
	if heapDir != "" { // after the measured window: fetching it costs CPU
		saveProfile(b, "http://"+pprofAddr+"/debug/pprof/heap?gc=1", filepath.Join(heapDir, wl.name+".heap"))
	}
	var bytes, frames int64
	var gaps []time.Duration
	for _, p := range players {
		p.mu.Lock()
		bytes += p.bytes
		frames += p.frames
		gaps = append(gaps, p.gaps...)
		p.mu.Unlock()
	}
	cancel()
	for _, p := range players {
		p.c.Close(1000, "done")
	}
	wg.Wait()
	slices.Sort(gaps)
	pct := func(q float64) float64 {
		if len(gaps) == 0 {
			return 0
		}
		return float64(gaps[int(q*float64(len(gaps)-1))].Microseconds()) / 1000
	}
	ps := float64(len(players)) * window.Seconds() // player-seconds
	b.ReportMetric(float64((ut1-ut0).Microseconds())/ps, "user-µs/player-s")
	b.ReportMetric(float64((st1-st0).Microseconds())/ps, "sys-µs/player-s")
	b.ReportMetric(float64((ut1-ut0+st1-st0).Microseconds())/ps, "cpu-µs/player-s")
	b.ReportMetric(100*(ut1-ut0+st1-st0).Seconds()/window.Seconds(), "host-cpu-%")
	b.ReportMetric(float64(bytes)/ps, "B/client-s")
	b.ReportMetric(float64(frames)/ps, "frames/client-s")
	b.ReportMetric(pct(0.5), "gap-p50-ms")
	b.ReportMetric(pct(0.99), "gap-p99-ms")
	b.ReportMetric(float64(rssKiB)/float64(len(players)), "host-rss-KiB/player")
	if counts != nil {
		// perf counts over its own run (hold), nearly the same window.
		pss := float64(len(players)) * hold.Seconds()
		b.ReportMetric(float64(counts["raw_syscalls:sys_enter"])/pss, "syscalls/player-s")
		b.ReportMetric(float64(counts[taskClock])/pss, "task-µs/player-s")
		var parts []string
		for _, k := range perfEvents[1:] {
			parts = append(parts, fmt.Sprintf("%s %.2f", strings.TrimPrefix(k, "syscalls:sys_enter_"), float64(counts[k])/pss))
		}
		b.Logf("%s: %d players; syscalls per player-second: %s", wl.name, len(players), strings.Join(parts, ", "))
	}
}

// loadPlayer steps 5 times a second and counts what it receives, parsing
// only a frame's type (no decoding: the driver's cost stays small).
type loadPlayer struct {
	c   *gate.ClientConn
	rng *rand.Rand
	buf []byte

	head    wire.Snapshot // the last snapshot's head (a short one counts from it); read goroutine
	snapped bool          // a snapshot came; read goroutine

	mu       sync.Mutex
	snap     wire.Snapshot
	last     time.Time
	lastTick uint64
	gaps     []time.Duration
	bytes    int64
	frames   int64
	on       atomic.Bool
}

// The host's default snapshot round: its ticks and its length.
var roundTicks, roundLen = func() (uint64, time.Duration) {
	cfg := area.DefaultConfig()
	return uint64(cfg.SnapshotEvery), time.Second * time.Duration(cfg.SnapshotEvery) / time.Duration(cfg.TickRate)
}()

// gapLessQuiet is the gap between two snapshots ticks apart as the SLO
// counts it (client.GapLessQuiet), at the host's default rates.
func gapLessQuiet(gap time.Duration, ticks uint64) time.Duration {
	return client.GapLessQuiet(gap, ticks, roundTicks, roundLen)
}

func newLoadPlayer(ctx context.Context, url, grant string, join uint64) (*loadPlayer, error) {
	c, err := gate.Dial(ctx, url)
	if err != nil {
		return nil, err
	}
	hello, _ := wire.Encode(&wire.Hello{Grant: grant, JoinID: join, Versions: []uint16{wire.Version}})
	if err := c.WriteMessage(hello); err != nil {
		return nil, err
	}
	for {
		m, err := c.ReadMessage()
		if err != nil {
			return nil, err
		}
		switch t, _ := wire.Peek(m); t {
		case wire.TypeHelloAck:
			return &loadPlayer{c: c, rng: rand.New(rand.NewPCG(join, 7)), buf: make([]byte, 0, 32)}, nil
		case wire.TypeError:
			return nil, fmt.Errorf("hello refused")
		}
	}
}

// window starts the measured window.
func (p *loadPlayer) window() {
	p.mu.Lock()
	p.gaps, p.bytes, p.frames = p.gaps[:0], 0, 0
	p.mu.Unlock()
	p.on.Store(true)
}

func (p *loadPlayer) walk(ctx context.Context) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	in := wire.Intent{Kind: wire.IntentStep}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		in.Seq++
		in.Dir = wire.Dir(p.rng.IntN(8))
		p.buf = wire.AppendIntent(p.buf[:0], &in)
		if p.c.WriteMessage(p.buf) != nil {
			return
		}
	}
}

func (p *loadPlayer) read() {
	for {
		m, err := p.c.ReadMessage()
		if err != nil {
			return
		}
		t, _ := wire.Peek(m)
		snapped := false
		if t == wire.TypeSnapshot {
			var last *wire.Snapshot
			if p.snapped {
				last = &p.head
			}
			snapped = wire.DecodeSnapshotHead(m, last, &p.head) == nil
			p.snapped = p.snapped || snapped
		}
		if !p.on.Load() {
			continue
		}
		now := time.Now()
		n := int64(len(m)) + wsHeaderLen(len(m))
		p.mu.Lock()
		p.bytes += n
		p.frames++
		if snapped {
			p.snap = p.head
			if !p.last.IsZero() && p.snap.Tick > p.lastTick {
				p.gaps = append(p.gaps, gapLessQuiet(now.Sub(p.last), p.snap.Tick-p.lastTick))
			}
			p.last, p.lastTick = now, p.snap.Tick
		}
		p.mu.Unlock()
	}
}

// wsHeaderLen is the size of a server's (unmasked) frame header for n bytes.
func wsHeaderLen(n int) int64 {
	switch {
	case n < 126:
		return 2
	case n <= 0xffff:
		return 4
	}
	return 10
}

// perfEvents are counted by perf stat on the host: every syscall, then the
// ones issue 16 names.
var perfEvents = []string{
	"raw_syscalls:sys_enter",
	"syscalls:sys_enter_writev", "syscalls:sys_enter_write", "syscalls:sys_enter_read",
	"syscalls:sys_enter_epoll_pwait", "syscalls:sys_enter_futex", "syscalls:sys_enter_nanosleep",
}

// taskClock is the CPU time perf stat counts for the process, in µs: exact,
// where /proc's user and system times move in 10 ms ticks.
const taskClock = "task-clock"

// perfRun is a perf stat attached to a process for a while.
type perfRun struct {
	cmd *exec.Cmd
	out *os.File
}

// startPerf counts perfEvents on pid for d; nil if perf is not there.
func startPerf(b *testing.B, pid int, d time.Duration) *perfRun {
	path, err := exec.LookPath("perf")
	if err != nil {
		b.Logf("no perf: syscalls not counted")
		return nil
	}
	out, err := os.CreateTemp(b.TempDir(), "perf")
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(path, "stat", "-x,", "-o", out.Name(), "-e", strings.Join(append([]string{taskClock}, perfEvents...), ","), "-p", strconv.Itoa(pid), "--", "sleep", strconv.Itoa(int(d.Seconds())))
	if err := cmd.Start(); err != nil {
		b.Logf("perf: %v", err)
		return nil
	}
	return &perfRun{cmd: cmd, out: out}
}

// wait returns the counts by event name (task-clock in µs).
func (r *perfRun) wait(b *testing.B) map[string]int64 {
	if r == nil {
		return nil
	}
	if err := r.cmd.Wait(); err != nil {
		b.Logf("perf: %v", err)
		return nil
	}
	data, err := os.ReadFile(r.out.Name())
	if err != nil {
		b.Fatal(err)
	}
	counts := map[string]int64{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 {
			continue
		}
		if f[2] == taskClock { // milliseconds, with decimals
			ms, err := strconv.ParseFloat(f[0], 64)
			if err == nil {
				counts[taskClock] = int64(ms * 1000)
			}
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		counts[f[2]] = n
	}
	return counts
}

// procTimes is a process's user and system CPU time from /proc/<pid>/stat.
func procTimes(b *testing.B, pid int) (user, sys time.Duration) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut) * time.Second / 100, time.Duration(st) * time.Second / 100 // USER_HZ is 100
}

// freeLoopbackAddr returns a loopback address no one listens on now.
func freeLoopbackAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// saveCPUProfile fetches a CPU profile of d from the host's /debug/pprof
// at addr and writes it to path.
func saveCPUProfile(b *testing.B, addr string, d time.Duration, path string) {
	saveProfile(b, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds())), path)
	b.Logf("host CPU profile: %s", path)
}

// saveProfile fetches the profile at url and writes it to path.
func saveProfile(b *testing.B, url, path string) {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatalf("profile: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("profile %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		b.Fatalf("profile %s: %v", url, err)
	}
}
