package director

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/internal/testpki"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// netnsRequired, when set (CI sets it), makes the network namespace test
// fail rather than skip where namespaces are forbidden: CI proves it ran.
const netnsRequired = "LEY_REQUIRE_NETNS"

// netnsPrefix starts the name of every namespace the tests make, followed
// by the test process's pid: a later run removes those of dead runs.
const netnsPrefix = "leytest-"

// lab is a small network on this machine, made by the test and removed
// at its cleanup: a bridge in the test's own namespace holding
// 10.77.<octet>.1/24, and one network namespace per area host with
// 10.77.<octet>.(10+i)/24 on a veth pair into the bridge. Nothing is
// routed anywhere else.
type lab struct {
	t      *testing.T
	id     string
	octet  int
	bridge string
	hosts  []labHost
}

// labHost is one host's namespace and its link.
type labHost struct {
	ns   string // the network namespace
	veth string // the veth end on the bridge (cut here)
	ip   string
}

// ipCmd runs ip(8) with args.
func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// forbidden skips t (or fails it, when netnsRequired is set) because this
// machine's kernel forbids network namespaces to the test.
func forbidden(t *testing.T, why error) {
	t.Helper()
	if os.Getenv(netnsRequired) != "" {
		t.Fatalf("network namespaces are forbidden here (%v), but %s is set: the multi-machine test must run", why, netnsRequired)
	}
	t.Skipf("SKIPPED: network namespaces are forbidden here (%v): the test of hosts on other machines (in their own network namespaces) did not run", why)
}

// removeStale removes the namespaces and bridges of earlier runs whose
// process died before its cleanup.
func removeStale() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(name, netnsPrefix)
		if !ok {
			continue
		}
		parts := strings.Split(rest, "-") // pid, id, host
		if len(parts) != 3 {
			continue
		}
		if pid, err := strconv.Atoi(parts[0]); err == nil && syscall.Kill(pid, 0) == nil {
			continue // its test still runs
		}
		_ = ipCmd("netns", "del", name)
		_ = ipCmd("link", "del", "leybr"+parts[1])
	}
}

// freeOctet picks a third octet of 10.77.0.0/16 no interface here uses.
func freeOctet(t *testing.T) int {
	out, err := exec.Command("ip", "-o", "-4", "addr", "show").Output()
	if err != nil {
		t.Fatalf("ip addr: %v", err)
	}
	var b [1]byte
	for range 64 {
		rand.Read(b[:])
		o := 1 + int(b[0])%250
		if !strings.Contains(string(out), fmt.Sprintf(" 10.77.%d.", o)) {
			return o
		}
	}
	t.Fatal("no free 10.77.x.0/24 here")
	return 0
}

// newLab makes the bridge and n host namespaces, or skips t where the
// kernel forbids namespaces (see forbidden).
func newLab(t *testing.T, n int) *lab {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("the ip command (iproute2) is needed to make network namespaces: %v", err)
	}
	removeStale()
	var b [2]byte
	rand.Read(b[:])
	l := &lab{t: t, id: hex.EncodeToString(b[:]), octet: freeOctet(t)}
	l.bridge = "leybr" + l.id
	probe := fmt.Sprintf("%s%d-%s-h0", netnsPrefix, os.Getpid(), l.id)
	if err := ipCmd("netns", "add", probe); err != nil {
		if s := err.Error(); strings.Contains(s, "Operation not permitted") || strings.Contains(s, "Permission denied") || strings.Contains(s, "not supported") {
			forbidden(t, err)
		}
		t.Fatal(err)
	}
	if err := ipCmd("netns", "del", probe); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.remove)
	must := func(args ...string) {
		t.Helper()
		if err := ipCmd(args...); err != nil {
			t.Fatal(err)
		}
	}
	must("link", "add", l.bridge, "type", "bridge")
	must("addr", "add", l.ip(1)+"/24", "dev", l.bridge)
	must("link", "set", l.bridge, "up")
	for i := 1; i <= n; i++ {
		h := labHost{
			ns:   fmt.Sprintf("%s%d-%s-h%d", netnsPrefix, os.Getpid(), l.id, i),
			veth: fmt.Sprintf("ley%sh%d", l.id, i),
			ip:   l.ip(10 + i),
		}
		peer := fmt.Sprintf("ley%sn%d", l.id, i)
		l.hosts = append(l.hosts, h)
		must("netns", "add", h.ns)
		must("link", "add", h.veth, "type", "veth", "peer", "name", peer)
		must("link", "set", peer, "netns", h.ns)
		must("link", "set", h.veth, "master", l.bridge)
		must("link", "set", h.veth, "up")
		must("netns", "exec", h.ns, "ip", "link", "set", "lo", "up")
		must("netns", "exec", h.ns, "ip", "addr", "add", h.ip+"/24", "dev", peer)
		must("netns", "exec", h.ns, "ip", "link", "set", peer, "up")
	}
	t.Logf("netns: made %d network namespaces on bridge %s (10.77.%d.0/24); hosts run in them as their own processes", n, l.bridge, l.octet)
	return l
}

