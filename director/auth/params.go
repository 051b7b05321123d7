package auth

import "fmt"

// The floor NewHasher accepts: OWASP's minimum for argon2id (19 MiB, two
// passes, one lane) and a 256-bit key.
const (
	floorMemory  = 19456 // KiB
	floorTime    = 2
	floorThreads = 1
	floorKeyLen  = 32
)

// Params are argon2id cost parameters. Each hash costs about Memory KiB of
// memory for Time passes over it, spread over Threads goroutines.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes
	Threads uint8  // lanes, and goroutines per hash
	KeyLen  uint32 // bytes of derived key
}

// DefaultParams returns the floor: Memory 19456 KiB (19 MiB), Time 2,
// Threads 1, KeyLen 32. One hash takes tens of milliseconds of one core.
func DefaultParams() Params {
	return Params{Memory: floorMemory, Time: floorTime, Threads: floorThreads, KeyLen: floorKeyLen}
}

// Validate reports an error wrapping ErrWeakParams when p is below the floor
// of DefaultParams in any field, or above the bounds stored hashes may carry
// (Memory 1 GiB, Time 64, KeyLen 128).
func (p Params) Validate() error {
	switch {
	case p.Memory < floorMemory || p.Time < floorTime || p.Threads < floorThreads || p.KeyLen < floorKeyLen:
		return fmt.Errorf("%w: %+v is below m=%d,t=%d,p=%d,keylen=%d",
			ErrWeakParams, p, floorMemory, floorTime, floorThreads, floorKeyLen)
	case p.Memory > maxMemory || p.Time > maxTime || p.KeyLen > maxKeyLen:
		return fmt.Errorf("%w: %+v is above m=%d,t=%d,keylen=%d",
			ErrWeakParams, p, maxMemory, maxTime, maxKeyLen)
	case p.Memory < 8*uint32(p.Threads):
		return fmt.Errorf("%w: m must be at least 8*p", ErrWeakParams)
	}
	return nil
}

// below reports whether a stored hash made with s is weaker than p in any
// parameter, or has a salt shorter than Hash writes.
func below(s Params, salt int, p Params) bool {
	return s.Memory < p.Memory || s.Time < p.Time || s.Threads < p.Threads ||
		s.KeyLen < p.KeyLen || salt < saltLen
}

// Bounds on what a stored PHC string may carry. They are wider than the
// floor (old hashes below it must still verify, then be re-hashed) but keep
// a corrupt or hostile row from asking for absurd memory or time.
const (
	maxMemory  = 1 << 20 // KiB: 1 GiB
	maxTime    = 64
	minSaltLen = 8
	maxSaltLen = 64
	minKeyLen  = 16
	maxKeyLen  = 128
	saltLen    = 16 // salt length Hash writes
	// maxPHCLen bounds the parser's input: the longest valid string is
	// about 300 bytes.
	maxPHCLen = 512

	phcPrefix = "$argon2id$v=19$m="
)
