package web_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/gobwas/ws"
)

// wsProxy stands between a page and the area hosts, so that a test can do
// to a page's game connection what a server or a network does: drop it,
// or send a frame the host never would. The page reaches it through the
// test hook of web/app (hooks.ts), which maps ws://HOST/ws to
// ws://PROXY/LABEL/HOST/ws; the label names the page's connections.
//
// The proxy forwards the client's bytes as they come, and the host's
// frame by frame, so an injected frame always falls between two whole
// frames of the host.
type wsProxy struct {
	t  *testing.T
	ln net.Listener

	mu    sync.Mutex
	conns []*proxied
}

// proxied is one page connection through the proxy.
type proxied struct {
	label  string
	client net.Conn
	server net.Conn

	writeMu sync.Mutex // one whole frame at a time to the client

	mu        sync.Mutex
	firstType byte // the t of the client's first message
	closed    bool
}

func startProxy(t *testing.T) *wsProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &wsProxy{t: t, ln: ln}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.close()
		}
	})
	return p
}

// hook returns the page script that routes the page's game sockets
// through the proxy under label.
func (p *wsProxy) hook(label string) string {
	return fmt.Sprintf(`globalThis.__leyTest = { wsUrl: (u) => u.replace(/^ws:\/\//, "ws://%s/%s/") };`, p.ln.Addr(), label)
}

func (p *wsProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

// readHead reads an HTTP head (up to the blank line) from r.
func readHead(r *bufio.Reader) ([]byte, error) {
	var head []byte
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		head = append(head, line...)
		if len(head) > 16<<10 {
			return nil, errors.New("head too long")
		}
		if bytes.Equal(line, []byte("\r\n")) {
			return head, nil
		}
	}
}

func (p *wsProxy) serve(client net.Conn) {
	cr := bufio.NewReader(client)
	head, err := readHead(cr)
	if err != nil {
		client.Close()
		return
	}
	// GET /LABEL/HOST:PORT/PATH HTTP/1.1
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	f := strings.Fields(string(line))
	if len(f) != 3 {
		client.Close()
		return
	}
	parts := strings.SplitN(strings.TrimPrefix(f[1], "/"), "/", 3)
	if len(parts) != 3 || !strings.HasPrefix(parts[1], "127.0.0.1:") {
		client.Close()
		return
	}
	server, err := net.Dial("tcp", parts[1])
	if err != nil {
		client.Close()
		return
	}
	c := &proxied{label: parts[0], client: client, server: server}
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
	if _, err := fmt.Fprintf(server, "%s /%s %s\r\n%s", f[0], parts[2], f[2], rest); err != nil {
		c.close()
		return
	}
	sr := bufio.NewReader(server)
	resp, err := readHead(sr)
	if err == nil {
		_, err = client.Write(resp)
	}
	if err != nil {
		c.close()
		return
	}
	go c.fromClient(cr)
	c.fromServer(sr)
}

// fromClient forwards the client's frames, noting the type of its first
// message (hello or resume).
func (c *proxied) fromClient(r *bufio.Reader) {
	defer c.close()
	h, err := ws.ReadHeader(r)
	if err != nil {
		return
	}
	payload := make([]byte, h.Length)
	if _, err := io.ReadFull(r, payload); err != nil {
		return
	}
	plain := bytes.Clone(payload)
	if h.Masked {
		ws.Cipher(plain, h.Mask, 0)
	}
	if len(plain) >= 3 {
		c.mu.Lock()
		c.firstType = plain[2]
		c.mu.Unlock()
	}
	if ws.WriteHeader(c.server, h) != nil {
		return
	}
	if _, err := c.server.Write(payload); err != nil {
		return
	}
	_, _ = io.Copy(c.server, r)
}

// fromServer forwards the host's frames, whole, to the client.
func (c *proxied) fromServer(r *bufio.Reader) {
	defer c.close()
	for {
		h, err := ws.ReadHeader(r)
		if err != nil {
			return
		}
		payload := make([]byte, h.Length)
		if _, err := io.ReadFull(r, payload); err != nil {
			return
		}
		c.writeMu.Lock()
		err = ws.WriteHeader(c.client, h)
		if err == nil {
			_, err = c.client.Write(payload)
		}
		c.writeMu.Unlock()
		if err != nil {
			return
		}
	}
}

// inject sends frame to the client as if the host had.
func (c *proxied) inject(f ws.Frame) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return ws.WriteFrame(c.client, f)
}

// close drops both sides without a close frame, as a dead network does.
func (c *proxied) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	c.client.Close()
	c.server.Close()
}

func (c *proxied) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// live returns the open connections of label.
func (p *wsProxy) live(label string) []*proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*proxied
	for _, c := range p.conns {
		if c.label == label && !c.isClosed() {
			out = append(out, c)
		}
	}
	return out
}

// count returns how many connections label ever made.
func (p *wsProxy) count(label string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.conns {
		if c.label == label {
			n++
		}
	}
	return n
}

// last returns the last connection label made, or nil.
func (p *wsProxy) last(label string) *proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.conns) - 1; i >= 0; i-- {
		if p.conns[i].label == label {
			return p.conns[i]
		}
	}
	return nil
}

// first returns the t of the client's first message on c (0 before one).
func (c *proxied) first() byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.firstType
}