// ip returns 10.77.<octet>.last.
func (l *lab) ip(last int) string { return fmt.Sprintf("10.77.%d.%d", l.octet, last) }

// remove deletes the namespaces (their veth pairs go with them) and the
// bridge; errors are reported, not fatal, so every step runs.
func (l *lab) remove() {
	for _, h := range l.hosts {
		if err := ipCmd("netns", "del", h.ns); err != nil {
			l.t.Errorf("cleanup: %v", err)
		}
	}
	if err := ipCmd("link", "del", l.bridge); err != nil {
		l.t.Errorf("cleanup: %v", err)
	}
}

// exec returns the prefix that runs a command in host i's namespace.
func (l *lab) exec(i int) []string { return []string{"ip", "netns", "exec", l.hosts[i].ns} }

// cut takes host i's link down (up with up=true): its process keeps
// running, cut off from the director and its players.
func (l *lab) cut(i int, up bool) {
	l.t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	if err := ipCmd("link", "set", l.hosts[i].veth, state); err != nil {
		l.t.Fatal(err)
	}
}

// tlsProxy is a TLS-terminating TCP proxy, as an operator's nginx or
// HAProxy in front of an area host: it serves TLS with cfg on listen and
// relays the plain bytes to to. Cleanup stops it.
func tlsProxy(t *testing.T, listen string, cfg *tls.Config, to string) string {
	t.Helper()
	ln, err := tls.Listen("tcp", listen, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				up, err := net.DialTimeout("tcp", to, 5*time.Second)
				if err != nil {
					return
				}
				defer up.Close()
				done := make(chan struct{})
				go func() { io.Copy(up, c); up.(*net.TCPConn).CloseWrite(); close(done) }()
				io.Copy(c, up)
				c.Close()
				<-done
			}()
		}
	}()
	return ln.Addr().String()
}

