// Package gate serves ley's binary WebSocket connections on the net/poll
// reactor: the area host's single listener for all its Areas.
//
// Handshakes use gobwas/ws's zero-copy Upgrader; after the upgrade a
// connection costs no goroutine and no buffer while idle (about 0.7 KiB of
// RSS per idle connection measured with 10,000 connections, see
// TestIdleConnRSS). Inbound frames are parsed by a bounded RFC 6455 header
// parser straight from a per-loop read buffer; outbound frames go out with
// writev straight from the caller's (possibly shared) buffers: by default
// a loop gathers the writes its batch of work asked for and submits them
// together through io_uring (net/uring), one system call for up to 256
// connections; Config.Writev, or a kernel that refuses io_uring, writes
// each connection with its own writev.
//
// # Outline
//
//   - [Listen] with a [Config] (from [DefaultConfig]) and a [Handler] starts a
//     [Server]; [Server.Close] stops it.
//   - [Conn.Send] queues a reliable, ordered message (copied into a pooled
//     buffer; bounded queue; overflow closes the peer as a slow consumer).
//   - [Conn.SendVolatile] hands over a [Frame] as the latest-wins snapshot.
//     Frames point into [Shared] buffers built once per round for all peers;
//     see [Shared] for the lifetimes.
//   - [Conn.Close] starts a close handshake.
//   - [Dial] / [ClientConn] are the client side for tools and tests.
//
// # Write order
//
// A frame whose write has started is always finished first (WebSocket frames
// cannot interleave). Then the reliable queue drains in order (messages,
// pongs, the close frame), then the latest volatile frame is written. A
// volatile frame not yet started is replaced (and released) by a newer one.
//
// # Threading model
//
// On Linux each connection belongs to one event loop (round-robin at
// accept). Handler callbacks, reads, writes, frame releases after writes and
// the socket close run on that loop goroutine; they must not block. Send,
// SendVolatile and Close may be called from any goroutine: they only take
// the connection's mutex, queue, and wake the loop (one eventfd write per
// batch of queued flushes). With Config.PacedReads the loops read, and
// handle every other socket event, only when [Server.Harvest] asks (an
// Area host does at the start of each tick) or when PacedReads went by
// without a harvest; queued flushes and closes still wake them at once.
// Handshakes run on their own goroutines (at most
// Config.MaxHandshakes, each bounded by HandshakeTimeout), never on a loop.
//
// Lock order: Conn.mu is a leaf. It is never held while a callback, a Frame
// release, a Shared's OnFree or a system call runs (flush drops it around
// writev, and while a batch's io_uring submission runs). poll's queue lock is taken after Conn.mu is released.
//
// The descriptor: after the upgrade the gate duplicates the accepted
// socket's descriptor (F_DUPFD_CLOEXEC) and closes the net.Conn, which
// removes only the original descriptor from Go's netpoller; the duplicate
// (already non-blocking, same open file description) belongs to the gate
// alone, is registered with epoll and closed by the loop.
//
// # Protocol rules
//
// Binary only: text frames close with 1003 (so UTF-8 validation of messages
// is moot; close reasons are still checked, 1007). Client frames must be
// masked, RSV bits clear (permessage-deflate is declined at the handshake),
// opcodes known, control frames final and <= 125 bytes: otherwise 1002. A
// frame header announcing more than MaxFrameSize, or a fragmented message
// growing past MaxMessageSize, closes with 1009 before any allocation for
// it; buffers only grow as bytes actually arrive. Pings get pongs with the
// same payload; a close frame is echoed with its code (1000 for an empty
// one), invalid codes get 1002.
//
// # Caveats
//
//   - The reliable limit counts queued bytes including frame headers; a
//     single Send larger than the limit always overflows.
//   - On a slow-consumer overflow the close frame (1008) is attempted once
//     without waiting; the peer may only see the TCP connection end.
//   - Other platforms (build tag !linux) use a reader and a writer goroutine
//     per connection with the same API; callbacks then run on the reader
//     goroutine and writes block that connection's writer only.
package gate
