package control

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestCalls(t *testing.T) {
	var c Calls[string, int]
	if c.Answer("a", 1) {
		t.Fatal("an answer nobody expects was delivered")
	}
	call, err := c.Expect("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect("a"); !errors.Is(err, ErrPending) {
		t.Fatalf("second Expect of a key: %v; want ErrPending", err)
	}
	if !c.Answer("a", 7) {
		t.Fatal("the expected answer was refused")
	}
	if c.Answer("a", 8) {
		t.Fatal("a second answer to one call was delivered")
	}
	if v, err := call.Wait(context.Background()); v != 7 || err != nil {
		t.Fatalf("Wait = %d, %v; want 7", v, err)
	}

	call, _ = c.Expect("b")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := call.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait past the deadline: %v", err)
	}
	if c.Answer("b", 1) || c.Pending("b") {
		t.Fatal("a timed-out call still takes answers")
	}

	call, _ = c.Expect("c")
	gone := errors.New("link gone")
	c.Close(gone)
	if _, err := call.Wait(context.Background()); !errors.Is(err, gone) {
		t.Fatalf("Wait after Close: %v; want the close error", err)
	}
	if _, err := c.Expect("d"); !errors.Is(err, gone) {
		t.Fatalf("Expect after Close: %v", err)
	}
}
