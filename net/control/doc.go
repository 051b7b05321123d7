// Package control is the director <-> area host control channel: framing
// and messages.
//
// # Framing
//
// A control connection is a TCP or unix-socket stream of frames, over TLS
// 1.3 with mutual authentication for a host on another machine (see
// [ServerTLS], [ClientTLS], [Accept], [DialContext]: one listener takes
// both, telling a TLS handshake from a frame by its first byte):
//
//	+----------------+---------------------------------+
//	| length (4 B,   | CBOR item: [t, body]            |
//	| big endian)    | t = message type, body = map    |
//	+----------------+---------------------------------+
//
// The length counts the CBOR item only and is bounded by [MaxFrameSize]
// ([MaxRegisterFrameSize] before a peer registers, see [Conn.SetMaxFrame]);
// a longer announcement closes the link before anything is allocated.
// Bodies are CBOR maps with small integer keys (keyasint): unlike the client
// protocol's positional arrays, a map lets a director and a host of
// neighbouring versions skip fields they do not know, which matters during
// a rolling upgrade of a realm.
//
// # Outline
//
//   - [Conn] reads and writes frames on a net.Conn; writes are serialised
//     by a mutex so any goroutine may send; one goroutine reads.
//   - Messages: host -> director ([Register] and its [AreaList], [Heartbeat], [AreaReady],
//     [GrantAck], [Snapshot], [Presence], [AreaClosed], [PortalOut],
//     [Inspection], [Evicted]) and director -> host ([Registered],
//     [SpawnArea], [Grant], [SnapshotAck], [CloseArea], [PortalResult],
//     [Inspect], [Evict], [HeartbeatAck], [Spectate]). [Type] numbers them; they never
//     change.
//
// On Linux, [DialContext] and [Accept] read and write a link's TCP or unix
// socket without telling the Go scheduler once the runtime's poller says
// it is ready (the socket is non-blocking): a read or write made through
// the net package, in a process that was idle, wakes the runtime's sysmon
// and resets its poll to every 20 µs, which cost an area host a tenth of
// its CPU (bench/RESULTS.md, "A link that lets sysmon sleep").
//
// # Caveats
//
// The channel runs between a realm's own processes, authenticated (spawn
// token, host certificate or host key), but a frame is still bounded and
// decoded with limits, so a confused peer cannot make the other side
// allocate without bound or panic.
package control
