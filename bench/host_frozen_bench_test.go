package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/leyworks/ley/area/areatest"
	"github.com/leyworks/ley/internal/buildtags"
	"github.com/leyworks/ley/net/control"
)

// BenchmarkHostFrozenAreas: how many frozen Areas one `ley areahost`
// process holds, and what each costs. The scripted director makes N 32x32
// home Areas live on one host (nobody joins, so each freezes at once),
// the host parks them (after its --park-after, 10 s by default; the
// figures are taken once its heartbeat counts every Area parked), then
// idles for 10 s: its RSS and CPU, from /proc, are divided by N.
// LEY_FROZEN_PARK_AFTER passes another --park-after (0: never park, the
// frozen Areas keep their worlds). LEY_FROZEN_AREAS sets N (default
// 10,000); LEY_FROZEN_SECONDS the window (default 10: the CPU figure's
// grain is a 10 ms clock tick over the window, 0.1 µs per Area-second at
// the defaults);
// LEY_FROZEN_HEAPPROFILE=file saves the host's heap profile after the
// window, LEY_FROZEN_CPUPROFILE=file its CPU profile over the window (the
// profiler's own cost then counts in the CPU figure): go tool pprof -top
// file.
//
//	go test -run '^$' -bench HostFrozenAreas -benchtime 1x ./bench/
func BenchmarkHostFrozenAreas(b *testing.B) {
	n := 10000
	if s := os.Getenv("LEY_FROZEN_AREAS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("LEY_FROZEN_AREAS=%q: %v", s, err)
		}
	}
	window := 10
	if s := os.Getenv("LEY_FROZEN_SECONDS"); s != "" {
		var err error
		if window, err = strconv.Atoi(s); err != nil || window < 1 {
			b.Fatalf("LEY_FROZEN_SECONDS=%q: want a whole number of seconds, 1 or more", s)
		}
	}
	parkAfter, parks := os.Getenv("LEY_FROZEN_PARK_AFTER"), true
	if parkAfter != "" {
		d, err := time.ParseDuration(parkAfter)
		if err != nil {
			b.Fatalf("LEY_FROZEN_PARK_AFTER=%q: %v", parkAfter, err)
		}
		parks = d > 0
	}
	bin := filepath.Join(b.TempDir(), "ley")
	build := exec.Command("go", "build", "-tags", buildtags.Product, "-o", bin, "../cmd/ley")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		b.Fatalf("build ley: %v", err)
	}
	for b.Loop() {
		d, err := areatest.New()
		if err != nil {
			b.Fatal(err)
		}
		d.AutoAck.Store(true)
		heapProfile, cpuProfile := os.Getenv("LEY_FROZEN_HEAPPROFILE"), os.Getenv("LEY_FROZEN_CPUPROFILE")
		pprofAddr := ""
		if heapProfile != "" || cpuProfile != "" {
			pprofAddr = freeLoopbackAddr(b)
		}
		args := []string{"areahost", "--director", d.Addr(), "--listen", "127.0.0.1:0",
			"--log-level", "warn", "--pool-size", strconv.Itoa(n), "--pprof", pprofAddr}
		if parkAfter != "" {
			args = append(args, "--park-after", parkAfter)
		}
		host := exec.Command(bin, args...)
		host.Env = append(os.Environ(), "LEY_SPAWN_TOKEN=bench") // ley refuses a spawn token on the command line
		host.Stderr = os.Stderr
		if err := host.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := d.Registered(10 * time.Second); err != nil {
			b.Fatal(err)
		}
		pid := host.Process.Pid
		base := procRSSKiB(b, pid)
		start := time.Now()
		for i := 1; i <= n; i++ {
			if err := d.Send(&control.SpawnArea{Area: uint32(i), Epoch: 1, Kind: "home", W: 32, H: 32, Seed: uint64(i)}); err != nil {
				b.Fatal(err)
			}
		}
		for ready := 0; ready < n; {
			r, err := areatest.Expect[*control.AreaReady](d, 60*time.Second)
			if err != nil {
				b.Fatal(err)
			}
			if r.Error != "" {
				b.Fatalf("area %d: %s", r.Area, r.Error)
			}
			ready++
		}
		spawnTime := time.Since(start)
		parked := 0
		if parks {
			parked = waitParked(b, d, n, 120*time.Second)
		}
		time.Sleep(2 * time.Second) // settle
		cpu0, t0 := procCPU(b, pid), time.Now()
		if cpuProfile != "" {
			saveProfile(b, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, window), cpuProfile)
			b.Logf("host CPU profile: %s", cpuProfile)
		} else {
			time.Sleep(time.Duration(window) * time.Second)
		}
		cpu1, t1 := procCPU(b, pid), time.Now()
		rss := procRSSKiB(b, pid)
		if heapProfile != "" { // after the measured window: fetching it costs CPU
			saveProfile(b, "http://"+pprofAddr+"/debug/pprof/heap?gc=1", heapProfile)
			b.Logf("host heap profile: %s", heapProfile)
		}
		host.Process.Signal(os.Interrupt)
		host.Wait()
		d.Close()
		cpuPerSec := (cpu1 - cpu0).Seconds() / t1.Sub(t0).Seconds()
		b.ReportMetric(float64(n), "areas")
		b.ReportMetric(float64(parked), "parked")
		b.ReportMetric(float64(rss-base)*1024/float64(n), "rss-B/area")
		b.ReportMetric(cpuPerSec*1e9/float64(n), "cpu-ns/area/s")
		b.ReportMetric(100*cpuPerSec, "host-cpu-%")
		b.ReportMetric(float64(rss)/1024, "host-rss-MiB")
		b.ReportMetric(spawnTime.Seconds()*1e6/float64(n), "spawn-µs/area")
	}
}

// waitParked waits for a heartbeat of the host that counts n parked Areas
// and returns the count of the last one seen (fewer than n when within
// ran out: the figures then say so).
func waitParked(b *testing.B, d *areatest.Director, n int, within time.Duration) int {
	b.Helper()
	deadline := time.Now().Add(within)
	parked := 0
	for time.Now().Before(deadline) {
		hb, err := areatest.Expect[*control.Heartbeat](d, 5*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if parked = hb.Parked; parked >= n {
			break
		}
	}
	return parked
}
