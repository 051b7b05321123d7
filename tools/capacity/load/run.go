package load

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/tools/capacity/procstat"
)

// Summary is a run's outcome. Gap, RTT and stutters cover the steady
// phase; intents, frames and errors the whole run.
type Summary struct {
	Started    time.Time `json:"started"`
	Director   string    `json:"director"`
	Pattern    Pattern   `json:"pattern"`
	Players    int       `json:"players"`
	Areas      int       `json:"areas"`
	Connected  int       `json:"connected"`   // players that bound
	Failed     int       `json:"failed"`      // players that never bound
	RampS      float64   `json:"ramp_s"`      // configured ramp
	SteadyS    float64   `json:"steady_s"`    // measured steady phase
	WallS      float64   `json:"wall_s"`      // the whole run
	Login      Phase     `json:"login"`       // logins (argon2id on the director)
	Join       Phase     `json:"join"`        // join + dial + hello, per player
	Gap        Dist      `json:"gap"`         // between snapshots, steady phase
	Stutters   int64     `json:"stutters"`    // steady gaps over 250 ms
	StutterPct float64   `json:"stutter_pct"` // of steady gaps
	RTT        Dist      `json:"rtt"`         // intent round trip, steady phase

	IntentsSent      int64            `json:"intents_sent"`
	IntentsAnswered  int64            `json:"intents_answered"` // distinct seqs answered
	AnswerRatio      float64          `json:"answer_ratio"`     // answered / sent: 1.0 when every intent got its answer
	Applied          int64            `json:"applied"`          // answered by a snapshot's ack_seq
	Rejected         map[string]int64 `json:"rejected"`         // answered by intent_result, by code
	DuplicateAnswers int64            `json:"duplicate_answers"`
	// Lost counts intents not sent because a window of them (256) was
	// still unanswered: net/client keeps every unanswered intent (to send
	// it again after a resume) rather than forget one.
	Lost int64 `json:"lost"`

	Hops   int64 `json:"hops,omitempty"` // portal crossings (pattern portal)
	HopLat Dist  `json:"hop,omitempty"`  // portal_moved to hello_ack in the new Area
	// PortalRefused counts players walking at random onto a map's portal
	// to where they may not go, told portal_blocked or
	// portal_transfer_rejected and kept where they were (Areas from a
	// template with portals); not an error.
	PortalRefused int64 `json:"portal_refused,omitempty"`
	// TradesDone counts the trades the build pattern's players were told
	// were done, each by both its players.
	TradesDone int64 `json:"trades_done,omitempty"`
	// AreaClosings counts the area_closing{AREA_CLOSING} players were
	// told: their Area closed under them (its host stopped, a rollout),
	// and Rejoins the players of the walking, idle, bursty and build
	// patterns that then joined it again through the director, as a
	// client must (docs/protocol.md, "The Area closes"). Neither is an
	// error; a rejoin that fails for RejoinFor is.
	AreaClosings int64 `json:"area_closings,omitempty"`
	Rejoins      int64 `json:"rejoins,omitempty"`

	Churn *ChurnSummary `json:"churn,omitempty"` // pattern churn
	// Items is the director's count of the realm's items after a build
	// run: none doubled, none lost (pattern build).
	Items *dirclient.ItemCensus `json:"items,omitempty"`
	// LiveItems is the director's count of the items in play after a
	// build run: the live Areas as their hosts hold them, the store for
	// the rest.
	LiveItems *dirclient.ItemCensus `json:"live_items,omitempty"`
	Seed      uint64                `json:"seed"`

	Frames int64 `json:"frames"`
	Bytes  int64 `json:"bytes"`
	// SteadyBytesPerClientS and SteadyFramesPerClientS are what a
	// connected player received per second in the steady phase (payload
	// and WebSocket headers), over the mean of players connected then.
	SteadyBytesPerClientS  float64          `json:"steady_bytes_per_client_s"`
	SteadyFramesPerClientS float64          `json:"steady_frames_per_client_s"`
	Errors                 map[string]int64 `json:"errors"`
	ErrorCount             int64            `json:"error_count"`

	Driver Driver `json:"driver"` // this process's own cost
}

