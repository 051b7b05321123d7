//go:build !linux

package machine

import "time"

// Exited reports whether process pid has exited: elsewhere than Linux
// there is no /proc to read (see Alive), so it answers at once.
func Exited(pid int, within time.Duration) bool { return !Alive(pid) }
