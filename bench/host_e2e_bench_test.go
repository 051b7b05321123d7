package bench

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leyworks/ley/area/areatest"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// BenchmarkHostEndToEnd: one `ley areahost` process, 20 Areas x 20 players
// over real loopback WebSockets, every player stepping 5 times a second
// (its movement budget), held for LEY_E2E_SECONDS (default 30) after the
// ramp. The director is the scripted areatest stand-in (it acks every
// snapshot); the clients run in this process, so the host's CPU, read
// from /proc, is the host's alone. Reports the median and p99 gap between
// snapshots as clients saw them, stutters (gaps over 250 ms), host CPU %
// of one core, host RSS, and answers per intent.
//
//	go test -run '^$' -bench HostEndToEnd -benchtime 1x ./bench/
func BenchmarkHostEndToEnd(b *testing.B) {
	const areas, perArea = 20, 20
	hold := secondsFromEnv(b, "LEY_E2E_SECONDS", 30*time.Second)
	raiseNoFile(b, 8192)
	bin := buildBinary(b, "../cmd/ley", "ley")
	for b.Loop() {
		d, err := areatest.New()
		if err != nil {
			b.Fatal(err)
		}
		d.AutoAck.Store(true)
		host := exec.Command(bin, "areahost", "--director", d.Addr(), "--listen", "127.0.0.1:0", "--log-level", "warn", "--pool-size", "64", "--max-conns-per-addr", "1000")
		host.Env = append(os.Environ(), "LEY_SPAWN_TOKEN=bench") // ley refuses a spawn token on the command line
		host.Stderr = os.Stderr
		if err := host.Start(); err != nil {
			b.Fatal(err)
		}
		reg, err := d.Registered(10 * time.Second)
		if err != nil {
			b.Fatal(err)
		}
		for a := 1; a <= areas; a++ {
			if err := d.Spawn(uint32(a), 64, 64); err != nil {
				b.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		players := make([]*e2ePlayer, 0, areas*perArea)
		for a := 1; a <= areas; a++ {
			for i := 0; i < perArea; i++ {
				acct := uint64(a*1000 + i)
				tok, err := d.Grant(uint32(a), acct, acct, int32(3*i), int32(3*(i%7)), time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				p, err := newE2EPlayer(ctx, reg.WSURL, tok, acct)
				if err != nil {
					b.Fatal(err)
				}
				players = append(players, p)
			}
		}
		var wg sync.WaitGroup
		for _, p := range players {
			wg.Add(1)
			go func() { defer wg.Done(); p.run(ctx) }()
		}
		time.Sleep(2 * time.Second) // ramp: every player walking
		for _, p := range players {
			p.reset()
		}
		cpu0, wall0 := procCPU(b, host.Process.Pid), time.Now()
		time.Sleep(hold)
		cpu1, wall1 := procCPU(b, host.Process.Pid), time.Now()
		rss := procRSSKiB(b, host.Process.Pid)
		var gaps []time.Duration
		for _, p := range players {
			p.mu.Lock()
			gaps = append(gaps, p.gaps...)
			p.lastInWindow = p.seq
			p.mu.Unlock()
		}
		time.Sleep(2 * time.Second) // let the window's last intents be answered
		var sent, answered, stutters int
		for _, p := range players {
			p.mu.Lock()
			sent += int(p.lastInWindow - p.firstInWindow + 1)
			for s := p.firstInWindow; s <= p.lastInWindow; s++ {
				if p.rejected[s] || s <= p.acked {
					answered++
				}
			}
			p.mu.Unlock()
		}
		cancel()
		wg.Wait()
		host.Process.Signal(os.Interrupt)
		host.Wait()
		d.Close()
		for _, g := range gaps {
			if g > 250*time.Millisecond {
				stutters++
			}
		}
		slices.Sort(gaps)
		pct := func(q float64) float64 {
			if len(gaps) == 0 {
				return 0
			}
			return float64(gaps[int(q*float64(len(gaps)-1))].Microseconds()) / 1000
		}
		b.ReportMetric(pct(0.5), "gap-p50-ms")
		b.ReportMetric(pct(0.99), "gap-p99-ms")
		b.ReportMetric(100*float64(stutters)/float64(max(len(gaps), 1)), "stutter-%")
		b.ReportMetric(100*(cpu1-cpu0).Seconds()/wall1.Sub(wall0).Seconds(), "host-cpu-%")
		b.ReportMetric(float64(rss)/1024, "host-rss-MiB")
		b.ReportMetric(float64(answered)/float64(max(sent, 1)), "answers/intent")
		b.ReportMetric(float64(len(players)), "players")
	}
}

// e2ePlayer is one simulated client: it steps at its budget and records the
// gaps between snapshots and the answers to its intents.
type e2ePlayer struct {
	c   *gate.ClientConn
	rng *rand.Rand

	mu            sync.Mutex
	last          time.Time
	gaps          []time.Duration
	seq           uint32
	firstInWindow uint32 // the window's intents are seqs first..last
	lastInWindow  uint32
	acked         uint32          // the highest ack_seq seen: every seq up to it not rejected was applied
	rejected      map[uint32]bool // seqs answered by intent_result
}

func newE2EPlayer(ctx context.Context, url, grant string, join uint64) (*e2ePlayer, error) {
	c, err := gate.Dial(ctx, url)
	if err != nil {
		return nil, err
	}
	hello, _ := wire.Encode(&wire.Hello{Grant: grant, JoinID: join, Versions: []uint16{wire.Version}})
	if err := c.WriteMessage(hello); err != nil {
		return nil, err
	}
	for {
		b, err := c.ReadMessage()
		if err != nil {
			return nil, err
		}
		m, err := wire.Decode(b)
		if err != nil {
			return nil, err
		}
		switch m := m.(type) {
		case *wire.HelloAck:
			return &e2ePlayer{c: c, rng: rand.New(rand.NewPCG(join, 7)), rejected: map[uint32]bool{}}, nil
		case *wire.Error:
			return nil, fmt.Errorf("hello refused: %v %s", m.Code, m.Detail)
		}
	}
}

func (p *e2ePlayer) reset() {
	p.mu.Lock()
	p.gaps = p.gaps[:0]
	p.firstInWindow = p.seq + 1
	p.mu.Unlock()
}

func (p *e2ePlayer) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		p.c.Close(1000, "done")
	}()
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			p.mu.Lock()
			p.seq++
			seq := p.seq
			p.mu.Unlock()
			b, _ := wire.Encode(&wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: wire.Dir(p.rng.IntN(8))})
			if p.c.WriteMessage(b) != nil {
				return
			}
		}
	}()
	var st wire.Stream // this connection's
	for {
		b, err := p.c.ReadMessage()
		if err != nil {
			return
		}
		m, err := st.Decode(b)
		if err != nil {
			return
		}
		now := time.Now()
		p.mu.Lock()
		switch m := m.(type) {
		case *wire.Snapshot:
			if !p.last.IsZero() {
				p.gaps = append(p.gaps, now.Sub(p.last))
			}
			p.last = now
			p.acked = max(p.acked, m.AckSeq)
		case *wire.IntentResult:
			p.rejected[m.Seq] = true
		}
		p.mu.Unlock()
	}
}

// procCPU is a process's user+system CPU time from /proc/<pid>/stat.
func procCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

// procRSSKiB is a process's resident set from /proc/<pid>/status.
func procRSSKiB(b *testing.B, pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}