// Phase is the timing of a setup phase.
type Phase struct {
	Done   int     `json:"done"`
	Cached int     `json:"cached,omitempty"` // sessions reused from the cache
	Failed int     `json:"failed"`
	WallS  float64 `json:"wall_s"`
	Each   Dist    `json:"each"`
}

// Driver is the load driver's own resource use over the run.
type Driver struct {
	UserS      float64 `json:"user_s"`
	SysS       float64 `json:"sys_s"`
	CPUPercent float64 `json:"cpu_pct"` // of one core, over the run
	MaxRSSKiB  int64   `json:"max_rss_kib"`
}

// Result is what [Run] returns: the summary and the per-second series.
type Result struct {
	Summary Summary
	Series  []Point
}

// WriteJSON writes the summary as indented JSON.
func (s *Summary) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(s)
}

// WriteCSV writes the series with a header row.
func WriteCSV(w io.Writer, series []Point) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"t_s", "phase", "connected", "frames", "bytes", "gap_p50_ms", "gap_p99_ms", "stutters", "errors"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, p := range series {
		_ = cw.Write([]string{f(p.T), p.Phase, i(p.Connected), i(p.Frames), i(p.Bytes), f(p.GapP50), f(p.GapP99), i(p.Stutters), i(p.Errors)})
	}
	cw.Flush()
	return cw.Error()
}

