// Package machine tells which machine's boot this process runs in and
// whether a process of it lives: what a director needs to tell a dead
// area host on its own machine from one cut off from it.
package machine

import (
	"os"
	"strconv"
	"strings"
)

// BootID identifies this machine's boot (/proc/sys/kernel/random/boot_id
// on Linux): two processes with the same BootID share a kernel, so one
// can tell whether the other's process lives. "" where there is none.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Alive reports whether process pid of this machine is alive: it exists
// and is not a zombie. False where /proc does not exist; a caller asks
// it only of a pid with this machine's BootID.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}
