// Package auth provides the director HTTP API's credentials: argon2id
// password hashes, session tokens, rate limits and delays for the auth
// endpoints, and the checks of sign-up input.
// It holds no users and does no I/O; the director stores what it returns.
//
// # Outline
//
//   - [Hasher] hashes passwords ([Hasher.Hash]) into PHC strings,
//     `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>`, and checks them
//     ([Hasher.Verify]), saying when a stored hash should be re-hashed.
//     [Hasher.VerifyUnknown] stands in for Verify when there is no account.
//     [CheckPassword] holds the rules for a new password.
//   - [NewToken] makes a session token and the hash to store;
//     [ParseBearer] takes a presented token out of an Authorization header
//     and [HashToken] gives the key to look it up by.
//   - [Limiter] counts attempts per key (use [IPKey] and [EmailKey], each
//     kind in a Limiter of its own) and says when to retry.
//   - [Backoff] imposes a progressive delay per key after repeated
//     failures ([LoginKey]: per client address and account), never a lock
//     that someone else's failures could hold an owner behind.
//   - [ParseEmail] and [ParseName] check sign-up input (net/mail, and the
//     PRECIS profiles of golang.org/x/text/secure/precis) and return the
//     canonical email and the display name; [Refusal] words their
//     refusals, and CheckPassword's, for the user.
//
// # Choices
//
// argon2id at m=19 MiB, t=2, p=1 is OWASP's minimum for password storage:
// memory-hard, so guessing on GPUs and ASICs costs memory as well as
// compute, and the id variant pairs argon2i's data-independent first pass
// (against side channels) with argon2d's data-dependent rest (against
// time-memory trade-offs). [NewHasher] refuses anything lower. Each stored hash carries its
// own parameters, so raising [Params] later is safe: old hashes still
// verify, Verify reports rehash, and the caller re-hashes on that
// successful login.
//
// Each hash takes about Memory KiB and tens of milliseconds of a core. A
// burst of logins hashed all at once would take the director's memory
// (1,000 at once is 19 GiB), so a Hasher runs at most maxConcurrent at a
// time; the rest wait for a slot, or give up when their ctx ends. The
// HTTP layer should also bound request bodies and rate-limit before hashing.
//
// If a login for an unknown email answered at once while a wrong password
// took one hash's time, the timing would tell which emails have accounts.
// VerifyUnknown spends the same derivation (same parameters, same code
// path) against a dummy hash made once per Hasher. Hashes stored with older,
// cheaper parameters still answer a little faster until re-hashed.
//
// Session tokens carry 256 bits from crypto/rand, so they cannot be
// guessed, and the store keeps only their SHA-256: a leaked database or
// backup holds no token that can be presented. A slow hash is not needed
// there, as the tokens have full entropy. Looking tokens up by hash also
// makes comparison timing useless to an attacker (see [HashToken]).
//
// # Caveats
//
//   - NewHasher panics on weak Params; call [Params.Validate] when the
//     Params come from configuration.
//   - A Limiter forgets its least recently used key when full, which resets
//     that key's bucket; an attacker can only force that by spending
//     MaxKeys other attempts, which the per-address limit slows.
//   - The Limiter, the Backoff and the Hasher's slots are per process:
//     several directors each allow the full rate.
//   - Backoff per (address, account) does not slow a guesser spread over
//     many addresses; the per-address Limiter and argon2id's cost bound
//     each address.
package auth
