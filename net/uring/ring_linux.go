//go:build linux

package uring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's ABI (include/uapi/linux/io_uring.h), the parts used here.
const (
	opWritev = 2 // IORING_OP_WRITEV

	// rwfNoWait (RWF_NOWAIT) makes a write that would block complete with
	// EAGAIN. Without it the kernel parks the write on the socket's wait
	// queue even on an O_NONBLOCK descriptor (it retries files that support
	// non-blocking issue), and Submit would wait for a slow reader.
	rwfNoWait = 0x8

	setupSubmitAll = 1 << 7 // IORING_SETUP_SUBMIT_ALL: an SQE that fails does not stop the rest
	setupCoopTask  = 1 << 8 // IORING_SETUP_COOP_TASKRUN: no IPI to run completions

	enterGetEvents = 1 // IORING_ENTER_GETEVENTS

	featSingleMmap = 1 << 0 // IORING_FEAT_SINGLE_MMAP
	featNoDrop     = 1 << 1 // IORING_FEAT_NODROP: completions are never dropped

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	sqeSize = 64
	cqeSize = 16
)

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

// sqe is struct io_uring_sqe, as the fields used here lay it out.
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	rwFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFD    int32
	addr3       uint64
	pad         uint64
}

// cqe is struct io_uring_cqe (without the big-CQE tail, not asked for).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// Ring is one io_uring instance used to write to many non-blocking
// descriptors with one system call. It is not safe for concurrent use: one
// goroutine (an event loop) owns it.
type Ring struct {
	fd      int
	entries uint32

	sqMem, cqMem, sqeMem []byte

	sqHead, sqTail *uint32
	sqMask         uint32
	sqArray        []uint32
	sqes           []sqe

	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []cqe

	queued uint32 // SQEs prepared since the last Submit
	single bool   // the rings share one mapping (IORING_FEAT_SINGLE_MMAP)
}

// ErrUnsupported is returned by New where the kernel refuses io_uring
// (too old, disabled by sysctl kernel.io_uring_disabled, or filtered by a
// seccomp profile): callers keep writing with writev.
var ErrUnsupported = errors.New("uring: io_uring is not available")

// New sets up a ring with room for entries writes per Submit (rounded up
// to a power of two by the kernel).
func New(entries uint32) (*Ring, error) {
	var p params
	p.flags = setupSubmitAll | setupCoopTask
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if e == unix.EINVAL {
		// A kernel before 5.19 knows neither flag: try without them.
		p = params{}
		fd, _, e = unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	}
	if e != 0 {
		if e == unix.ENOSYS || e == unix.EPERM || e == unix.EACCES {
			return nil, fmt.Errorf("%w: io_uring_setup: %w", ErrUnsupported, e)
		}
		return nil, fmt.Errorf("uring: io_uring_setup: %w", e)
	}
	r := &Ring{fd: int(fd), entries: p.sqEntries}
	if p.features&featNoDrop == 0 {
		r.Close()
		return nil, fmt.Errorf("%w: the kernel may drop completions (no IORING_FEAT_NODROP)", ErrUnsupported)
	}
	if err := r.mmap(&p); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.probe(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// probe checks that the kernel answers a write to a full socket with
// EAGAIN at once, as Submit needs (older kernels may park it until the
// reader drains, which would stall the caller's loop behind one slow
// peer): it fills a socket pair and asks.
func (r *Ring) probe() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("uring: probe: socketpair: %w", err)
	}
	defer unix.Close(fds[0])
	peerOpen := true
	defer func() {
		if peerOpen {
			unix.Close(fds[1])
		}
	}()
	buf := make([]byte, 4096)
	for {
		_, err := unix.Write(fds[0], buf)
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			return fmt.Errorf("uring: probe: fill: %w", err)
		}
	}
	iov := []unix.Iovec{{Base: &buf[0]}}
	iov[0].SetLen(len(buf))
	r.Writev(fds[0], iov, 0)
	atomic.StoreUint32(r.sqTail, *r.sqTail+r.queued)
	r.queued = 0
	if _, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 1, 0, 0, 0, 0); e != 0 {
		atomic.StoreUint32(r.sqTail, *r.sqTail-1)
		return fmt.Errorf("%w: io_uring_enter: %w", ErrUnsupported, e)
	}
	var res error = unix.Errno(0)
	if r.reap(func(_ uint64, _ int, err error) { res = err }) == 1 {
		if res != unix.EAGAIN {
			return fmt.Errorf("%w: a write to a full socket said %v, not EAGAIN", ErrUnsupported, res)
		}
		return nil
	}
	// Parked: closing the reader's end ends the write; then reap it.
	unix.Close(fds[1])
	peerOpen = false
	for r.reap(func(uint64, int, error) {}) == 0 {
		_, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 0, 1, enterGetEvents, 0, 0)
		if e != 0 && e != unix.EINTR {
			break
		}
	}
	return fmt.Errorf("%w: the kernel parks a write to a full socket (RWF_NOWAIT not honoured)", ErrUnsupported)
}

