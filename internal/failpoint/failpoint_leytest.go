//go:build leytest

package failpoint

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Enabled reports whether this build holds failpoints (the leytest tag).
const Enabled = true

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
	if fires(name) {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}

// fires counts a hit of step name and reports whether it is the armed one.
func fires(name string) bool {
	mu.Lock()
	defer mu.Unlock()
	if !loaded {
		load()
	}
	n, ok := armed[name]
	if !ok {
		return false
	}
	hits[name]++
	return hits[name] == n
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
	if fires(name) {
		panic("failpoint: " + name)
	}
}
