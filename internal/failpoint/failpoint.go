// Package failpoint arms named crash points for the crash-safety tests of
// ley's transfer protocol: a process started with LEY_FAILPOINT naming a
// step SIGKILLs itself when it reaches that step, as a power cut would.
// [Panic] points panic instead, for the fault-isolation tests of an area
// host (a bug in one Area's tick).
//
// LEY_FAILPOINT is a comma-separated list of names, each optionally
// "name@N" to crash at the Nth hit of that step in this process (default
// the first).
//
// # Build tag
//
// Failpoints exist only in binaries built with the leytest build tag
// (go build -tags leytest, as the crash tests build ley). In every other
// build [Hit], [Panic] and [Armed] are empty functions the compiler
// inlines away: the product binary holds no failpoint and ignores
// LEY_FAILPOINT (cmd/ley's TestReleaseBinaryHasNoTestMachinery checks
// its symbols).
package failpoint

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
