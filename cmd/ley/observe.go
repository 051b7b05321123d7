package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/pyroscope-go"
)

// startPprof serves /debug/pprof on addr, which must be a loopback address
// (profiles expose the process's insides); "" serves nothing. It returns
// the bound address and a stop function.
func startPprof(addr string, log *slog.Logger) (string, func(), error) {
	if addr == "" {
		return "", func() {}, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("pprof address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", nil, fmt.Errorf("pprof address %q: profiles are served on loopback only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("pprof listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", redactedCmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof server", "err", err)
		}
	}()
	log.Info("pprof serving", "addr", ln.Addr().String())
	return ln.Addr().String(), func() { srv.Close() }, nil
}

// redactedCmdline serves /debug/pprof/cmdline as pprof.Cmdline does (the
// arguments, NUL-separated), with the value of every flag of
// redactedFlags replaced: secrets are refused on the command line anyway
// (bindEnvAll), and this endpoint never shows one that got through.
func redactedCmdline(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, strings.Join(redactArgs(os.Args), "\x00"))
}

// redactArgs returns args with the values of redactedFlags replaced by
// "[redacted]", in both forms (--flag value and --flag=value).
func redactArgs(args []string) []string {
	out := slices.Clone(args)
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !redactedFlags[name] {
			continue
		}
		if inline {
			out[i] = a[:strings.Index(a, "=")+1] + "[redacted]"
		} else if i+1 < len(out) {
			out[i+1] = "[redacted]"
			i++
		}
	}
	return out
}

// startPyroscope pushes continuous profiles to LEY_PYROSCOPE_URL when it is
// set, as application "ley.<role>" tagged with the role, the process's
// name and pid. LEY_PYROSCOPE_UPLOAD_RATE (a duration, default 15s) sets
// the push period. Unset, it does nothing.
func startPyroscope(role, name string, log *slog.Logger) (func(), error) {
	url := os.Getenv("LEY_PYROSCOPE_URL")
	if url == "" {
		return func() {}, nil
	}
	rate := 15 * time.Second
	if s := os.Getenv("LEY_PYROSCOPE_UPLOAD_RATE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("LEY_PYROSCOPE_UPLOAD_RATE=%q: a positive duration, please", s)
		}
		rate = d
	}
	p, err := pyroscope.Start(pyroscope.Config{
		ApplicationName: "ley." + role,
		ServerAddress:   url,
		UploadRate:      rate,
		Tags:            map[string]string{"role": role, "name": name, "pid": strconv.Itoa(os.Getpid())},
		ProfileTypes:    []pyroscope.ProfileType{pyroscope.ProfileCPU, pyroscope.ProfileAllocObjects, pyroscope.ProfileInuseSpace, pyroscope.ProfileGoroutines},
	})
	if err != nil {
		return nil, fmt.Errorf("pyroscope: %w", err)
	}
	log.Info("continuous profiling on", "server", url, "application", "ley."+role)
	return func() { _ = p.Stop() }, nil
}

// observe starts pprof and pyroscope for a process of role; the returned
// function stops both.
func observe(role, name, pprofAddr string, log *slog.Logger) (func(), error) {
	_, stopPprof, err := startPprof(pprofAddr, log)
	if err != nil {
		return nil, err
	}
	stopPyro, err := startPyroscope(role, name, log)
	if err != nil {
		stopPprof()
		return nil, err
	}
	return func() { stopPyro(); stopPprof() }, nil
}
