// Package poll is ley's network reactor: a few event-loop goroutines, each
// owning one epoll instance, that tell registered handlers when their file
// descriptors become readable or writable, and run functions handed to them
// from other goroutines.
//
// It exists so that net/gate can serve thousands of WebSocket connections with
// a handful of goroutines and no per-connection stack or read buffer while a
// connection is idle.
//
// # Outline
//
//   - [New] starts a [Poller] with N loops (default runtime.GOMAXPROCS(0), at
//     least 1); [Poller.Loop] picks one; [Poller.Close] stops them all.
//   - [Loop.Add] / [Loop.Remove] register a file descriptor with a [Handler];
//     they must be called on the loop's own goroutine (from a [Loop.Run]
//     function or from a [Handler]).
//   - [Loop.Run] queues a function to run on the loop goroutine; any goroutine
//     may call it. Queued functions run in FIFO order after the current batch
//     of events; one eventfd write wakes a sleeping loop for a whole batch of
//     queued functions.
//   - [Loop.SetAfterBatch] runs a function after each batch of events and
//     queued functions: net/gate writes the connections its batch asked
//     to write there, in one io_uring submission.
//   - [NewPaced] starts loops that handle their descriptors' events only
//     when [Poller.Harvest] asks (or a fallback interval went by), and
//     wake at once only for queued functions: an Area host harvests at
//     the start of each clock slot, so the intents that came since are
//     read in one wake-up, in time for the tick that applies them.
//
// # Threading model
//
// Each [Loop] is one goroutine blocked in epoll_wait (an OS thread while it
// waits; Go starts others as needed). Handlers and queued functions run on that
// goroutine, one at a time, so state touched only from them needs no lock. They
// must not block: a blocked handler stalls every descriptor of its loop.
//
// Locks: Loop.mu guards only the queue of pending functions and is never held
// while a function or handler runs. There is no lock order to respect.
//
// # Edge-triggered registration
//
// Descriptors are registered once, edge-triggered, for
// EPOLLIN|EPOLLOUT|EPOLLRDHUP, and never modified. Edge triggering means a
// handler must read until EAGAIN (or reschedule itself with [Loop.Run]) and
// write until EAGAIN or until it has nothing left to write; in exchange the
// reactor needs no epoll_ctl(MOD) to switch write interest on and off when a
// socket fills and drains, which a level-triggered design would pay twice per
// full socket, and an idle writable socket does not wake the loop on every
// epoll_wait. A spurious EventWrite (sockets report writable on every edge) is
// harmless: handlers treat it as "try to flush".
//
// # Caveats
//
//   - On platforms other than Linux, [Loop.Add] returns [ErrUnsupported]; only
//     [Loop.Run] works (functions run on a plain goroutine). net/gate uses a
//     goroutine per connection there.
//   - Handlers are looked up in a table indexed by descriptor number; a
//     descriptor must be removed before it is closed, or a reused number would
//     reach the old handler.
package poll
