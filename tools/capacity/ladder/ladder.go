package ladder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/tools/capacity/load"
	"github.com/leyworks/ley/tools/capacity/procstat"
)

// ErrConfig wraps every invalid configuration.
var ErrConfig = errors.New("ladder: invalid config")

// SLO is the service level a rung must hold.
type SLO struct {
	GapP50     time.Duration `json:"gap_p50"`     // median snapshot gap, at most
	GapP99     time.Duration `json:"gap_p99"`     // p99 snapshot gap, at most
	StutterPct float64       `json:"stutter_pct"` // gaps over 250 ms, at most this % of gaps
	// RTTP99 is the p99 intent round trip (intent sent to its answer), at
	// most: input latency degrades before the snapshot gap does (a host
	// that keeps its snapshots on time can still let intent queues fill),
	// so a rung that holds the gap but not this is broken too. 0 checks
	// nothing.
	RTTP99 time.Duration `json:"rtt_p99"`
}

// DefaultSLO returns the project's objective: median gap 105 ms, p99
// 150 ms, at most 1% stutters (gaps over 250 ms), and intents answered
// within 200 ms at p99 (a tick and a snapshot interval, 150 ms, when the
// server keeps up, and room for the network).
func DefaultSLO() SLO {
	return SLO{GapP50: 105 * time.Millisecond, GapP99: 150 * time.Millisecond, StutterPct: 1, RTTP99: 200 * time.Millisecond}
}

// Config configures a [Run]. Start from [DefaultConfig] or [QuickConfig].
type Config struct {
	// Binary is the ley executable that runs the realm ("" is this
	// process's own executable). Unused with Director.
	Binary string
	// Director, if set, is a running realm to climb instead of starting
	// one; DirectorPID, if set, is its director's pid for sampling.
	Director    string
	DirectorPID int
	// AdminEmail and AdminPassword are an admin of the realm (the demo
	// admin of a started realm by default).
	AdminEmail, AdminPassword string
	// Rungs are the Areas of each rung, climbing; PerArea the players in
	// each Area.
	Rungs   []int
	PerArea int
	// Pattern is the players' behaviour; Ramp and Hold each rung's ramp
	// and measured steady phase.
	Pattern load.Pattern
	// Template is the content template of the rungs' Areas ("" takes open
	// floors with players only; see load.Config.Template).
	Template   string
	Ramp, Hold time.Duration
	// MaxHosts and PoolSize configure a started realm's host rail.
	MaxHosts, PoolSize int
	// RealmArgs are more `ley run` flags for a started realm.
	RealmArgs []string
	// Pin, if set, pins the started realm (director and hosts) to
	// Pin.Realm's CPUs and this process (the load driver) to
	// Pin.Driver's, so that a rung measures what one set of cores holds
	// (players per core). With Director, only the driver is pinned: pin
	// the running realm with taskset.
	Pin *Pin
	// Content, if set, is a folder of content laid over the embedded
	// content of a started realm (`ley run --content`): rule sets, maps
	// and templates of its own. A running realm (Director) has its own.
	Content string
	// SLO is the objective each rung must hold.
	SLO SLO
	// Progress, if not nil, receives the ladder's and the driver's
	// progress lines.
	Progress io.Writer
	// Command is the command line, recorded in the report.
	Command string
}

// DefaultConfig returns a fresh full-mode Config: villages of 20 players
// on rungs of 5 to 80 Areas, 10 s ramps and 30 s holds, walking at the
// movement budget (walk5).
func DefaultConfig() Config {
	return Config{
		AdminEmail:    "demo@ley.local",
		AdminPassword: "demo-password",
		Rungs:         []int{5, 10, 20, 30, 40, 60, 80},
		PerArea:       20,
		Pattern:       load.PatternWalk5,
		Ramp:          10 * time.Second,
		Hold:          30 * time.Second,
		MaxHosts:      32,
		PoolSize:      0, // the director's: by capacity
		SLO:           DefaultSLO(),
	}
}

// QuickConfig returns a Config that finishes in well under 45 s: rungs of
// 2 and 4 Areas x 5 players, 2 s ramps and 5 s holds.
func QuickConfig() Config {
	c := DefaultConfig()
	c.Rungs, c.PerArea = []int{2, 4}, 5
	c.Ramp, c.Hold = 2*time.Second, 5*time.Second
	c.MaxHosts = 4
	return c
}