// runHostIn runs `ley areahost` in host i's namespace until it exits
// (within limit) and returns its exit error and output.
func runHostIn(l *lab, i int, limit time.Duration, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	argv := append(append(l.exec(i), leyBin, "areahost"), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestHostsInNetworkNamespaces runs area hosts as `ley areahost`
// processes in network namespaces of their own, as on other machines:
// they register over mutual TLS (a host that would send its key in clear
// text, or whose certificate the realm does not trust, is refused); a
// player joins, through a TLS-terminating proxy (wss://) for one host,
// and crosses a portal from one host's namespace to the other's. Then
// the player's host has its link cut (not killed): the director declares
// it dead after the heartbeat timeout and the next join re-homes its Area
// on the other host. When the link comes back, the host re-registers with
// its stale incarnation: the director's guard refuses its snapshot and
// the host closes that Area. Skipped, saying so, only where the kernel
// forbids network namespaces (CI sets LEY_REQUIRE_NETNS: never skipped).
func TestHostsInNetworkNamespaces(t *testing.T) {
	l := newLab(t, 2)
	ctx := context.Background()
	dir := t.TempDir()
	ca := testpki.NewCA(t, dir, "realm")
	stranger := testpki.NewCA(t, dir, "stranger")
	bridgeIP := net.ParseIP(l.ip(1))
	dcert := ca.Server(t, "director", []net.IP{bridgeIP})
	srvTLS, err := control.ServerTLS(control.TLSFiles{Cert: dcert.Cert, Key: dcert.Key, CA: ca.Cert})
	if err != nil {
		t.Fatal(err)
	}
	const hostKey = "netns-host-key"
	r := launchRealmWith(t, func(c *Config) {
		c.Control = l.ip(1) + ":0"
		c.ControlTLS = srvTLS
		c.HostKey = hostKey
		c.HeartbeatTimeout = 3 * time.Second
		// A join within a cut host's lease waits at most JoinTimeout for it
		// to run out: a lease past that answers at once.
		c.HostLease, c.JoinTimeout = 12*time.Second, 4*time.Second
		c.Spawn.MinHosts, c.Spawn.MaxHosts = 0, 0
	}, nil)
	ctl := r.d.controlAddr
	refusals := func(reason string) float64 {
		return counter(t, r.d, "ley_control_refusals_total", "reason", reason)
	}

	// Refused: the host key in clear text, by the host itself and by the
	// director; a certificate of another CA.
	plain := []string{"--director", ctl, "--listen", l.hosts[0].ip + ":7101", "--name", "plain", "--log-level", "warn"}
	if out, err := runHostIn(l, 0, 20*time.Second, []string{"LEY_HOST_KEY=" + hostKey}, plain...); err == nil || !strings.Contains(out, "unencrypted") {
		t.Errorf("a host sending its key in clear text: exit %v, output %q; want a refusal to send it", err, out)
	}
	if out, err := runHostIn(l, 0, 20*time.Second, []string{"LEY_HOST_KEY=" + hostKey}, append(plain, "--control-insecure")...); err == nil || !strings.Contains(out, "unencrypted link from another machine") {
		t.Errorf("a host key in clear text from another machine: exit %v, output %q; want the director's refusal", err, out)
	}
	if n := refusals(registry.ControlCleartext); n < 1 {
		t.Errorf("cleartext refusals = %v; want >= 1", n)
	}
	bad := stranger.Client(t, "intruder")
	intruder := startHost(t, l.exec(0), nil, "--director", ctl, "--listen", l.hosts[0].ip+":7102", "--name", "intruder",
		"--control-tls-cert", bad.Cert, "--control-tls-key", bad.Key, "--control-tls-ca", ca.Cert, "--log-level", "error")
	waitFor(t, "the intruder's handshake refused", func() bool { return refusals(registry.ControlHandshake) >= 1 })
	intruder.Process.Kill()

	// Two hosts over mutual TLS, the first behind a TLS-terminating proxy.
	proxyCert := ca.Server(t, "proxy", []net.IP{bridgeIP})
	pkp, err := tls.LoadX509KeyPair(proxyCert.Cert, proxyCert.Key)
	if err != nil {
		t.Fatal(err)
	}
	proxy := tlsProxy(t, l.ip(1)+":0", &tls.Config{Certificates: []tls.Certificate{pkp}, MinVersion: tls.VersionTLS12}, l.hosts[0].ip+":7100")
	roots := x509.NewCertPool()
	pem, err := os.ReadFile(ca.Cert)
	if err != nil || !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("CA bundle: %v", err)
	}
	wssConfig.Store(&tls.Config{RootCAs: roots})
	t.Cleanup(func() { wssConfig.Store(nil) })
	publicURL := []string{"wss://" + proxy + "/ws", "ws://" + l.hosts[1].ip + ":7100/ws"}
	for i := range l.hosts {
		cert := ca.Client(t, fmt.Sprintf("h%d", i))
		startHost(t, l.exec(i), nil, "--director", ctl, "--listen", l.hosts[i].ip+":7100", "--public-url", publicURL[i],
			"--name", fmt.Sprintf("h%d", i), "--control-tls-cert", cert.Cert, "--control-tls-key", cert.Key, "--control-tls-ca", ca.Cert,
			"--persist-every", "300ms", "--resume-grace", "1s", "--transfer-timeout", "4s", "--log-level", "warn")
	}
	r.waitHosts(2)
	hostByName := func(name string) *registry.HostStats {
		for _, h := range r.d.registry.Hosts() {
			if h.Name == name {
				return &h
			}
		}
		return nil
	}
	for i := range l.hosts {
		h := hostByName(fmt.Sprintf("h%d", i))
		if h == nil || !h.TLS || h.Certificate != h.Name {
			t.Fatalf("host h%d is not registered over mutual TLS with its certificate", i)
		}
		if from, _, _ := net.SplitHostPort(h.Addr); from != l.hosts[i].ip {
			t.Errorf("host h%d registered from %s; want its namespace's %s", i, from, l.hosts[i].ip)
		}
	}
	t.Logf("netns: both hosts registered over mutual TLS 1.3 from their namespaces (%s, %s)", l.hosts[0].ip, l.hosts[1].ip)

	// A player joins A and crosses into B, on the other host.
	c, acct := r.player("netns")
	r.admin(acct)
	a, b := twoAreas(t, c)
	j, err := c.Join(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	pa, _ := connect(t, j)
	pa.snapshot(0)
	moved := pa.walkInto(1, 5, 5)
	if moved.Area != b.ID || moved.WSURL == j.WSURL {
		t.Fatalf("portal_moved to area %d at %s; want B on the other host (A is at %s)", moved.Area, moved.WSURL, j.WSURL)
	}
	if !strings.HasPrefix(j.WSURL, "wss://"+proxy) && !strings.HasPrefix(moved.WSURL, "wss://"+proxy) {
		t.Errorf("ws_urls %s and %s; want the proxy's wss:// URL for one", j.WSURL, moved.WSURL)
	}
	pb, _ := connect(t, dirclient.Join{Grant: moved.Grant, WSURL: moved.WSURL, JoinID: moved.JoinID})
	pb.snapshot(0)
	zombie := r.live(b.ID).Host.Name
	zi := 0
	if zombie == "h1" {
		zi = 1
	}
	before, err := r.store.Area(ctx, store.AreaID(b.ID))
	if err != nil {
		t.Fatal(err)
	}

	// B's host loses its link: unregistered, but it may still run B (it
	// does: it is cut off, not dead), so B is made live elsewhere only
	// once its lease ran out (by then the host, which heard nothing from
	// the director for it, has ended its sessions itself: area's
	// TestSessionsEndPastTheLease), and a join meanwhile is refused.
	cut := time.Now()
	l.cut(zi, false)
	waitFor(t, "the cut host unregistered", func() bool { return hostByName(zombie) == nil })
	if _, err := c.Join(ctx, b.ID); err == nil || (refusal(t, err) != "GRANT_FAILED" && refusal(t, err) != "IN_ANOTHER_AREA") {
		t.Fatalf("a join of B while its host is cut off, within its lease: %v; want GRANT_FAILED (out of touch) or IN_ANOTHER_AREA", err)
	}
	var j2 dirclient.Join
	waitFor(t, "a join re-homing B once the lease ran out", func() bool { j2, err = c.Join(ctx, b.ID); return err == nil })
	t.Logf("netns: B re-homed %v after its host was cut off (lease %v)", time.Since(cut).Round(time.Millisecond), r.d.cfg.HostLease)
	pb2, _ := connect(t, j2)
	pb2.snapshot(0)
	after, err := r.store.Area(ctx, store.AreaID(b.ID))
	if err != nil {
		t.Fatal(err)
	}
	if after.Epoch <= before.Epoch || j2.WSURL == moved.WSURL {
		t.Fatalf("B after the re-homing: epoch %d (was %d) at %s (was %s); want a new incarnation on the other host", after.Epoch, before.Epoch, j2.WSURL, moved.WSURL)
	}
	t.Logf("netns: host %s cut off; B re-homed from epoch %d to %d", zombie, before.Epoch, after.Epoch)

	// The link comes back: the zombie re-registers, is fenced, and closes B.
	staleSnapshots := func() float64 {
		n := 0.0
		for _, reason := range []string{registry.RefuseOtherHost, registry.RefuseStaleEpoch, registry.RefuseNotLive} {
			n += counter(t, r.d, "ley_host_message_refusals_total", "type", "snapshot", "reason", reason)
		}
		return n
	}
	l.cut(zi, true)
	waitFor(t, "the cut host registered again", func() bool { return hostByName(zombie) != nil })
	waitFor(t, "the zombie's snapshot refused", func() bool { return staleSnapshots() >= 1 })
	waitFor(t, "the zombie closed its B", func() bool {
		ins, err := c.Inspect(ctx)
		if err != nil {
			return false
		}
		for _, h := range ins {
			for _, ar := range h.Areas {
				if ar.Area == b.ID && (h.Name == zombie || ar.Epoch != uint64(after.Epoch)) {
					return false
				}
			}
		}
		return true
	})
	if now, err := r.store.Area(ctx, store.AreaID(b.ID)); err != nil || now.Epoch != after.Epoch {
		t.Errorf("B's epoch after the zombie came back = %d, %v; want %d", now.Epoch, err, after.Epoch)
	}
	checkPresence(t, c)
	back := pb2.walkInto(1, 6, 6)
	if back.Area != a.ID {
		t.Fatalf("crossing back went to area %d; want A", back.Area)
	}
	pa2, _ := connect(t, dirclient.Join{Grant: back.Grant, WSURL: back.WSURL, JoinID: back.JoinID})
	pa2.snapshot(0)
	if ch, err := r.store.Character(ctx, store.AccountID(acct.ID)); err != nil || ch.Area != store.AreaID(a.ID) {
		t.Errorf("character = %+v, %v; want in A", ch, err)
	}
	t.Logf("netns: the zombie was fenced (%v snapshots refused) and closed B; the player crossed back to A", staleSnapshots())
}
