// Package client is the one Go client of ley's session protocol
// (docs/protocol.md): it dials an area host, says hello (or resumes),
// numbers intents, matches every answer to its seq, and follows portals.
// The load driver (tools/capacity/load) runs thousands of them; tests use
// its blocking helpers. It knows nothing of the director's HTTP API: a
// caller joins through the director (dirclient) and hands Hello the
// grant, ws_url and join_id it got.
//
// # Outline
//
//   - [New] with a [Config] (from [DefaultConfig]) returns a [Client]: one
//     player, one session at a time.
//   - [Client.Hello] starts a fresh session with a join grant;
//     [Client.Resume] continues a dropped one with its resume token and
//     sends its unanswered intents again; [Client.Drop] cuts the socket as
//     a lost network would; [Client.Leave] closes it as a player who quits
//     (the Client stays for a later Hello); [Client.Close] ends everything.
//     Sessions and connections are numbered ([State].Session, .Conn), and
//     so is everything the Handler is given.
//   - [Client.Send] (and [Client.Step], [Client.MoveTo], and
//     [Client.SendIn], which sends only within a given session) sends an intent
//     with the session's next seq (from 1, in serial-number order through
//     the wrap after 2^32-1). Each gets exactly one [Answer]: [Applied]
//     when a snapshot's ack_seq reaches it, [Refused] by an intent_result,
//     [Unseen] when the answer was lost with a dropped connection, [Void]
//     when the session ended first, [Abandoned] when the client left it.
//   - The [Handler] gets every message as a [Frame] (snapshot headers read
//     for it), the answers, and [Event]s: bound, closing, restored, moved,
//     ended, dropped, disconnected, and the protocol's breaches.
//   - For tests: [Client.Wait] (until a condition on [State] holds),
//     [Client.WaitAck] (until ack_seq reaches a seq), [Client.WaitAnswer]
//     (until a seq is answered); [Client.State], [Client.Stats] and
//     [Client.Pending] read it at any time.
//
// # The protocol's rules it keeps
//
//   - hello offers Config.Versions; a hello_ack must name one of them and
//     echo the join id. A refusal is a [RefusedError].
//   - After a resume, the unanswered intents go out again in order with
//     their seqs, before any newer intent; a STALE_SEQ for such a copy
//     says only that the server had the first copy, whose answer counts;
//     the first snapshot of the new connection settles every seq up to
//     its ack_seq (as [Unseen]).
//   - taken_over, rehello and portal_moved end the session: what they left
//     unanswered is void, and the close that follows is expected.
//     area_closing is told and play goes on until its rehello;
//     portal_blocked and portal_transfer_rejected are told and the session
//     goes on.
//   - portal_moved on the current connection is followed (with
//     Config.FollowPortals): the client closes the old connection, dials
//     the message's ws_url and says hello with its grant and join id, a
//     fresh session whose seqs start at 1 again.
//   - A second hello while a session is bound (a takeover by the same
//     account) leaves the old connection reading until its taken_over and
//     close, its events numbered by their connection ([Event].Conn).
//
// # Cost
//
// One goroutine per open connection reads it. A snapshot or an
// intent_result costs its head's decoding (wire.DecodeSnapshotHead,
// wire.DecodeIntentResult), a lock and the Handler's calls, and allocates
// nothing; rare messages are decoded whole. Send encodes into a reused
// buffer and allocates nothing. Each session keeps a window of
// Config.Window intents (32 bytes each).
//
// # Caveats
//
//   - An intent refused on a connection that dropped, whose seq is after
//     the last one applied, is never answered again (the resumed
//     connection's first ack_seq stops below it, and its copy is refused
//     STALE_SEQ): it stays outstanding until a later ack_seq passes it,
//     and is then counted Applied, as the spec's rule says.
//   - Handler calls are never concurrent, but events of an old connection
//     (a takeover's, or one the client dropped just as it read) may come
//     after the newer connection's EventBound.
package client
