package bench

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkFloor measures the physical floor of issue 16 (bench/floorserver:
// the least CPU this machine's kernel and a minimal user space need to move
// a workload's bytes), so that ley's cost per player-second can be stated
// as a multiple of it. The clients are the same as BenchmarkHostWorkload's
// in shape: a 16-byte message (a masked intent frame's size) 5 times a
// second each; the server writes each of them a frame of the size ley's
// snapshots have on that workload, as often as ley sends them.
//
// Each workload runs twice: writes=write, one write(2) per frame, and
// writes=uring, each round's frames in io_uring submissions of 256 (the
// floor of a batched server, as ley's gate is by default).
//
// go test -run '^$' -bench Floor -benchtime 1x ./bench/
func BenchmarkFloor(b *testing.B) {
	hold := secondsFromEnv(b, "LEY_WORKLOAD_SECONDS", 20*time.Second)
	raiseNoFile(b, 8192)
	bin := buildBinary(b, "./floorserver", "floorserver")
	// Frame sizes: ley's bytes per client-second on the workload over its
	// frames per client-second (BenchmarkHostWorkload, bench/RESULTS.md).
	// A round with nothing new for a session sends it nothing: a home's
	// player steps 5 times a second and is alone, so its frames come 5
	// times a second (every 2nd round); a village's come 5.6-8 times a
	// second (its players' steps bunch in half the rounds), 47 bytes each:
	// the floor writes 5 of them, a little less than ley moves.
	for _, wl := range []struct {
		name         string
		players      int
		frame, every int
	}{
		{"villages", 500, 47, 2},
		{"homes", 500, 17, 2},
	} {
		for _, writes := range []string{"write", "uring"} {
			b.Run(fmt.Sprintf("%s/players=%d/frame=%dB/every=%d/writes=%s", wl.name, wl.players, wl.frame, wl.every, writes), func(b *testing.B) {
				for b.Loop() {
					runFloor(b, bin, wl.players, wl.frame, wl.every, writes == "uring", hold)
				}
			})
		}
	}
}

func runFloor(b *testing.B, bin string, players, frame, every int, batched bool, hold time.Duration) {
	cmd := exec.Command(bin, "-frame", strconv.Itoa(frame), "-every", strconv.Itoa(every))
	if batched {
		cmd.Args = append(cmd.Args, "-uring")
	}
	cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	var addr string
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "FLOOR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		b.Fatal("the floor server did not start")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var conns []net.Conn
	for i := range players {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 70, byte(i/32), 1)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		wg.Add(2)
		go func() { // reader
			defer wg.Done()
			buf := make([]byte, 4096)
			for {
				if _, err := c.Read(buf); err != nil {
					return
				}
			}
		}()
		go func() { // writer: a 16-byte message 5 times a second
			defer wg.Done()
			msg := make([]byte, 16)
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			time.Sleep(time.Duration(rng.Int64N(int64(200 * time.Millisecond))))
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				if _, err := c.Write(msg); err != nil {
					return
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	pid := cmd.Process.Pid
	perf := startPerf(b, pid, hold)
	ut0, st0 := procTimes(b, pid)
	wall0 := time.Now()
	time.Sleep(hold)
	ut1, st1 := procTimes(b, pid)
	window := time.Since(wall0)
	counts := perf.wait(b)
	cancel()
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()
	ps := float64(players) * window.Seconds()
	b.ReportMetric(float64((ut1-ut0).Microseconds())/ps, "user-µs/player-s")
	b.ReportMetric(float64((st1-st0).Microseconds())/ps, "sys-µs/player-s")
	b.ReportMetric(float64((ut1-ut0+st1-st0).Microseconds())/ps, "cpu-µs/player-s")
	if counts != nil {
		pss := float64(players) * hold.Seconds()
		b.ReportMetric(float64(counts["raw_syscalls:sys_enter"])/pss, "syscalls/player-s")
		b.ReportMetric(float64(counts[taskClock])/pss, "task-µs/player-s")
		var parts []string
		for _, k := range perfEvents[1:] {
			parts = append(parts, fmt.Sprintf("%s %.2f", strings.TrimPrefix(k, "syscalls:sys_enter_"), float64(counts[k])/pss))
		}
		b.Logf("floor: %d players; syscalls per player-second: %s", players, strings.Join(parts, ", "))
	}
}