// Run drives the load described by cfg against a running realm and
// returns what the players saw. It returns early with an error only for a
// bad config or a failing setup (admin login, provisioning); players that
// fail to join are counted in the summary. ctx cancels the run.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	raiseNoFile()
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	r := &runner{cfg: cfg, st: newStats(), epoch: time.Now(), phase: "login"}
	r.loopback = isLoopback(cfg.Director)
	self0, _ := procstat.ReadSelf()

	roster := cfg.Roster
	var admin *dirclient.Client
	if len(roster) == 0 || cfg.RaiseCap || cfg.Pattern == PatternBuild {
		admin = cfg.Admin
		if admin == nil {
			admin = r.client(0)
			if _, err := admin.Login(ctx, cfg.AdminEmail, cfg.AdminPassword); err != nil {
				return Result{}, fmt.Errorf("load: admin login: %w", err)
			}
		}
		if cfg.RaiseCap {
			if err := RaiseCap(ctx, admin); err != nil {
				return Result{}, err
			}
		}
		if len(roster) == 0 {
			var err error
			if roster, err = Provision(ctx, admin, cfg.Prefix, cfg.Password, cfg.Players, cfg.Areas, cfg.Template, r.pairs()); err != nil {
				return Result{}, err
			}
			if r.pairs() {
				if err := linkPairs(ctx, admin, roster); err != nil {
					return Result{}, err
				}
			}
		}
	}
	areas := map[uint32]bool{}
	for _, a := range roster {
		areas[a.Area] = true
	}
	var hopMu sync.Mutex
	var hopTimes []time.Duration
	hopped := func(d time.Duration) {
		hopMu.Lock()
		hopTimes = append(hopTimes, d)
		hopMu.Unlock()
	}

	sampleCtx, cancelSampling := context.WithCancel(context.Background())
	samplerDone := make(chan struct{})
	go func() { defer close(samplerDone); r.sample(sampleCtx) }()
	stopSampling := sync.OnceFunc(func() { cancelSampling(); <-samplerDone })
	defer stopSampling()

	players := make([]*player, len(roster))
	for i, a := range roster {
		players[i] = &player{acct: a, sh: r.st.shards[i%numShards], st: r.st, local: r.wsLocal(i), closed: make(chan struct{}, 1)}
		if cfg.Pattern == PatternPortal {
			players[i].hops, players[i].hopped = make(chan bool, 1), hopped
		}
		if cfg.Pattern != PatternChurn { // a churner makes its own
			if err := players[i].newClient(cfg.Pattern); err != nil {
				return Result{}, err
			}
		}
	}
	login := r.logins(ctx, players)

	if cfg.Pattern == PatternChurn {
		return r.finishChurn(ctx, players, login, len(areas), self0, stopSampling)
	}

	r.setPhase("ramp")
	sendCtx, stopSending := context.WithCancel(ctx)
	defer stopSending()
	var joinMu sync.Mutex
	var joinTimes []time.Duration
	joinFailed := 0
	joinSem := make(chan struct{}, cfg.JoinConcurrency)
	var setup, running sync.WaitGroup
	rampStart := time.Now()
	for i, p := range players {
		if p.token == "" {
			continue
		}
		offset := time.Duration(0)
		if len(players) > 1 {
			offset = cfg.Ramp * time.Duration(i) / time.Duration(len(players))
		}
		setup.Add(1)
		go func() {
			defer setup.Done()
			select {
			case <-time.After(time.Until(rampStart.Add(offset))):
			case <-ctx.Done():
				return
			}
			joinSem <- struct{}{}
			t0 := time.Now()
			err := r.join(ctx, p)
			<-joinSem
			joinMu.Lock()
			if err != nil {
				joinFailed++
			} else {
				joinTimes = append(joinTimes, time.Since(t0))
			}
			joinMu.Unlock()
			if err != nil {
				r.st.fail(err.Error())
				return
			}
			running.Add(1)
			go func() {
				defer running.Done()
				if cfg.Pattern == PatternPortal {
					p.hop(sendCtx, portalX, portalY)
					return
				}
				p.send(sendCtx, cfg.Pattern, rand.New(rand.NewPCG(uint64(i), r.cfg.Seed)), func(ctx context.Context) bool { return r.rejoin(ctx, p) })
			}()
		}()
	}
	setup.Wait()
	rampWall := time.Since(rampStart)
	if wait := time.Until(rampStart.Add(cfg.Ramp)); wait > 0 {
		sleep(ctx, wait)
	}

	r.setPhase("steady")
	if cfg.OnSteady != nil {
		cfg.OnSteady(true)
	}
	r.st.startSteady()
	steadyStart := time.Now()
	sleep(ctx, cfg.Duration)
	r.st.endSteady()
	steady := time.Since(steadyStart)
	if cfg.OnSteady != nil {
		cfg.OnSteady(false)
	}

	r.setPhase("drain")
	stopSending()
	// The drain counts what was sent: a sender still between its timer
	// (or a crossing's end) and its send when the sending stopped sends
	// one more, which the drain must wait for, not find after it ended
	// and abandon with the close. A sender stuck in a write does not
	// hold the drain back longer than Drain.
	stopped := make(chan struct{})
	go func() { running.Wait(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(r.cfg.Drain):
	}
	r.drain(ctx, players)
	for _, p := range players {
		p.close()
	}
	<-stopped

	hopMu.Lock()
	hops := hopTimes
	hopMu.Unlock()
	join := Phase{Done: len(joinTimes), Failed: joinFailed, WallS: rampWall.Seconds(), Each: distOfDurations(joinTimes)}
	res := r.summarize(players, len(areas), login, join, len(joinTimes), steady, hops, self0, stopSampling)
	if res.Summary.Connected == 0 {
		return res, ErrNoPlayers
	}
	if cfg.Pattern == PatternBuild {
		// The store is consistent at every instant (docs/items.md): its
		// count needs no waiting for the last snapshots. And what is in
		// play now: the live Areas as their hosts hold them (the store
		// may not have the run's last moves yet).
		for _, c := range []struct {
			what  string
			count func(context.Context) (dirclient.ItemCensus, error)
			into  **dirclient.ItemCensus
		}{{"stored", admin.Items, &res.Summary.Items}, {"in play", admin.LiveItems, &res.Summary.LiveItems}} {
			count, err := c.count(ctx)
			if err != nil {
				return res, fmt.Errorf("load: the director's count of the realm's items %s: %w", c.what, err)
			}
			*c.into = &count
			if !count.OK {
				return res, fmt.Errorf("%w: %s: %d violations: %v", ErrItemsNotConserved, c.what, count.Violations, count.Problems)
			}
		}
	}
	return res, ctx.Err()
}