func (c *Config) validate() error {
	var errs []error
	prev := 0
	for _, r := range c.Rungs {
		if r <= prev {
			errs = append(errs, fmt.Errorf("rungs must climb: %v", c.Rungs))
			break
		}
		prev = r
	}
	if len(c.Rungs) == 0 || c.PerArea < 1 || c.Hold <= 0 || c.Ramp < 0 {
		errs = append(errs, fmt.Errorf("need rungs, per-area >= 1, hold > 0, ramp >= 0"))
	}
	if c.Director != "" && c.Content != "" {
		errs = append(errs, fmt.Errorf("content is for a started realm: a running realm (%s) has its own", c.Director))
	}
	if c.Director == "" && (c.MaxHosts < 1 || c.PoolSize < 0) {
		errs = append(errs, fmt.Errorf("max hosts and pool size must be at least 1"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrConfig, errors.Join(errs...))
	}
	return nil
}

// Rung is one rung's outcome.
type Rung struct {
	Areas   int          `json:"areas"`
	PerArea int          `json:"per_area"`
	Players int          `json:"players"`
	Load    load.Summary `json:"load"`

	DirectorCPU    float64 `json:"director_cpu_pct"` // % of one core over the steady phase
	HostsCPU       float64 `json:"hosts_cpu_pct"`    // all hosts together
	DriverCPU      float64 `json:"driver_cpu_pct"`   // the load driver, over its whole run
	DirectorRSSKiB int64   `json:"director_rss_kib"`
	HostsRSSKiB    int64   `json:"hosts_rss_kib"` // all hosts together
	Hosts          int     `json:"hosts"`
	HostPeers      int     `json:"host_peers"`  // peers the hosts reported at the end
	TickP99us      int64   `json:"tick_p99_us"` // worst host tick p99 at the end

	Held   bool     `json:"held"`
	Broken []string `json:"broken,omitempty"` // why it did not hold
}

// Report is a ladder run's outcome.
type Report struct {
	Command  string    `json:"command"`
	Started  time.Time `json:"started"`
	WallS    float64   `json:"wall_s"`
	Machine  string    `json:"machine"`
	Director string    `json:"director"`
	Pattern  string    `json:"pattern"`
	Template string    `json:"template,omitempty"`
	PerArea  int       `json:"per_area"`
	RampS    float64   `json:"ramp_s"`
	HoldS    float64   `json:"hold_s"`
	SLO      SLO       `json:"slo"`
	Pin      string    `json:"pin,omitempty"` // the CPUs of realm and driver, when pinned
	Rungs    []Rung    `json:"rungs"`
	// LastHeld and Breaking index Rungs; -1 when there is none (no rung
	// held, or every rung held).
	LastHeld int `json:"last_held"`
	Breaking int `json:"breaking"`
}

// Run climbs the ladder. It returns the report so far with any error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	rep := &Report{
		Command: cfg.Command, Started: time.Now(), Pattern: string(cfg.Pattern), Template: cfg.Template, PerArea: cfg.PerArea,
		RampS: cfg.Ramp.Seconds(), HoldS: cfg.Hold.Seconds(), SLO: cfg.SLO, LastHeld: -1, Breaking: -1,
		Machine: fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version()),
	}
	defer func() { rep.WallS = time.Since(rep.Started).Seconds() }()
	director, dirPID := cfg.Director, cfg.DirectorPID
	if director == "" {
		rlm, err := startRealm(ctx, cfg)
		if err != nil {
			return rep, err
		}
		defer rlm.stop()
		director, dirPID = rlm.url, rlm.pid
	}
	if cfg.Pin != nil {
		if err := pinSelf(cfg.Pin.Driver); err != nil {
			return rep, err
		}
		// The report says where the processes run, as the kernel has it.
		realmCPUs := "not pinned here"
		if dirPID > 0 {
			var err error
			if realmCPUs, err = affinityOf(dirPID); err != nil {
				return rep, fmt.Errorf("ladder: the realm's CPUs: %w", err)
			}
		}
		driverCPUs, err := affinityOf(os.Getpid())
		if err != nil {
			return rep, fmt.Errorf("ladder: the driver's CPUs: %w", err)
		}
		if (cfg.Director == "" && realmCPUs != cpuList(cfg.Pin.Realm)) || driverCPUs != cpuList(cfg.Pin.Driver) {
			return rep, fmt.Errorf("ladder: pinned %s, but the realm runs on CPUs %s and the driver on %s", cfg.Pin, realmCPUs, driverCPUs)
		}
		rep.Pin = realmCPUs + ":" + driverCPUs
	}
	rep.Director = director
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	admin, err := load.AdminClient(ctx, director, cfg.AdminEmail, cfg.AdminPassword)
	if err != nil {
		return rep, err
	}
	if err := load.RaiseCap(ctx, admin); err != nil {
		return rep, err
	}
	const password = "ladder-password-1"
	prefix := fmt.Sprintf("lad%d", time.Now().Unix())
	sessions := load.NewSessions()
	var roster []load.Account
	prev := 0
	for k, areas := range cfg.Rungs {
		add, err := load.Provision(ctx, admin, fmt.Sprintf("%s-%d", prefix, k), password, (areas-prev)*cfg.PerArea, areas-prev, cfg.Template, false)
		if err != nil {
			return rep, err
		}
		roster = append(roster, add...)
		prev = areas
		fmt.Fprintf(progress, "ladder: rung %d: %d Areas x %d players = %d players\n", k+1, areas, cfg.PerArea, len(roster))
		smp := &sampler{admin: admin, dirPID: dirPID}
		lc := load.DefaultConfig()
		lc.Director, lc.Roster, lc.Sessions, lc.Password = director, roster, sessions, password
		lc.Admin = admin // one admin session: a second login would end the sampler's
		lc.Pattern, lc.Ramp, lc.Duration = cfg.Pattern, cfg.Ramp, cfg.Hold
		lc.Template = cfg.Template
		lc.Drain = 5 * time.Second
		lc.Progress = cfg.Progress
		lc.OnSteady = func(start bool) { smp.sample(ctx, start) }
		res, err := load.Run(ctx, lc)
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		rung := Rung{Areas: areas, PerArea: cfg.PerArea, Players: len(roster), Load: res.Summary, DriverCPU: res.Summary.Driver.CPUPercent}
		smp.fill(&rung)
		rung.Broken = cfg.SLO.check(res.Summary)
		if err != nil {
			rung.Broken = append(rung.Broken, err.Error())
		}
		rung.Held = len(rung.Broken) == 0
		rep.Rungs = append(rep.Rungs, rung)
		fmt.Fprintf(progress, "ladder: rung %d: %d players: gap p50 %.1f p99 %.1f ms, stutters %.2f%%, answers %.4f, director %.0f%% hosts %.0f%% driver %.0f%% CPU: %s\n",
			k+1, len(roster), res.Summary.Gap.P50, res.Summary.Gap.P99, res.Summary.StutterPct, res.Summary.AnswerRatio,
			rung.DirectorCPU, rung.HostsCPU, rung.DriverCPU, verdict(rung))
		if !rung.Held {
			rep.Breaking = len(rep.Rungs) - 1
			break
		}
		rep.LastHeld = len(rep.Rungs) - 1
	}
	return rep, nil
}

