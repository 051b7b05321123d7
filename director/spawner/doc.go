// Package spawner starts the area host processes of a director: children
// of the director's own binary (ley areahost), each with a spawn token in
// its environment (its credential, never on its command line), its own
// process group, a file descriptor limit and an OOM score that makes the
// kernel kill a host before the director. It keeps a minimum of them
// running and never more than the process rail.
//
// Children outlive their director: a director that stops or dies leaves
// them running with their Areas, and they register again, with the same
// token, with whichever director leads next (which adopts them: see
// director/registry). Stop interrupts them when the realm itself stops.
package spawner
