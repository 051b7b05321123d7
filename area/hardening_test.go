package area

import (
	"errors"
	"testing"
	"time"

	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// TestSilentConnectionsAreClosed: a connection that upgrades and never
// says hello is closed (1008) after the hello timeout; one that is bound in
// time stays.
func TestSilentConnectionsAreClosed(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.HelloTimeout = 400 * time.Millisecond })
	d.spawn(1, 16, 16)
	silent := dial(t, h)
	bound := dial(t, h)
	bound.hello(d.grant(1, 100, 1, 3, 3, time.Minute), 1)
	var ce *gate.CloseError
	if err := silent.closed(5 * time.Second); !errors.As(err, &ce) || ce.Code != gate.ClosePolicyViolation {
		t.Fatalf("the silent connection ended with %v; want 1008", err)
	}
	for range 8 { // well past the timeout, the bound one still plays
		expectMsg[*wire.Snapshot](bound, 2*time.Second)
	}
	if n := h.helloTimeouts.Load(); n != 1 {
		t.Fatalf("hello timeouts counted %d; want 1", n)
	}
}

// TestIntentsWithoutSessionClose: intents before any hello are answered
// NOT_HELLO, and UnboundClose of them in a row close the connection (1008).
// TestRefusedJoinsClose (issue 29, N3): a connection that sends hello
// after hello with guessed grants, or resumes with guessed tokens, is
// answered each time and closed (1008) after UnboundClose of them, like
// one sending intents without a session; a good hello after a few bad
// ones binds (the count is of refusals in a row).
func TestRefusedJoinsClose(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.UnboundClose = 5 })
	d.spawn(1, 16, 16)
	c := dial(t, h)
	for i := range uint64(5) {
		if i%2 == 0 {
			c.send(&wire.Hello{Grant: "guess", JoinID: i + 1, Versions: []uint16{wire.Version}})
		} else {
			c.send(&wire.Resume{Token: "guess", JoinID: i + 1})
		}
	}
	for i := range uint64(5) {
		e := expectMsg[*wire.Error](c, 5*time.Second)
		if e.JoinID != i+1 || (e.Code != wire.CodeBadGrant && e.Code != wire.CodeBadToken) {
			t.Fatalf("guessed join %d: %+v; want BAD_GRANT or BAD_TOKEN naming it", i+1, e)
		}
	}
	var ce *gate.CloseError
	if err := c.closed(5 * time.Second); !errors.As(err, &ce) || ce.Code != gate.ClosePolicyViolation {
		t.Fatalf("after 5 refused joins: %v; want closed 1008", err)
	}
	ok := dial(t, h)
	for i := range uint64(4) {
		ok.send(&wire.Hello{Grant: "guess", JoinID: i + 1, Versions: []uint16{wire.Version}})
		expectMsg[*wire.Error](ok, 5*time.Second)
	}
	ok.hello(d.grant(1, 100, 9, 3, 3, time.Minute), 9)
}

func TestIntentsWithoutSessionClose(t *testing.T) {
	h, _ := testHost(t, func(c *Config) { c.UnboundClose = 5 })
	c := dial(t, h)
	for i := uint32(1); i <= 5; i++ {
		c.send(&wire.Intent{Seq: i, Kind: wire.IntentStep})
	}
	for i := uint32(1); i <= 5; i++ {
		if e := expectMsg[*wire.Error](c, 5*time.Second); e.Code != wire.CodeNotHello || e.RefSeq != i {
			t.Fatalf("intent %d before hello: %+v; want NOT_HELLO naming it", i, e)
		}
	}
	var ce *gate.CloseError
	if err := c.closed(5 * time.Second); !errors.As(err, &ce) || ce.Code != gate.ClosePolicyViolation {
		t.Fatalf("after 5 intents without a session: %v; want closed 1008", err)
	}
}
