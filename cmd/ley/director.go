package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/leyworks/ley/director"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/pg"
	"github.com/leyworks/ley/store/sqlite"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// realmSignals returns a context a signal ends, and where to put the
// director it stops: Ctrl-C (SIGINT) stops the whole realm, the director
// stopping its hosts (each closes its Areas with their final snapshots);
// SIGTERM stops the director alone (a restart, an upgrade, a rollout):
// its hosts play on and the next director adopts them.
func realmSignals(parent context.Context) (context.Context, *atomic.Pointer[director.Director], func()) {
	ctx, cancel := context.WithCancel(parent)
	var realm atomic.Pointer[director.Director]
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sig:
			if d := realm.Load(); d != nil && s == os.Interrupt {
				d.StopRealm()
			}
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, &realm, func() { signal.Stop(sig); cancel() }
}

// storeFlags selects the store: Postgres when a URL is given, else the
// embedded SQLite under the data directory.
type storeFlags struct {
	url     string
	dataDir string
}

func (s *storeFlags) add(f *pflag.FlagSet) {
	f.StringVar(&s.url, "database-url", "", "Postgres URL (postgres://...); empty uses the embedded SQLite store under --data-dir")
	f.StringVar(&s.dataDir, "data-dir", "data", "directory of the embedded SQLite store")
}

