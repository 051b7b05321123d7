package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/leyworks/ley/area"
	"github.com/leyworks/ley/area/agones"
	"github.com/leyworks/ley/internal/hugepages"
	"github.com/leyworks/ley/net/control"
	"github.com/spf13/cobra"
)

func newAreahostCmd() *cobra.Command {
	cfg := area.DefaultConfig()
	var logLevel, pprofAddr, hostKeyFile, contentDir string
	var tickStatsSec int
	var withAgones, hugePages bool
	var tlsFiles control.TLSFiles
	cmd := &cobra.Command{
		Use:   "areahost",
		Short: "Run an area host: a pool of Areas behind one WebSocket listener, registered with a director",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logger = newLogger(logLevel)
			if err := secretFromFile(&cfg.HostKey, hostKeyFile, "host-key", cfg.Logger); err != nil {
				return err
			}
			if tlsFiles != (control.TLSFiles{}) {
				c, err := control.ClientTLS(tlsFiles)
				if err != nil {
					return fmt.Errorf("--control-tls-*: %w", err)
				}
				cfg.ControlTLS = c
			}
			cfg.TickStatsEvery = time.Duration(tickStatsSec) * time.Second
			lib, err := loadContent(contentDir)
			if err != nil {
				return err
			}
			cfg.Content = lib
			if cfg.Name == "" {
				cfg.Name = hostname()
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			var lc *agones.Lifecycle
			if withAgones {
				var err error
				if lc, err = agonesLifecycle(ctx, &cfg); err != nil {
					return err
				}
			}
			h, err := area.New(cfg)
			if err != nil {
				return err
			}
			stopObs, err := observe("areahost", cfg.Name, pprofAddr, cfg.Logger)
			if err != nil {
				return err
			}
			defer stopObs()
			if hugePages {
				go hugepages.Keep(ctx, 10*time.Second, func(err error) {
					cfg.Logger.Warn("the heap is not advised huge pages", "err", err)
				})
			}
			runErr := h.Run(ctx)
			if lc != nil && runErr == nil { // drained: the GameServer may go
				sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := lc.Shutdown(sctx); err != nil {
					cfg.Logger.Error("agones: shutdown", "err", err)
				}
			}
			return runErr
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:7100", "client WebSocket listen address")
	f.StringSliceVar(&cfg.AllowedOrigins, "allowed-origins", nil, "web origins (scheme://host:port, comma-separated) whose pages may open player connections; connections without an Origin (programs) are always accepted; \"*\" allows any (a director passes its own to the hosts it spawns)")
	f.StringVar(&cfg.PublicURL, "public-url", "", "ws:// or wss:// URL clients are sent to (default ws://<listen>/ws); wss:// names the TLS-terminating proxy in front of the host")
	f.StringVar(&cfg.Director, "director", cfg.Director, "director control address (host:port or unix:/path); a realm's several directors comma-separated: the host registers with the one that leads")
	f.StringVar(&cfg.SpawnToken, "spawn-token", "", "token given by the director that spawned this host (the director sets it)")
	f.StringVar(&cfg.HostKey, "host-key", "", "the realm's host key, for a host started on another machine")
	f.StringVar(&hostKeyFile, "host-key-file", "", "file holding the realm's host key (mode 600), instead of LEY_HOST_KEY")
	f.StringVar(&tlsFiles.Cert, "control-tls-cert", "", "PEM client certificate (chain) the host presents to its directors over TLS 1.3: signed by the director's --control-tls-ca, it replaces the host key")
	f.StringVar(&tlsFiles.Key, "control-tls-key", "", "PEM private key of --control-tls-cert (mode 600); both are read again when they change")
	f.StringVar(&tlsFiles.CA, "control-tls-ca", "", "PEM CA bundle that verifies the directors' certificates")
	f.StringVar(&tlsFiles.ServerName, "control-tls-server-name", "", "name the directors' certificates must carry (default: the host part of each --director address)")
	f.BoolVar(&cfg.ControlInsecure, "control-insecure", false, "send the host key to directors on other machines over a plain, unencrypted link (a private network you trust)")
	f.StringVar(&cfg.Name, "name", "", "host name in the director's registry (default: the machine's hostname)")
	addContentFlag(f, &contentDir)
	f.IntVar(&cfg.PoolSize, "pool-size", cfg.PoolSize, "maximum Areas this host runs (1 to 65536)")
	f.IntVar(&cfg.TickRate, "tick-rate", cfg.TickRate, "simulation ticks per second (a multiple of 4)")
	f.IntVar(&cfg.SnapshotEvery, "snapshot-every", cfg.SnapshotEvery, "ticks between client snapshots")
	f.IntVar(&cfg.InterestRadius, "interest-radius", cfg.InterestRadius, "how far a player sees, in squares (0: everything)")
	f.IntVar(&cfg.CellSize, "cell-size", cfg.CellSize, "spatial hash cell side, in squares")
	f.DurationVar(&cfg.PersistEvery, "persist-every", cfg.PersistEvery, "snapshot cadence to the director while an Area is active")
	f.DurationVar(&cfg.ResumeGrace, "resume-grace", cfg.ResumeGrace, "how long a dropped player's body waits for a resume")
	f.DurationVar(&cfg.ParkAfter, "park-after", cfg.ParkAfter, "how long an Area stays frozen with nothing to do before it parks: it keeps only its state's blob and is built again when someone comes (0: never)")
	f.Float64Var(&cfg.IntentRate, "intent-rate", cfg.IntentRate, "intents per second per connection")
	f.IntVar(&cfg.IntentBurst, "intent-burst", cfg.IntentBurst, "intent burst per connection")
	f.IntVar(&cfg.FloodClose, "flood-close", cfg.FloodClose, "level of a connection's flood meter that closes it (1008): each rate-limited intent adds 1 and it drains at half the intent rate, so 1.5x the rate is never closed and 2x is after about 2*N/rate seconds")
	f.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", cfg.ShutdownGrace, "grace players get when the host stops")
	f.DurationVar(&cfg.HelloTimeout, "hello-timeout", cfg.HelloTimeout, "a connection not bound by a hello or resume this long after its upgrade is closed")
	f.IntVar(&cfg.Gate.MaxConnsPerAddr, "max-conns-per-addr", cfg.Gate.MaxConnsPerAddr, "handshakes and connections one client address may hold (raise for venues behind one NAT)")
	f.IntVar(&cfg.Gate.MaxHandshakesPerAddr, "max-handshakes-per-addr", cfg.Gate.MaxHandshakesPerAddr, "handshakes in progress one client address may hold")
	f.BoolVar(&cfg.Gate.Writev, "writev", false, "write each connection with its own writev(2) as it has something to send, instead of one io_uring submission per batch of the gate's event loop (io_uring is used where the kernel allows it; the log's \"gate listening\" line says which)")
	f.DurationVar(&cfg.TransferTimeout, "transfer-timeout", cfg.TransferTimeout, "how long a portal crossing waits for the director before the player is restored")
	f.StringVar(&exitReasonFile, "exit-reason-file", "", "file to write the error the host exits with to (a director that spawns the host sets it, to report why a host could not start)")
	f.DurationVar(&cfg.OrphanTimeout, "orphan-timeout", cfg.OrphanTimeout, "stop (closing the Areas) once no director has taken this host for this long (0: wait for ever; a director passes 5m to the hosts it spawns, which outlive it for the next director to adopt)")
	f.IntVar(&tickStatsSec, "tick-stats-sec", 0, "log every active Area's tick stats every N seconds (0: off)")
	f.BoolVar(&hugePages, "huge-pages", true, "advise the kernel to back the Go heap with transparent huge pages, where /sys/kernel/mm/transparent_hugepage/enabled is \"madvise\": fewer TLB misses on the Areas' state, for more resident memory (bench/RESULTS.md)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.StringVar(&pprofAddr, "pprof", "127.0.0.1:0", "loopback address serving /debug/pprof (\"\": off); continuous profiling: set LEY_PYROSCOPE_URL")
	f.BoolVar(&withAgones, "agones", false, "run as an Agones GameServer: speak to the SDK sidecar (AGONES_SDK_HTTP_PORT) for health, Ready, labels and Shutdown; the ws:// URL defaults to the GameServer's address and its \"client\" port")
	return cmd
}

// agonesLifecycle connects the host to the Agones SDK sidecar: health
// pings start at once, and a host without --public-url is reached at the
// GameServer's address and the host port of its "client" port.
func agonesLifecycle(ctx context.Context, cfg *area.Config) (*agones.Lifecycle, error) {
	base, err := agones.BaseURLFromEnv()
	if err != nil {
		return nil, err
	}
	ccfg := agones.DefaultClientConfig()
	ccfg.BaseURL = base
	c, err := agones.NewClient(ccfg)
	if err != nil {
		return nil, err
	}
	lcfg := agones.DefaultConfig()
	lcfg.Logger = cfg.Logger
	lc, err := agones.NewLifecycle(c, lcfg)
	if err != nil {
		return nil, err
	}
	go lc.Run(ctx)
	if cfg.PublicURL == "" {
		addr, err := lc.Address(ctx, "client")
		if err != nil {
			return nil, fmt.Errorf("agones: the GameServer's address: %w", err)
		}
		cfg.PublicURL = "ws://" + addr + "/ws"
	}
	cfg.Agones = lc
	return lc, nil
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "areahost"
	}
	return h
}

// newLogger returns a JSON slog logger on stderr at the named level.
func newLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}
