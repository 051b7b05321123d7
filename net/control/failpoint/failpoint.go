// Package failpoint arms named crash points for the crash-safety tests of
// ley's transfer protocol: a process started with LEY_FAILPOINT naming a
// step SIGKILLs itself when it reaches that step, as a power cut would.
// [Panic] points panic instead, for the fault-isolation tests of an area
// host (a bug in one Area's tick).
//
// LEY_FAILPOINT is a comma-separated list of names, each optionally
// "name@N" to crash at the Nth hit of that step in this process (default
// the first). Unset, Hit costs one map lookup on an empty map.
package failpoint

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The named steps of a portal crossing.
const (
	HostPortalOut       = "host.portal_out"       // source host: body in transit, before portal_out is sent
	HostPortalSent      = "host.portal_sent"      // source host: portal_out sent
	HostPortalResult    = "host.portal_result"    // source host: a result arrived, before acting on it
	HostPortalGrant     = "host.portal_grant"     // destination host: a crossing's grant arrived, before it is registered
	DirectorPortalIn    = "director.portal_in"    // director: portal_out received
	DirectorPortalMoved = "director.portal_moved" // director: character moved in the store, before the result is sent
	DirectorPortalGrant = "director.portal_grant" // director: grant registered in B, before the character moves
)

// AreaTickPanic is the prefix of the panic point in an Area's tick: the
// point "area.tick_panic.<area id>" is hit once per tick of that Area while
// a player is bound in it (see [Panic]).
const AreaTickPanic = "area.tick_panic."

var (
	mu     sync.Mutex
	armed  = map[string]int{} // name -> hit that crashes
	hits   = map[string]int{}
	loaded bool
)

func load() {
	loaded = true
	for _, f := range strings.Split(os.Getenv("LEY_FAILPOINT"), ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, n := f, 1
		if i := strings.IndexByte(f, '@'); i > 0 {
			if v, err := strconv.Atoi(f[i+1:]); err == nil && v > 0 {
				name, n = f[:i], v
			}
		}
		armed[name] = n
	}
}

// Hit marks that this process reached step name; if the step is armed for
// this hit, the process kills itself with SIGKILL at once.
func Hit(name string) {
	mu.Lock()
	if !loaded {
		load()
	}
	n, ok := armed[name]
	if !ok {
		mu.Unlock()
		return
	}
	hits[name]++
	crash := hits[name] == n
	mu.Unlock()
	if crash {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}

// Armed reports whether step name is armed at all. Code on a hot path asks
// once (at setup) and calls [Hit] or [Panic] only when it is.
func Armed(name string) bool {
	mu.Lock()
	defer mu.Unlock()
	if !loaded {
		load()
	}
	_, ok := armed[name]
	return ok
}

// Panic marks that this process reached step name; if the step is armed
// for this hit, it panics with a message naming the step.
func Panic(name string) {
	mu.Lock()
	if !loaded {
		load()
	}
	n, ok := armed[name]
	if !ok {
		mu.Unlock()
		return
	}
	hits[name]++
	fire := hits[name] == n
	mu.Unlock()
	if fire {
		panic("failpoint: " + name)
	}
}