func (s *storeFlags) open(ctx context.Context) (store.Store, string, error) {
	if s.url != "" {
		st, err := pg.Open(ctx, s.url)
		return st, "postgres", err
	}
	if err := os.MkdirAll(s.dataDir, 0o750); err != nil {
		return nil, "", fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(s.dataDir, "ley.db")
	st, err := sqlite.Open(ctx, path)
	return st, "sqlite " + path, err
}

// addDirectorFlags adds the director's flags to f; --host-key-file goes
// to *hostKeyFile (read with secretFromFile once the flags are parsed),
// the --control-tls-* files to *tlsFiles (see controlServerTLS).
func addDirectorFlags(f *pflag.FlagSet, cfg *director.Config, hostKeyFile *string, tlsFiles *control.TLSFiles) {
	f.StringVar(&cfg.HTTP, "http", cfg.HTTP, "HTTP API listen address")
	f.StringVar(&cfg.Control, "control", cfg.Control, "control-channel listen address for area hosts (host:port or unix:/path)")
	f.StringVar(&cfg.Metrics, "metrics", cfg.Metrics, "listen address of GET /metrics, a listener apart from the public API: loopback by default (port 0: a free one, logged at start), a private interface at most (\"\": off)")
	f.IntVar(&cfg.ControlMaxUnregistered, "control-max-unregistered", cfg.ControlMaxUnregistered, "control connections that may wait to register at once; past it a new one is closed at once")
	f.DurationVar(&cfg.ControlRegisterTimeout, "control-register-timeout", cfg.ControlRegisterTimeout, "how long a control connection may take to register (until then its frames are held to 16 KiB)")
	f.StringVar(&cfg.HostKey, "host-key", "", "key that lets area hosts started elsewhere register (empty: only spawned hosts, and hosts with a certificate of --control-tls-ca); from another machine only over TLS or with --control-insecure")
	f.StringVar(hostKeyFile, "host-key-file", "", "file holding the host key (mode 600), instead of LEY_HOST_KEY")
	f.StringVar(&tlsFiles.Cert, "control-tls-cert", "", "PEM certificate (chain) the control listener serves TLS 1.3 with; with --control-tls-key and --control-tls-ca, hosts on other machines register over mutual TLS")
	f.StringVar(&tlsFiles.Key, "control-tls-key", "", "PEM private key of --control-tls-cert (mode 600); both are read again when they change")
	f.StringVar(&tlsFiles.CA, "control-tls-ca", "", "PEM CA bundle that signs the area hosts' client certificates: a host with one registers without the host key")
	f.BoolVar(&cfg.ControlInsecure, "control-insecure", false, "let hosts on other machines register with the host key over a plain, unencrypted control link (a private network you trust)")
	f.StringSliceVar(&cfg.WebOrigins, "web-origins", nil, "origins (scheme://host:port, comma-separated) of the pages that may open player connections to the realm's hosts, passed to the hosts this director spawns (default: this director's own web origin)")
	f.StringVar(&cfg.AdvertiseHTTP, "advertise-http", "", "URL other directors of the realm forward API requests to while this one leads (default http://<--http>, an unspecified IP replaced by the hostname)")
	f.StringVar(&cfg.AdvertiseControl, "advertise-control", "", "control address area hosts are sent to while this director leads (default --control, an unspecified IP replaced by the hostname)")
	f.IntVar(&cfg.Spawn.MinHosts, "min-hosts", cfg.Spawn.MinHosts, "area host processes kept running")
	f.IntVar(&cfg.Spawn.MaxHosts, "max-hosts", cfg.Spawn.MaxHosts, "process rail: most area host processes ever started at once")
	f.IntVar(&cfg.Spawn.PoolSize, "pool-size", cfg.Spawn.PoolSize, "Areas per area host (0: by capacity, the host memory limit over 128 KiB per Area slot)")
	f.IntVar(&cfg.Spawn.TickRate, "tick-rate", cfg.Spawn.TickRate, "simulation ticks per second of the hosts (a multiple of 4)")
	f.IntVar(&cfg.Spawn.InterestRadius, "interest-radius", cfg.Spawn.InterestRadius, "how far a player sees, in squares (0: everything)")
	f.IntVar(&cfg.Spawn.CellSize, "cell-size", cfg.Spawn.CellSize, "spatial hash cell side, in squares")
	f.DurationVar(&cfg.Spawn.PersistEvery, "persist-every", cfg.Spawn.PersistEvery, "snapshot cadence of active Areas")
	f.DurationVar(&cfg.Spawn.ResumeGrace, "resume-grace", cfg.Spawn.ResumeGrace, "how long a dropped player's body waits for a resume")
	f.DurationVar(&cfg.Spawn.ParkAfter, "park-after", cfg.Spawn.ParkAfter, "how long the hosts keep an Area frozen with nothing to do before they park it: only its state's blob is kept, and it is built again when someone comes (0: never)")
	f.DurationVar(&cfg.Spawn.TransferTimeout, "transfer-timeout", cfg.Spawn.TransferTimeout, "how long a host waits for a portal crossing's answer before restoring the player")
	f.StringVar(&cfg.Spawn.MemLimit, "host-mem-limit", cfg.Spawn.MemLimit, "GOMEMLIMIT of each area host")
	f.StringVar(&cfg.Spawn.Listen, "host-listen", cfg.Spawn.Listen, "interface the hosts' client listeners bind")
	f.StringVar(&cfg.Spawn.LogLevel, "host-log-level", cfg.Spawn.LogLevel, "log level of the area hosts")
	f.IntVar(&cfg.Spawn.MaxConnsPerAddr, "host-max-conns-per-addr", 0, "handshakes and connections one client address may hold on each spawned host (0: the hosts' default, 256; raise for players behind one NAT)")
	f.IntVar(&cfg.Spawn.MaxHandshakesPerAddr, "host-max-handshakes-per-addr", 0, "handshakes in progress one client address may hold on each spawned host (0: the hosts' default, 16; raise for players behind one NAT)")
	f.DurationVar(&cfg.Spawn.ShutdownGrace, "host-shutdown-grace", cfg.Spawn.ShutdownGrace, "how long the players of a spawned host that stops are told their Area closes before it does (their --shutdown-grace; at most 2s)")
	f.BoolVar(&cfg.Spawn.HugePages, "host-huge-pages", cfg.Spawn.HugePages, "have the spawned hosts advise the kernel to back their Go heaps with transparent huge pages (their --huge-pages)")
	f.BoolVar(&cfg.Spawn.Writev, "host-writev", false, "have the spawned hosts write each connection with its own writev(2) instead of one io_uring submission per batch (their --writev)")
	f.DurationVar(&cfg.HostLease, "host-lease", cfg.HostLease, "how long an area host keeps its players without hearing this director answer its heartbeats (a partition, a director restart); the director makes a cut-off host's Areas live elsewhere only after it")
	f.DurationVar(&cfg.Spawn.OrphanTimeout, "host-orphan-timeout", cfg.Spawn.OrphanTimeout, "how long a spawned host waits for the next director after this one stops or dies, before it closes its Areas and exits")
	f.DurationVar(&cfg.AreaIdleGrace, "area-idle-grace", cfg.AreaIdleGrace, "how long an Area without players stays loaded")
	f.DurationVar(&cfg.CloseGrace, "close-grace", cfg.CloseGrace, "grace players get when the realm is drained")
	f.DurationVar(&cfg.SampleEvery, "sample-every", cfg.SampleEvery, "cadence of director_samples rows")
	f.DurationVar(&cfg.StatsEvery, "stats-every", cfg.StatsEvery, "cadence of the director's stats log line (0: off)")
	f.IntVar(&cfg.Spawn.SnapshotEvery, "snapshot-every", cfg.Spawn.SnapshotEvery, "ticks between client snapshots on the hosts")
	f.IntVar(&cfg.AuthBurst, "auth-burst", cfg.AuthBurst, "login and sign-up attempts a client address may make at once")
	f.DurationVar(&cfg.APIEvery, "api-every", cfg.APIEvery, "a session may make one authenticated API request per this, past its burst")
	f.IntVar(&cfg.APIBurst, "api-burst", cfg.APIBurst, "authenticated API requests a session may make at once")
	f.DurationVar(&cfg.AuthEvery, "auth-every", cfg.AuthEvery, "after the burst, one more attempt per this period")
	f.IntVar(&cfg.LoginFreeFailures, "login-free-failures", cfg.LoginFreeFailures, "wrong passwords for one account from one address before that address must wait")
	f.DurationVar(&cfg.LoginDelay, "login-delay", cfg.LoginDelay, "first wait after the free failures; it doubles with each further failure")
	f.DurationVar(&cfg.LoginMaxDelay, "login-max-delay", cfg.LoginMaxDelay, "longest wait between login attempts for one account from one address")
	f.IntVar(&cfg.MaxOwnedAreas, "max-owned-areas", cfg.MaxOwnedAreas, "Areas an account may own (admins exempt; 0: no limit)")
	f.Int64Var(&cfg.MaxOwnedSquares, "max-owned-squares", cfg.MaxOwnedSquares, "squares an account's Areas may cover together (admins exempt; 0: no limit)")
	f.IntVar(&cfg.MaxLiveInvites, "max-live-invites", cfg.MaxLiveInvites, "invites that can still be redeemed an account (not an admin) may have; 0: no quota")
	f.Int64Var(&cfg.HostSnapshotRate, "host-snapshot-rate", cfg.HostSnapshotRate, "bytes of snapshots a second each host may send past its burst (more wait unacked on the host)")
	f.Int64Var(&cfg.HostSnapshotBurst, "host-snapshot-burst", cfg.HostSnapshotBurst, "bytes of snapshots each host may send at once (at least one largest blob, 8 MiB)")
	f.IntVar(&cfg.MaxPendingGrants, "max-pending-grants", cfg.MaxPendingGrants, "joins an account may hold answered but not yet used (0: no limit)")
	f.IntVar(&cfg.JoinsPerMinute, "joins-per-minute", cfg.JoinsPerMinute, "joins an account may ask for a minute (0: no limit)")
	f.BoolVar(&cfg.LoadProvisioning, "load-provisioning", false, "serve POST /v1/admin/provision, the bulk accounts and Areas of ley load and ley ladder (a realm run for load tests; off: the route is 404)")
	f.Var(prefixList{&cfg.TrustedProxies}, "trusted-proxies", "addresses or CIDRs (comma-separated) of the proxies in front of this director whose X-Forwarded-For it believes: the realm's other directors (followers forward here) and load balancers; rate limits then key on the client behind them")
	f.Var(areaIDList{&cfg.StarterAreas}, "starter-areas", "Areas (ids, comma-separated) every new account becomes a member of at sign-up; the director refuses to start while one does not exist")
}

// controlServerTLS sets cfg.ControlTLS from the --control-tls-* files,
// when any is given (all three are needed then).
func controlServerTLS(cfg *director.Config, f control.TLSFiles) error {
	if f == (control.TLSFiles{}) {
		return nil
	}
	c, err := control.ServerTLS(f)
	if err != nil {
		return fmt.Errorf("--control-tls-*: %w", err)
	}
	cfg.ControlTLS = c
	return nil
}

// prefixList is a flag of comma-separated addresses or CIDRs (an address
// alone is its /32 or /128); each use adds to the list.
type prefixList struct{ ps *[]netip.Prefix }

func (l prefixList) String() string {
	if l.ps == nil {
		return ""
	}
	s := make([]string, len(*l.ps))
	for i, p := range *l.ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func (l prefixList) Set(v string) error {
	for f := range strings.SplitSeq(v, ",") {
		f = strings.TrimSpace(f)
		if p, err := netip.ParsePrefix(f); err == nil {
			*l.ps = append(*l.ps, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return fmt.Errorf("%q: not an address or a CIDR", f)
		}
		*l.ps = append(*l.ps, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return nil
}

func (l prefixList) Type() string { return "cidrs" }

// areaIDList is a flag of comma-separated Area ids; each use adds to the
// list.
type areaIDList struct{ ids *[]store.AreaID }

func (l areaIDList) String() string {
	if l.ids == nil {
		return ""
	}
	s := make([]string, len(*l.ids))
	for i, id := range *l.ids {
		s[i] = strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(s, ",")
}

func (l areaIDList) Set(v string) error {
	for f := range strings.SplitSeq(v, ",") {
		id, err := strconv.ParseUint(strings.TrimSpace(f), 10, 32)
		if err != nil {
			return fmt.Errorf("area id %q: not a number", f)
		}
		*l.ids = append(*l.ids, store.AreaID(id))
	}
	return nil
}

func (l areaIDList) Type() string { return "ids" }

func newDirectorCmd() *cobra.Command {
	cfg := director.DefaultConfig()
	var sf storeFlags
	var logLevel, pprofAddr, hostKeyFile, contentDir string
	var tlsFiles control.TLSFiles
	cmd := &cobra.Command{
		Use:   "director",
		Short: "Run a realm's director: HTTP API, control channel, area lifecycle, persistence",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logger = newLogger(logLevel)
			if err := secretFromFile(&cfg.HostKey, hostKeyFile, "host-key", cfg.Logger); err != nil {
				return err
			}
			if err := controlServerTLS(&cfg, tlsFiles); err != nil {
				return err
			}
			if err := directorContent(&cfg, contentDir); err != nil {
				return err
			}
			ctx, realm, stop := realmSignals(cmd.Context())
			defer stop()
			stopObs, err := observe("director", "director", pprofAddr, cfg.Logger)
			if err != nil {
				return err
			}
			defer stopObs()
			st, what, err := sf.open(ctx)
			if err != nil {
				return err
			}
			cfg.Logger.Info("store open", "store", what)
			d, err := director.New(cfg, st)
			if err != nil {
				st.Close()
				return err
			}
			realm.Store(d)
			return d.Run(ctx, nil, nil)
		},
	}
	sf.add(cmd.Flags())
	addDirectorFlags(cmd.Flags(), &cfg, &hostKeyFile, &tlsFiles)
	addContentFlag(cmd.Flags(), &contentDir)
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	cmd.Flags().StringVar(&pprofAddr, "pprof", "127.0.0.1:0", "loopback address serving /debug/pprof (\"\": off); continuous profiling: set LEY_PYROSCOPE_URL")
	return cmd
}

func newMigrateCmd() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the store's schema migrations and exit (the director also applies them at start)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, what, err := sf.open(cmd.Context()) // opening migrates
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.Migrate(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "store migrated: %s\n", what)
			return nil
		},
	}
	sf.add(cmd.Flags())
	return cmd
}

// defaultDemoPassword is the demo account's documented password.
const defaultDemoPassword = "demo-password"

// browserAddr is the address a browser on this machine opens for the
// API's listen address: a wildcard host (all interfaces) is reached on
// the loopback.
func browserAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

func newRunCmd() *cobra.Command {
	cfg := director.DefaultConfig()
	var sf storeFlags
	var logLevel, demoEmail, demoPassword, pprofAddr, hostKeyFile, contentDir string
	var tlsFiles control.TLSFiles
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a whole realm on this machine: director, spawned area hosts, the store, a seeded demo",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logger = newLogger(logLevel)
			if err := secretFromFile(&cfg.HostKey, hostKeyFile, "host-key", cfg.Logger); err != nil {
				return err
			}
			if err := controlServerTLS(&cfg, tlsFiles); err != nil {
				return err
			}
			if err := directorContent(&cfg, contentDir); err != nil {
				return err
			}
			ctx, realm, stop := realmSignals(cmd.Context())
			defer stop()
			stopObs, err := observe("director", "director", pprofAddr, cfg.Logger)
			if err != nil {
				return err
			}
			defer stopObs()
			st, what, err := sf.open(ctx)
			if err != nil {
				return err
			}
			d, err := director.New(cfg, st)
			if err != nil {
				st.Close()
				return err
			}
			realm.Store(d)
			httpLn, ctlLn, err := d.Listen()
			if err != nil {
				st.Close()
				return err
			}
			demo, err := d.SeedDemo(ctx, demoEmail, demoPassword)
			if err != nil {
				st.Close()
				return err
			}
			// A new player of the demo realm joins the village at once, and may
			// walk through its portal into the arena.
			d.AddStarterAreas(demo.Area, demo.Arena)
			// The landing page offers the demo in one click, but only with
			// the documented password: one set by the operator stays theirs.
			if demoPassword == defaultDemoPassword {
				d.OfferDemoLogin(demo.Email, demo.Password)
			}
			api, _ := d.Addrs()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "ley realm up\n  open http://%s to play (in your browser)\n", browserAddr(api))
			fmt.Fprintf(out, "  console:      http://%s/console  (admins: the realm's door, hosts and Areas live, spectating an Area, capacity charts)\n", browserAddr(api))
			fmt.Fprintf(out, "  store:        %s\n  director API: http://%s  (GET /director/info)\n", what, api)
			if m := d.MetricsAddr(); m != "" {
				fmt.Fprintf(out, "  metrics:      http://%s/metrics  (Prometheus; not on the API port)\n", m)
			}
			fmt.Fprintf(out, "  API:          http://%s/v1/openapi.yaml  (OpenAPI 3.1: every route, its answers and errors)\n", api)
			fmt.Fprintf(out, "  content:      %s\n", contentLine(contentDir))
			// The documented password is public; one the operator set is a
			// secret, never printed (a terminal's scrollback, a log file).
			shown := demo.Password
			if demoPassword != defaultDemoPassword {
				shown = "(the password in LEY_DEMO_PASSWORD)"
			}
			fmt.Fprintf(out, "  demo login:   %s / %s  (an admin; owns the village Area %d, the arena Area %d, the home Area %d)\n",
				demo.Email, shown, demo.Area, demo.Arena, demo.Home)
			fmt.Fprintf(out, "  the world:    the village's portal leads to the arena and its creatures, the arena's portal back\n")
			fmt.Fprintf(out, "  new players:  POST /v1/accounts {email, password, name}: each is a member of the village Area %d and the arena Area %d (starter Areas)\n", demo.Area, demo.Arena)
			login := fmt.Sprintf(`'{"email":"%s","password":"%s"}'`, demo.Email, demo.Password)
			if demoPassword != defaultDemoPassword {
				login = fmt.Sprintf(`"{\"email\":\"%s\",\"password\":\"$LEY_DEMO_PASSWORD\"}"`, demo.Email) // the shell fills it in
			}
			fmt.Fprintf(out, "  join it:      curl -s -X POST -H 'Content-Type: application/json' http://%s/v1/session -d %s\n", api, login)
			fmt.Fprintf(out, "                curl -s -X POST -H 'Authorization: Bearer <token>' http://%s/v1/areas/%d/join\n", api, demo.Area)
			fmt.Fprintf(out, "                then open ws_url and send hello{grant, join_id}: join_id is a decimal string in JSON,\n")
			fmt.Fprintf(out, "                hello carries the uint64 it spells (docs/protocol.md)\n  Ctrl-C stops the realm (SIGTERM stops the director alone: its hosts play on for the next one).\n")
			return d.Run(ctx, httpLn, ctlLn)
		},
	}
	sf.add(cmd.Flags())
	addDirectorFlags(cmd.Flags(), &cfg, &hostKeyFile, &tlsFiles)
	addContentFlag(cmd.Flags(), &contentDir)
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	cmd.Flags().StringVar(&demoEmail, "demo-email", "demo@ley.local", "email of the seeded demo account")
	cmd.Flags().StringVar(&demoPassword, "demo-password", defaultDemoPassword, "password of the seeded demo account")
	cmd.Flags().StringVar(&pprofAddr, "pprof", "127.0.0.1:0", "loopback address serving /debug/pprof (\"\": off); continuous profiling: set LEY_PYROSCOPE_URL")
	return cmd
}
