package pgtest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/leyworks/ley/internal/testport"
)

// StopMode is how Cluster.Stop stops the server (pg_ctl -m).
type StopMode string

// The stop modes.
const (
	// StopFast ends every session (FATAL 57P01: "terminating connection
	// due to administrator command") and shuts down cleanly.
	StopFast StopMode = "fast"
	// StopImmediate kills the server as a crash would: the next Start
	// recovers from the WAL.
	StopImmediate StopMode = "immediate"
)

// Cluster is a private Postgres cluster for a test that stops and starts
// its database: never the shared one at URL, which other packages' tests
// use at the same time. Its data lives in the test's TempDir; it listens
// on a port of its own on 127.0.0.1 and on a unix socket in a directory
// of its own. Run as root, the cluster runs as the postgres OS user
// (Postgres refuses root), through runuser. Cleanup stops it and removes
// its files. Call its methods from the test's goroutine: they fail the
// test on an error.
type Cluster struct {
	tb      testing.TB
	bin     string   // the directory of initdb, pg_ctl and postgres
	as      []string // the command prefix that runs as the cluster's owner, or nil
	dir     string   // the cluster's own directory (owned by its OS user)
	data    string   // its data directory
	sock    string   // its unix socket directory
	port    int
	running bool
}

// NewCluster initialises a private cluster (initdb) and starts it. It
// skips tb when Postgres's server programs (initdb) are not installed,
// unless LEY_CI=1, where it fails tb: CI must run the tests it has.
func NewCluster(tb testing.TB) *Cluster {
	tb.Helper()
	bin, err := serverBin()
	if err != nil {
		if os.Getenv("LEY_CI") == "1" {
			tb.Fatalf("a private Postgres cluster: %v (LEY_CI=1: not skipped)", err)
		}
		tb.Skipf("a private Postgres cluster: %v", err)
	}
	c := &Cluster{tb: tb, bin: bin, dir: tb.TempDir()}
	// The socket's path must stay under the 107 bytes of sun_path: a
	// short directory of its own rather than one below TempDir.
	if c.sock, err = os.MkdirTemp("", "leypg"); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(c.sock) })
	c.data = filepath.Join(c.dir, "data")
	if os.Geteuid() == 0 {
		c.runAsPostgres()
	}
	if c.port, err = freePort(); err != nil {
		tb.Fatal(err)
	}
	c.run("initdb", "-D", c.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	conf, err := os.OpenFile(filepath.Join(c.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	// Durability is not under test here: no fsync, a small footprint.
	_, err = fmt.Fprintf(conf, `
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
max_connections = 40
shared_buffers = 16MB
fsync = off
synchronous_commit = off
full_page_writes = off
`, c.port, c.sock)
	if err := errors.Join(err, conf.Close()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if c.running {
			c.pgCtl("stop", "-m", string(StopImmediate))
		}
	})
	c.Start()
	return c
}

// URL is the cluster's postgres database over TCP on 127.0.0.1.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// SocketURL is the cluster's postgres database over its unix socket.
func (c *Cluster) SocketURL() string {
	q := url.Values{"host": {c.sock}, "port": {strconv.Itoa(c.port)}, "sslmode": {"disable"}}
	return "postgres://postgres@/postgres?" + q.Encode()
}

// Start starts the stopped cluster and waits until it accepts
// connections (recovering first after StopImmediate).
func (c *Cluster) Start() { c.start() }

// StartSocketOnly starts the stopped cluster listening on its unix socket
// only: clients of SocketURL reach it, those of URL are refused, as
// though a network cut them off.
func (c *Cluster) StartSocketOnly() { c.start("-o", "-c listen_addresses=''") }

func (c *Cluster) start(opts ...string) {
	c.tb.Helper()
	if c.running {
		c.tb.Fatal("pgtest: Start of a running cluster")
	}
	c.pgCtl(append([]string{"start", "-l", filepath.Join(c.dir, "postgres.log")}, opts...)...)
	c.running = true
}

// Stop stops the cluster in mode and waits until it is down.
func (c *Cluster) Stop(mode StopMode) {
	c.tb.Helper()
	if !c.running {
		c.tb.Fatal("pgtest: Stop of a stopped cluster")
	}
	c.pgCtl("stop", "-m", string(mode))
	c.running = false
}

func (c *Cluster) pgCtl(args ...string) {
	c.tb.Helper()
	c.run("pg_ctl", append([]string{"-D", c.data, "-w", "-t", "60"}, args...)...)
}

// run runs one of the server programs as the cluster's owner, failing
// tb with its output (and the server's log) when it fails.
func (c *Cluster) run(prog string, args ...string) {
	c.tb.Helper()
	argv := append(slices.Clone(c.as), append([]string{filepath.Join(c.bin, prog)}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
		c.tb.Fatalf("pgtest: %s %v: %v\n%s\nserver log:\n%s", prog, args, err, out.Bytes(), log)
	}
}

// runAsPostgres arranges for the server programs to run as the postgres
// OS user: its directories are handed to it, and TempDir's parent (0700)
// opened to traversal.
func (c *Cluster) runAsPostgres() {
	c.tb.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		c.tb.Fatalf("pgtest: running as root, and no postgres user to run a cluster as: %v", err)
	}
	runuser, err := exec.LookPath("runuser")
	if err != nil {
		c.tb.Fatalf("pgtest: running as root, and no runuser to run a cluster as postgres: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, d := range []string{c.dir, c.sock} {
		if err := os.Chown(d, uid, gid); err != nil {
			c.tb.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Dir(c.dir), 0o711); err != nil {
		c.tb.Fatal(err)
	}
	c.as = []string{runuser, "-u", "postgres", "--"}
}

// serverBin finds the directory of initdb: on PATH, or where Debian's
// packages put it.
func serverBin() (string, error) {
	path, err := exec.LookPath("initdb")
	if err != nil {
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
		if len(found) == 0 {
			return "", fmt.Errorf("initdb is not installed (not on PATH, nor in /usr/lib/postgresql/*/bin)")
		}
		// The newest major version: a longer number is a later one.
		path = slices.MaxFunc(found, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b)) })
	}
	if path, err = filepath.EvalSymlinks(path); err != nil {
		return "", err
	}
	return filepath.Dir(path), nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago,
// outside the ephemeral range: the cluster is restarted on it.
func freePort() (int, error) {
	addr, err := testport.Loopback()
	if err != nil {
		return 0, err
	}
	_, port, _ := net.SplitHostPort(addr)
	return strconv.Atoi(port)
}
