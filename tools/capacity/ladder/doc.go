// Package ladder is ley's capacity ladder: it climbs rungs of Areas x
// players against a realm with the load driver (tools/capacity/load), holds
// each rung for a steady phase, samples the server processes, and stops at
// the first rung that breaks the service level objective.
//
// # Outline
//
// [Run] starts a realm (`ley run` as a subprocess on free loopback ports
// with its own temporary data directory) or targets a running one
// ([Config.Director]). As the admin it raises the realm's player cap, then
// for each rung provisions the Areas and accounts the rung adds (earlier
// rungs' accounts and Areas are kept, and their sessions reused, so a
// rung costs only its new logins) and runs the load driver with the whole
// roster. At the start and end of the steady phase it reads the CPU time
// and resident set of the director and of every area host (their pids
// from dirclient.Hosts) from /proc, and the hosts' tick p99 from their
// heartbeats.
//
// A rung holds when, over its steady phase, the median snapshot gap is at
// most 105 ms, the p99 at most 150 ms, at most 1% of gaps are stutters
// (over 250 ms), every intent was answered, every player connected and no
// connection failed ([DefaultSLO]). The first rung that does not hold is
// the breaking rung and ends the climb.
//
// [Report.Write] writes the report as Markdown and JSON with three SVG
// charts (gap percentiles, CPU and RSS per rung) drawn with gonum/plot.
//
// # Caveats
//
// The load driver runs on the same machine as the realm it measures, so
// its own CPU (reported per rung) is taken from the server's; the figures
// are a floor of what the server does alone. CPU is sampled from /proc:
// Linux only.
package ladder
