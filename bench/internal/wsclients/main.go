// Command wsclients opens N WebSocket client connections to a server and
// counts the binary frames they receive, for bench's broadcast benchmark
// (clients run in their own process so their CPU is not charged to the
// server). Protocol on stdin/stdout: it prints "READY" once all connections
// are upgraded, then answers every line read from stdin with the total
// number of frames received so far; it exits when stdin closes.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"

	"github.com/gobwas/ws"
	"golang.org/x/sys/unix"
)

func main() {
	addr := flag.String("addr", "", "server host:port")
	n := flag.Int("n", 1000, "connections")
	flag.Parse()
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < uint64(*n)+1000 {
		lim.Cur = min(uint64(*n)+1000, lim.Max)
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	}
	req := []byte("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	var frames atomic.Int64
	for i := 0; i < *n; i++ {
		nc, err := net.Dial("tcp", *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			os.Exit(1)
		}
		br := bufio.NewReaderSize(nc, 4096)
		if _, err := nc.Write(req); err != nil {
			fmt.Fprintln(os.Stderr, "handshake:", err)
			os.Exit(1)
		}
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				fmt.Fprintln(os.Stderr, "handshake:", err)
				os.Exit(1)
			}
			if bytes.Equal(line, []byte("\r\n")) {
				break
			}
		}
		go func() {
			for {
				h, err := ws.ReadHeader(br)
				if err != nil {
					return
				}
				if _, err := br.Discard(int(h.Length)); err != nil {
					return
				}
				if h.OpCode == ws.OpBinary {
					frames.Add(1)
				}
			}
		}()
	}
	fmt.Println("READY")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fmt.Println(frames.Load())
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}