func (r *Ring) mmap(p *params) error {
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*cqeSize)
	single := p.features&featSingleMmap != 0
	r.single = single
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("uring: mmap sq ring: %w", err)
	}
	r.cqMem = r.sqMem
	if !single {
		r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return fmt.Errorf("uring: mmap cq ring: %w", err)
		}
	}
	r.sqeMem, err = unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("uring: mmap sqes: %w", err)
	}
	sq, cq := unsafe.Pointer(&r.sqMem[0]), unsafe.Pointer(&r.cqMem[0])
	r.sqHead = (*uint32)(unsafe.Add(sq, p.sqOff.head))
	r.sqTail = (*uint32)(unsafe.Add(sq, p.sqOff.tail))
	r.sqMask = *(*uint32)(unsafe.Add(sq, p.sqOff.ringMask))
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Add(sq, p.sqOff.array)), p.sqEntries)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqHead = (*uint32)(unsafe.Add(cq, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(cq, p.cqOff.tail))
	r.cqMask = *(*uint32)(unsafe.Add(cq, p.cqOff.ringMask))
	r.cqes = unsafe.Slice((*cqe)(unsafe.Add(cq, p.cqOff.cqes)), p.cqEntries)
	return nil
}

// Close releases the ring. Nothing may be queued.
func (r *Ring) Close() error {
	if r.sqeMem != nil {
		_ = unix.Munmap(r.sqeMem)
	}
	if r.cqMem != nil && !r.single {
		_ = unix.Munmap(r.cqMem)
	}
	if r.sqMem != nil {
		_ = unix.Munmap(r.sqMem)
	}
	r.sqeMem, r.cqMem, r.sqMem = nil, nil, nil
	return unix.Close(r.fd)
}

// Room reports how many more writes can be queued before Submit.
func (r *Ring) Room() int { return int(r.entries - r.queued) }

// Writev queues a writev(2) of iov to fd, to be reported to Submit's
// callback with tag. iov and the buffers it points to must stay alive and
// unchanged until Submit returns. It panics when the ring is full (check
// Room first).
func (r *Ring) Writev(fd int, iov []unix.Iovec, tag uint64) {
	if r.queued == r.entries {
		panic("uring: Writev on a full ring")
	}
	s := sqe{opcode: opWritev, fd: int32(fd), len: uint32(len(iov)), rwFlags: rwfNoWait, userData: tag}
	if len(iov) > 0 {
		s.addr = uint64(uintptr(unsafe.Pointer(&iov[0])))
	}
	r.push(&s)
}

// push queues s after the SQEs queued since the last Submit; the caller
// checked that the ring has room.
func (r *Ring) push(s *sqe) {
	tail := *r.sqTail + r.queued // only this goroutine moves the tail
	i := tail & r.sqMask
	r.sqes[i] = *s
	r.sqArray[i] = i
	r.queued++
}

// Submit hands every queued write to the kernel with one io_uring_enter
// and waits for all of their completions, calling done(tag, n, err) for
// each, in completion order: n bytes written, or the error (EAGAIN when
// the socket is full, as writev says on a non-blocking descriptor). Each
// write is issued inline, in the call, and never parked (RWF_NOWAIT): the
// wait is only for the submission itself.
//
// An error means nothing was submitted: the writes are dropped from the
// ring and the caller makes them some other way. Once the writes are in
// the kernel, Submit returns only after every one has completed (the
// kernel may read their buffers until then); a ring that cannot say so
// any more is a broken kernel contract, and Submit panics rather than let
// the caller reuse buffers the kernel may still read.
func (r *Ring) Submit(done func(tag uint64, n int, err error)) error {
	n := r.queued
	if n == 0 {
		return nil
	}
	want := int(n)
	atomic.StoreUint32(r.sqTail, *r.sqTail+n) // release: the SQEs before the tail
	r.queued = 0
	// Submit without waiting and without telling the scheduler
	// (RawSyscall): every write is issued inline and its completion
	// posted before the call returns.
	for left := n; left > 0; {
		got, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(left), 0, 0, 0, 0)
		switch {
		case e == unix.EINTR:
			continue
		case e != 0 && left == n:
			// Nothing was consumed: take the writes back off the ring.
			atomic.StoreUint32(r.sqTail, *r.sqTail-n)
			return fmt.Errorf("uring: io_uring_enter: %w", e)
		case e == unix.EAGAIN || e == unix.EBUSY:
			continue // some are in: the rest go when the kernel can take them
		case e != 0:
			panic(fmt.Sprintf("uring: io_uring_enter failed with %d of %d writes in: %v", n-left, n, e))
		}
		left -= min(uint32(got), left)
	}
	want -= int(r.reap(done))
	// Anything the kernel moved to its workers is waited for, as a system
	// call the scheduler knows about.
	for want > 0 {
		_, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 0, uintptr(want), enterGetEvents, 0, 0)
		if e != 0 && e != unix.EINTR && e != unix.EAGAIN && e != unix.EBUSY {
			panic(fmt.Sprintf("uring: io_uring_enter waiting for %d writes: %v", want, e))
		}
		want -= int(r.reap(done))
	}
	return nil
}

// reap reports the completions the kernel has posted and returns how many.
func (r *Ring) reap(done func(tag uint64, n int, err error)) uint32 {
	head := *r.cqHead
	tail := atomic.LoadUint32(r.cqTail) // acquire: the CQEs before the tail
	for i := head; i != tail; i++ {
		c := &r.cqes[i&r.cqMask]
		if c.res < 0 {
			done(c.userData, 0, unix.Errno(-c.res)) // an errno is < 256: boxing it allocates nothing
		} else {
			done(c.userData, int(c.res), nil)
		}
	}
	atomic.StoreUint32(r.cqHead, tail)
	return tail - head
}
