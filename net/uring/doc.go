// Package uring writes to many non-blocking sockets with one system call:
// a small io_uring ([Ring]) over raw syscalls, holding only what the
// gate's batched writes need (IORING_OP_WRITEV).
package uring
