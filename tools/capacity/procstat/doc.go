// Package procstat reads a process's CPU time and resident set from Linux's
// /proc, for the capacity tools: the ladder samples the director and every
// area host with it, and the load driver reports its own cost.
//
// # Caveats
//
// It is Linux only in substance: elsewhere every read returns an error
// wrapping [ErrUnsupported]. CPU times come in clock ticks (USER_HZ, 100 on
// every Linux the project targets), so a CPU share over a one-second window
// is exact only to 1%.
package procstat
