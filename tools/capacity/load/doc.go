// Package load is ley's load driver: it simulates players over the real
// binary WebSocket protocol against a running realm and measures what they
// see.
//
// # Outline
//
// [Run] takes a [Config] and goes through four phases:
//
//  1. Roster: log in as an admin and provision Players accounts spread over
//     Areas Areas with the director's bulk path (dirclient.Provision), unless
//     the caller passes a ready [Config.Roster].
//  2. Logins: every player without a cached session logs in
//     (dirclient.Login), at most [Config.LoginConcurrency] at once. Login is
//     an argon2id verification on the director (about 50 ms of CPU), so
//     its time is reported apart ([Summary.Login]).
//  3. Ramp: players start spread evenly over [Config.Ramp]: each joins its
//     Area (dirclient.Join), dials the ws_url, says hello and, once bound,
//     sends intents in the chosen [Pattern].
//  4. Steady: once the ramp is over and every player connected or failed,
//     the driver measures for [Config.Duration], then stops sending, waits
//     [Config.Drain] for the last answers and closes every connection.
//
// Each client measures the gap between snapshots (less the rounds between
// them that sent nothing: a round with nothing new for a session sends it
// no snapshot, and the snapshots' ticks say how many rounds passed),
// stutters (gaps over [StutterGap]), the round trip of each intent (send to the first snapshot
// whose ack_seq reaches it, or its intent_result) and answers per intent:
// a seq is answered exactly once, by the first intent_result naming it or
// the first snapshot whose ack_seq reaches it. Histograms are HdrHistograms
// shared by shards of clients, merged at the end into a [Summary]; a
// per-second [Point] series feeds a progress line and a CSV.
//
// An Area that closes under its players (its host stops: a rollout) tells
// them area_closing{AREA_CLOSING}, then rehello: players of the walking,
// idle, bursty and build patterns join it again through the director, as
// a client must, trying for [RejoinFor] while it comes back on another
// host; [Summary.AreaClosings] and [Summary.Rejoins] count them, and a
// rejoin that fails is an error. The portal and churn patterns count a
// closing as an error, as before: their checks hold only where no Area
// closes.
//
// # Cost
//
// The session protocol is net/client's (hello, seqs, answers, resumes,
// crossings): each player is one client.Client, with one reader goroutine
// per connection, and a sender goroutine for its pattern. A snapshot or an
// intent_result is read by its head only (wire.DecodeSnapshotHead,
// wire.DecodeIntentResult: tick, ack_seq; seq, code) without decoding the
// cells, so a frame costs a few hundred nanoseconds and no allocation;
// the churn pattern decodes every frame whole, to keep a view (net/view)
// for its ground truth. The driver reports its own CPU time (getrusage)
// in [Summary.Driver].
//
// # Caveats
//
// The director rate-limits logins per client IPv4 address (a burst of 10,
// then one per 6 s). Against a director on a loopback address the driver
// therefore spreads its logins over many source addresses of 127.0.0.0/8
// (8 logins per address), which Linux routes to loopback without setup.
// Against a remote director thousands of logins need the operator to raise
// the limit.
//
// The realm's player cap (40 by default) refuses joins past it; the ladder
// raises it first, `ley load --raise-cap` does too.
//
// The portal pattern links the provisioned Areas in pairs, a portal at
// (W/2+3, H/2) of each leading to (W/2-3, H/2) of the other: every session
// walks onto its portal, crosses, and reconnects in the other Area with the
// grant from portal_moved (net/client follows it): a fresh session, whose
// seqs start at 1 again. Hops and their latency
// (portal_moved to hello_ack) are in the summary; the crossing's pause is
// not counted as a snapshot gap.
package load