// finishChurn runs the churn pattern with the logged-in players and
// summarises it.
func (r *runner) finishChurn(ctx context.Context, players []*player, login Phase, areas int, self0 procstat.Self, stopSampling func()) (Result, error) {
	if r.cfg.Churn.ResumeGrace == 0 {
		g, err := resumeGrace(ctx, r.cfg.Director)
		if err != nil {
			return Result{}, err
		}
		r.cfg.Churn.ResumeGrace = g
	}
	start := time.Now()
	churn, joins, never := r.runChurn(ctx, players, r.pairs())
	join := Phase{Done: len(joins), Failed: int(churn.Events[EventArrive].Failed), WallS: time.Since(start).Seconds(), Each: distOfDurations(joins)}
	res := r.summarize(players, areas, login, join, len(players)-never, r.cfg.Duration, nil, self0, stopSampling)
	res.Summary.Churn = churn
	if res.Summary.Connected == 0 {
		return res, ErrNoPlayers
	}
	return res, ctx.Err()
}

// resumeGrace reads the realm's resume grace from /director/info.
func resumeGrace(ctx context.Context, director string) (time.Duration, error) {
	info, err := dirclient.New(director).Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("load: director info: %w", err)
	}
	ms, ok := info.Knobs["resume_grace_ms"].(float64)
	if !ok || ms <= 0 {
		return 0, fmt.Errorf("load: the director does not say its resume grace; set it (--churn-resume-grace)")
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// summarize builds the run's summary from the players' tallies, the
// shards and the driver's own cost; connected is the players that bound.
func (r *runner) summarize(players []*player, areas int, login, join Phase, connected int, steady time.Duration, hopTimes []time.Duration, self0 procstat.Self, stopSampling func()) Result {
	cfg := r.cfg
	s := Summary{
		Started: r.epoch, Director: cfg.Director, Pattern: cfg.Pattern,
		Players: len(players), Areas: areas, Seed: cfg.Seed,
		RampS: cfg.Ramp.Seconds(), SteadyS: steady.Seconds(),
		Login:    login,
		Join:     join,
		Rejected: map[string]int64{},
	}
	s.Connected = connected
	s.Hops, s.HopLat = int64(len(hopTimes)), distOfDurations(hopTimes)
	s.Failed = len(players) - s.Connected
	gap, rtt, stutters := r.st.steady()
	s.Gap, s.RTT, s.Stutters = distOf(gap), distOf(rtt), stutters
	if gap.TotalCount() > 0 {
		s.StutterPct = 100 * float64(stutters) / float64(gap.TotalCount())
	}
	for _, p := range players {
		t := p.tally()
		s.IntentsSent += t.sent
		s.IntentsAnswered += t.answered
		s.Applied += t.applied
		s.DuplicateAnswers += t.dups
		s.Lost += t.lost
		for c, n := range t.rejected {
			if n > 0 {
				s.Rejected[wire.Code(c).String()] += n
			}
		}
	}
	if s.IntentsSent > 0 {
		s.AnswerRatio = float64(s.IntentsAnswered) / float64(s.IntentsSent)
	} else {
		s.AnswerRatio = 1
	}
	stopSampling()
	tot := r.st.second(newHist())
	s.Frames, s.Bytes = tot.frames, tot.bytes
	s.Errors, s.ErrorCount = r.st.errorMap(), r.st.errCount.Load()
	s.PortalRefused = r.st.portalRefused.Load()
	s.TradesDone = r.st.tradesDone.Load()
	s.AreaClosings, s.Rejoins = r.st.closings.Load(), r.st.rejoins.Load()
	s.WallS = time.Since(r.epoch).Seconds()
	if self1, err := procstat.ReadSelf(); err == nil {
		s.Driver = Driver{
			UserS: (self1.User - self0.User).Seconds(), SysS: (self1.Sys - self0.Sys).Seconds(),
			MaxRSSKiB: self1.MaxRSSKiB,
		}
		if w := self1.At.Sub(self0.At).Seconds(); w > 0 {
			s.Driver.CPUPercent = 100 * (s.Driver.UserS + s.Driver.SysS) / w
		}
	}
	r.smu.Lock()
	series := r.series
	r.smu.Unlock()
	if n := meanSteadyConnected(series); n > 0 && steady > 0 {
		per := n * steady.Seconds()
		s.SteadyBytesPerClientS = float64(r.st.steadyTo.bytes-r.st.steadyFrom.bytes) / per
		s.SteadyFramesPerClientS = float64(r.st.steadyTo.frames-r.st.steadyFrom.frames) / per
	}
	return Result{Summary: s, Series: series}
}

// meanSteadyConnected is the mean of the players connected over the
// series' steady seconds (0 if it has none).
func meanSteadyConnected(series []Point) float64 {
	var sum, n float64
	for _, p := range series {
		if p.Phase == "steady" {
			sum += float64(p.Connected)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// drain waits until every intent sent is answered, at most Drain.
func (r *runner) drain(ctx context.Context, players []*player) {
	deadline := time.Now().Add(r.cfg.Drain)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		open := false
		for _, p := range players {
			if t := p.tally(); t.sent > t.answered {
				open = true
				break
			}
		}
		if !open {
			return
		}
		sleep(ctx, 50*time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// pairs reports whether the run's Areas are linked in pairs by portals.
func (r *runner) pairs() bool {
	return r.cfg.Pattern == PatternPortal || (r.cfg.Pattern == PatternChurn && r.cfg.Churn.Hop > 0)
}

// runner is one Run's state.
type runner struct {
	cfg      Config
	st       *stats
	epoch    time.Time
	loopback bool

	pmu   sync.Mutex
	phase string // guarded by pmu

	cmu      sync.Mutex
	clients  map[int]*http.Client // by source address index; guarded by cmu
	addrBase uint32               // first source address (low 24 bits), random per run

	smu    sync.Mutex
	series []Point // guarded by smu

	churnLogins int     // second logins of the churn pattern; guarded by cmu
	churnEnd    endGate // the churn pattern's end
}

func (r *runner) setPhase(p string) {
	r.pmu.Lock()
	r.phase = p
	r.pmu.Unlock()
}

func (r *runner) getPhase() string {
	r.pmu.Lock()
	defer r.pmu.Unlock()
	return r.phase
}

// loginsPerAddr stays under the director's per-address login burst (10).
const loginsPerAddr = 8

// client returns a director client for the n-th login. Against a loopback
// director every loginsPerAddr logins use their own source address in
// 127.0.0.0/8 (see the package doc); elsewhere one shared transport.
func (r *runner) client(n int) *dirclient.Client {
	c := dirclient.New(r.cfg.Director)
	if !r.loopback {
		return c
	}
	idx := n/loginsPerAddr + 1
	r.cmu.Lock()
	defer r.cmu.Unlock()
	if r.clients == nil {
		r.clients = map[int]*http.Client{}
	}
	hc, ok := r.clients[idx]
	if !ok {
		// A random run of addresses in 127.1.0.0-127.255.255.255 (away
		// from the 127.0.0.x a realm listens on), fresh each run so that
		// runs back to back do not share the limiter's buckets.
		if r.addrBase == 0 {
			r.addrBase = 1<<16 + rand.Uint32N(1<<24-1<<16-1<<20)
		}
		a := r.addrBase + uint32(idx)
		ip := net.IPv4(127, byte(a>>16), byte(a>>8), byte(a))
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 10 * time.Second}
		hc = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4}}
		r.clients[idx] = hc
	}
	c.HTTP = hc
	return c
}

// playersPerAddr is how many simulated players share a source address
// against a loopback realm: well within a host's per-address connection
// cap, as players at home would be.
const playersPerAddr = 32

// wsLocal returns the source address of player i's WebSocket connections:
// against a loopback realm each playersPerAddr players get their own
// address in 127.0.0.0/8 (away from the login addresses); elsewhere nil.
// The dial binds it only for hosts on this machine (gate.DialOptions): a
// loopback director's hosts on other machines see the system's address.
func (r *runner) wsLocal(i int) net.Addr {
	if !r.loopback {
		return nil
	}
	a := uint32(64<<16) + uint32(i/playersPerAddr) // 127.64.x.y onwards
	return &net.TCPAddr{IP: net.IPv4(127, byte(a>>16), byte(a>>8), byte(a))}
}

// isLoopback reports whether the director URL names a loopback host.
func isLoopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback() && ip.To4() != nil
}

// logins gives every player a session, from the cache or by logging in,
// at most LoginConcurrency at once.
func (r *runner) logins(ctx context.Context, players []*player) Phase {
	start := time.Now()
	var mu sync.Mutex
	var times []time.Duration
	ph := Phase{}
	sem := make(chan struct{}, r.cfg.LoginConcurrency)
	var wg sync.WaitGroup
	n := 0
	for _, p := range players {
		if r.cfg.Sessions != nil {
			if tok, ok := r.cfg.Sessions.Get(p.acct.Email); ok {
				p.token = tok
				ph.Cached++
				continue
			}
		}
		c := r.client(n + loginsPerAddr) // index 0's address is the admin's
		n++
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t0 := time.Now()
			err := retry(ctx, func() error { _, err := c.Login(ctx, p.acct.Email, r.cfg.Password); return err })
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				ph.Failed++
				r.st.fail("login: " + errCode(err))
				return
			}
			times = append(times, time.Since(t0))
			p.token = c.Token
			if r.cfg.Sessions != nil {
				r.cfg.Sessions.Put(p.acct.Email, c.Token)
			}
		}()
	}
	wg.Wait()
	ph.Done = len(times)
	ph.WallS = time.Since(start).Seconds()
	ph.Each = distOfDurations(times)
	return ph
}