func verdict(r Rung) string {
	if r.Held {
		return "held"
	}
	return fmt.Sprintf("BROKEN (%v)", r.Broken)
}

// check lists the ways s misses the objective (none: it held).
func (o SLO) check(s load.Summary) []string {
	var out []string
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	if s.Gap.Count == 0 {
		out = append(out, "no snapshot gaps measured")
	}
	if s.Gap.P50 > ms(o.GapP50) {
		out = append(out, fmt.Sprintf("gap p50 %.1f ms > %.0f ms", s.Gap.P50, ms(o.GapP50)))
	}
	if s.Gap.P99 > ms(o.GapP99) {
		out = append(out, fmt.Sprintf("gap p99 %.1f ms > %.0f ms", s.Gap.P99, ms(o.GapP99)))
	}
	if o.RTTP99 > 0 && s.RTT.P99 > ms(o.RTTP99) {
		out = append(out, fmt.Sprintf("rtt p99 %.1f ms > %.0f ms", s.RTT.P99, ms(o.RTTP99)))
	}
	if s.StutterPct > o.StutterPct {
		out = append(out, fmt.Sprintf("stutters %.2f%% > %.1f%%", s.StutterPct, o.StutterPct))
	}
	if s.IntentsAnswered < s.IntentsSent {
		out = append(out, fmt.Sprintf("%d of %d intents unanswered", s.IntentsSent-s.IntentsAnswered, s.IntentsSent))
	}
	if s.Failed > 0 {
		out = append(out, fmt.Sprintf("%d players failed to connect", s.Failed))
	}
	if s.ErrorCount > 0 {
		out = append(out, fmt.Sprintf("%d errors %v", s.ErrorCount, s.Errors))
	}
	return out
}

// sampler reads the server processes at the start and end of a steady
// phase.
type sampler struct {
	admin  *dirclient.Client
	dirPID int

	mu         sync.Mutex
	start, end map[int]procstat.Sample // by pid; guarded by mu
	hosts      []dirclient.HostStats   // at the end; guarded by mu
}

func (s *sampler) sample(ctx context.Context, start bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	hosts, _ := s.admin.Hosts(ctx)
	pids := []int{}
	if s.dirPID > 0 {
		pids = append(pids, s.dirPID)
	}
	for _, h := range hosts {
		if h.PID > 0 && h.PID != s.dirPID {
			pids = append(pids, h.PID)
		}
	}
	got := map[int]procstat.Sample{}
	for _, pid := range pids {
		if smp, err := procstat.Read(pid); err == nil {
			got[pid] = smp
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if start {
		s.start = got
	} else {
		s.end, s.hosts = got, hosts
	}
}

// fill puts the samples' figures into r.
func (s *sampler) fill(r *Rung) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid, b := range s.end {
		a, ok := s.start[pid]
		cpu := 0.0
		if ok {
			cpu = procstat.CPUPercent(a, b)
		}
		if pid == s.dirPID {
			r.DirectorCPU, r.DirectorRSSKiB = cpu, b.RSSKiB
		} else {
			r.HostsCPU += cpu
			r.HostsRSSKiB += b.RSSKiB
		}
	}
	r.Hosts = len(s.hosts)
	for _, h := range s.hosts {
		r.HostPeers += h.Peers
		r.TickP99us = max(r.TickP99us, h.TickP99us)
	}
}

// executable is the ley binary to run a realm with.
func executable(cfg Config) (string, error) {
	if cfg.Binary != "" {
		return cfg.Binary, nil
	}
	return os.Executable()
}
