package auth

import "errors"

// Sentinel errors. Functions wrap them with %w and context; test with
// errors.Is.
var (
	// ErrBadHash reports a stored password hash that is not a PHC string
	// this package can verify: not argon2id v=19, a malformed field, or a
	// parameter, salt or key length outside the accepted bounds.
	ErrBadHash = errors.New("auth: malformed password hash")

	// ErrWeakParams reports argon2id Params below the floor (Memory 19456
	// KiB, Time 2, Threads 1, KeyLen 32) or above the sanity bounds.
	ErrWeakParams = errors.New("auth: argon2id parameters out of bounds")

	// ErrPasswordTooShort reports a password of fewer than MinPasswordLen
	// bytes.
	ErrPasswordTooShort = errors.New("auth: password too short")

	// ErrPasswordTooLong reports a password of more than MaxPasswordLen
	// bytes.
	ErrPasswordTooLong = errors.New("auth: password too long")

	// ErrPasswordBlank reports a password made only of white space.
	ErrPasswordBlank = errors.New("auth: password is blank")

	// ErrLimiterConfig reports a LimiterConfig that NewLimiter refuses, or
	// a BackoffConfig that NewBackoff refuses.
	ErrLimiterConfig = errors.New("auth: invalid limiter config")

	// ErrBadEmail reports an email address ParseEmail refuses.
	ErrBadEmail = errors.New("auth: bad email address")

	// ErrBadName reports a display name ParseName refuses.
	ErrBadName = errors.New("auth: bad name")
)