// retry calls f until it succeeds, fails for good, or 5 tries went by;
// it retries rate limits, 5xx answers and transport errors.
func retry(ctx context.Context, f func() error) error {
	var err error
	for try := range 5 {
		if err = f(); err == nil {
			return nil
		}
		var de *dirclient.Error
		if errors.As(err, &de) && de.Status != http.StatusTooManyRequests && de.Status < 500 {
			return err
		}
		if ctx.Err() != nil {
			return err
		}
		sleep(ctx, time.Duration(try+1)*500*time.Millisecond)
	}
	return err
}

func errCode(err error) string {
	var de *dirclient.Error
	if errors.As(err, &de) {
		return de.Code
	}
	return err.Error()
}

// join joins p's Area and binds it. A refused session is forgotten from
// the cache and the player logs in once more.
func (r *runner) join(ctx context.Context, p *player) error {
	c := dirclient.New(r.cfg.Director)
	c.Token = p.token
	var j dirclient.Join
	err := retry(ctx, func() error { var err error; j, err = c.Join(ctx, p.acct.Area); return err })
	var de *dirclient.Error
	if errors.As(err, &de) && de.Status == http.StatusUnauthorized && r.cfg.Sessions != nil {
		r.cfg.Sessions.Forget(p.acct.Email)
		lc := r.client(0)
		if _, lerr := lc.Login(ctx, p.acct.Email, r.cfg.Password); lerr == nil {
			p.token, c.Token = lc.Token, lc.Token
			r.cfg.Sessions.Put(p.acct.Email, lc.Token)
			j, err = c.Join(ctx, p.acct.Area)
		}
	}
	if err != nil {
		return fmt.Errorf("join: %s", errCode(err))
	}
	if err := p.connect(ctx, j.WSURL, j.Grant, j.JoinID); err != nil {
		return fmt.Errorf("connect: %s", short(err))
	}
	return nil
}

