// Package procself reads this process's own figures from the kernel: what
// an area host's heartbeat and a director's samples report about
// themselves.
package procself

import (
	"os"
	"strconv"
	"strings"
)

// RSSBytes is this process's resident set in bytes, from
// /proc/self/statm (0 where there is no /proc).
func RSSBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