// RejoinFor is how long a player whose Area closed under it tries to
// join it again (the Area comes back on another host meanwhile).
const RejoinFor = 30 * time.Second

// rejoin joins p's Area again after it closed under the player, trying
// for RejoinFor, and reports whether it is back in; ctx ending (the run's
// sending) stops it without an error.
func (r *runner) rejoin(ctx context.Context, p *player) bool {
	deadline := time.Now().Add(RejoinFor)
	for {
		err := r.join(ctx, p)
		if err == nil {
			r.st.rejoins.Add(1)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if time.Now().After(deadline) {
			r.st.fail("rejoin: " + err.Error())
			return false
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

// sample appends a Point every second and prints the progress line.
func (r *runner) sample(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	h := newHist()
	var prev totals
	var prevErr int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tot := r.st.second(h)
		errs := r.st.errCount.Load()
		p := Point{
			T: time.Since(r.epoch).Seconds(), Phase: r.getPhase(), Connected: r.st.connected.Load(),
			Frames: tot.frames - prev.frames, Bytes: tot.bytes - prev.bytes,
			Stutters: tot.stutters - prev.stutters, Errors: errs - prevErr,
		}
		if h.TotalCount() > 0 {
			p.GapP50 = float64(h.ValueAtQuantile(50)) / 1000
			p.GapP99 = float64(h.ValueAtQuantile(99)) / 1000
		}
		prev, prevErr = tot, errs
		r.smu.Lock()
		r.series = append(r.series, p)
		r.smu.Unlock()
		if w := r.cfg.Progress; w != nil {
			fmt.Fprintf(w, "load %5.0fs %-6s connected %5d  gap p50 %6.1f ms p99 %6.1f ms  stutters %4d  frames/s %6d  errors %d\n",
				p.T, p.Phase, p.Connected, p.GapP50, p.GapP99, p.Stutters, p.Frames, errs)
		}
	}
}

// Provision makes count accounts <prefix>-<i>@load.ley with password over
// areas Areas through admin's session and returns them as a roster. The
// Areas are made from template (its map, with its size); an empty
// template takes open floors of AreaSide x AreaSide squares (the
// built-in template "empty": players only, no walls or creatures), as the
// churn and portal patterns' squares assume. An empty prefix takes
// "load-<unix seconds>".
func Provision(ctx context.Context, admin *dirclient.Client, prefix, password string, count, areas int, template string, pairs bool) ([]Account, error) {
	if prefix == "" {
		prefix = fmt.Sprintf("load-%d", time.Now().Unix())
	}
	req := dirclient.ProvisionRequest{Prefix: prefix, Count: count, Areas: areas, Password: password, Pairs: pairs, Template: template}
	if template == "" {
		req.Template, req.W, req.H = dirclient.EmptyTemplate, AreaSide, AreaSide
	}
	got, _, err := admin.Provision(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("load: provision: %w", err)
	}
	out := make([]Account, len(got))
	for i, g := range got {
		out[i] = Account{Email: g.Email, Area: g.Area}
	}
	return out, nil
}

// RaiseCap opens the realm door wide through admin's session: open, new
// players welcome, a cap of a billion.
func RaiseCap(ctx context.Context, admin *dirclient.Client) error {
	if err := admin.SetRealm(ctx, dirclient.Realm{Open: true, Cap: 1 << 30, NewPlayersWelcome: true, Message: "capacity run"}); err != nil {
		return fmt.Errorf("load: raise the realm cap: %w", err)
	}
	return nil
}

// AdminClient logs in an admin and returns its client.
func AdminClient(ctx context.Context, director, email, password string) (*dirclient.Client, error) {
	c := dirclient.New(director)
	if _, err := c.Login(ctx, email, password); err != nil {
		return nil, fmt.Errorf("load: admin login: %w", err)
	}
	return c, nil
}

// raiseNoFile lifts the soft file limit to the hard one: every player is
// a socket.
func raiseNoFile() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// AreaSide is the side of the Areas Provision makes, in squares.
const AreaSide = 64

// The portal pattern's squares on the provisioned Areas: a portal beside
// the middle, leading to the other side of the middle.
const (
	portalX, portalY = AreaSide/2 + 3, AreaSide / 2
	arriveX, arriveY = AreaSide/2 - 3, AreaSide / 2
)

// linkPairs links the roster's Areas in pairs (by id order) with portals,
// through the admin's session (the admin owns provisioned Areas).
func linkPairs(ctx context.Context, admin *dirclient.Client, roster []Account) error {
	seen := map[uint32]bool{}
	var ids []uint32
	for _, a := range roster {
		if !seen[a.Area] {
			seen[a.Area] = true
			ids = append(ids, a.Area)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if len(ids)%2 != 0 {
		return fmt.Errorf("load: pattern portal: %d Areas cannot be paired", len(ids))
	}
	for i := 0; i < len(ids); i += 2 {
		a, b := ids[i], ids[i+1]
		for _, link := range [][2]uint32{{a, b}, {b, a}} {
			err := admin.SetPortals(ctx, link[0], []dirclient.Portal{{X: portalX, Y: portalY, ToArea: link[1], ToX: arriveX, ToY: arriveY}})
			if err != nil {
				return fmt.Errorf("load: link area %d to %d: %w", link[0], link[1], err)
			}
		}
	}
	return nil
}
