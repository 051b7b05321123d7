package auth

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// cheap are parameters far below the floor, so tests under the race
// detector stay fast; only newHasher accepts them.
var cheap = Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 32}

func TestHashVerify(t *testing.T) {
	h := newHasher(cheap, 2)
	ctx := context.Background()
	stored, err := h.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("Hash = %q; want prefix $argon2id$v=19$m=64,t=1,p=1$", stored)
	}
	for _, tt := range []struct {
		name   string
		pw     string
		wantOK bool
	}{
		{"right", "correct horse", true},
		{"wrong", "correct horsf", false},
		{"prefix", "correct hors", false},
		{"empty", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ok, rehash, err := h.Verify(ctx, stored, tt.pw)
			if err != nil || ok != tt.wantOK || rehash {
				t.Errorf("Verify = %v, %v, %v; want %v, false, nil", ok, rehash, err, tt.wantOK)
			}
		})
	}
	again, _ := h.Hash(ctx, "correct horse")
	if again == stored {
		t.Errorf("two hashes of one password are equal; want distinct salts")
	}
}

// TestDefaultParams runs one real hash at the floor through the public
// constructor.
func TestDefaultParams(t *testing.T) {
	h := NewHasher(DefaultParams(), 1)
	ctx := context.Background()
	stored, err := h.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	ph, err := parsePHC(stored)
	if err != nil {
		t.Fatal(err)
	}
	want := Params{Memory: 19456, Time: 2, Threads: 1, KeyLen: 32}
	if ph.p != want || len(ph.salt) != 16 {
		t.Errorf("stored params %+v, salt %d bytes; want %+v, 16", ph.p, len(ph.salt), want)
	}
	if ok, rehash, err := h.Verify(ctx, stored, "correct horse"); !ok || rehash || err != nil {
		t.Errorf("Verify = %v, %v, %v; want true, false, nil", ok, rehash, err)
	}
	if ok, _, _ := h.Verify(ctx, stored, "wrong horse"); ok {
		t.Errorf("Verify(wrong) = true; want false")
	}
}

func TestParamsValidate(t *testing.T) {
	d := DefaultParams()
	for _, tt := range []struct {
		name string
		edit func(*Params)
		ok   bool
	}{
		{"default", func(*Params) {}, true},
		{"more", func(p *Params) { p.Memory, p.Time, p.Threads = 65536, 3, 4 }, true},
		{"memory", func(p *Params) { p.Memory = 19455 }, false},
		{"time", func(p *Params) { p.Time = 1 }, false},
		{"threads", func(p *Params) { p.Threads = 0 }, false},
		{"keylen", func(p *Params) { p.KeyLen = 16 }, false},
		{"huge memory", func(p *Params) { p.Memory = 1<<20 + 1 }, false},
		{"huge time", func(p *Params) { p.Time = 65 }, false},
		{"huge key", func(p *Params) { p.KeyLen = 129 }, false},
		{"lanes", func(p *Params) { p.Threads = 255; p.Memory = 19456 }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := d
			tt.edit(&p)
			err := p.Validate()
			if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrWeakParams) {
				t.Errorf("Validate(%+v) = %v; want ok %v", p, err, tt.ok)
			}
		})
	}
}

func TestNewHasherPanics(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    Params
		n    int
	}{
		{"weak", cheap, 1},
		{"zero slots", DefaultParams(), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("NewHasher(%+v, %d) did not panic", tt.p, tt.n)
				}
			}()
			NewHasher(tt.p, tt.n)
		})
	}
}

func TestRehash(t *testing.T) {
	cur := Params{Memory: 128, Time: 2, Threads: 2, KeyLen: 32}
	h := newHasher(cur, 2)
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		stored Params
		want   bool
	}{
		{"same", cur, false},
		{"stronger", Params{Memory: 256, Time: 3, Threads: 4, KeyLen: 64}, false},
		{"memory", Params{Memory: 64, Time: 2, Threads: 2, KeyLen: 32}, true},
		{"time", Params{Memory: 128, Time: 1, Threads: 2, KeyLen: 32}, true},
		{"threads", Params{Memory: 128, Time: 2, Threads: 1, KeyLen: 32}, true},
		{"keylen", Params{Memory: 128, Time: 2, Threads: 2, KeyLen: 16}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stored, err := newHasher(tt.stored, 1).Hash(ctx, "password1")
			if err != nil {
				t.Fatal(err)
			}
			ok, rehash, err := h.Verify(ctx, stored, "password1")
			if !ok || rehash != tt.want || err != nil {
				t.Errorf("Verify = %v, %v, %v; want true, %v, nil", ok, rehash, err, tt.want)
			}
			// A wrong password never asks for a rehash.
			if ok, rehash, _ := h.Verify(ctx, stored, "password2"); ok || rehash {
				t.Errorf("Verify(wrong) = %v, %v; want false, false", ok, rehash)
			}
		})
	}
	// A short salt also asks for a rehash.
	short := phc{p: cur, salt: make([]byte, 8)}
	short.key = idKey([]byte("password1"), short.salt, cur)
	if ok, rehash, err := h.Verify(ctx, string(appendPHC(nil, short)), "password1"); !ok || !rehash || err != nil {
		t.Errorf("Verify(8-byte salt) = %v, %v, %v; want true, true, nil", ok, rehash, err)
	}
}

func TestVerifyMalformed(t *testing.T) {
	h := newHasher(cheap, 1)
	var calls atomic.Int32
	h.derive = func(pw, salt []byte, p Params) []byte { calls.Add(1); return idKey(pw, salt, p) }
	for _, s := range []string{
		"",
		"$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5aw",
		"$argon2id$v=18$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5aw",
		"$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ",
	} {
		ok, rehash, err := h.Verify(context.Background(), s, "password")
		if ok || rehash || !errors.Is(err, ErrBadHash) {
			t.Errorf("Verify(%q) = %v, %v, %v; want false, false, ErrBadHash", s, ok, rehash, err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("malformed hashes derived %d keys; want 0", n)
	}
}

// TestVerifyUnknown checks that VerifyUnknown runs one derivation with the
// Hasher's parameters, like Verify, and never succeeds.
func TestVerifyUnknown(t *testing.T) {
	h := newHasher(cheap, 1)
	var calls atomic.Int32
	var got Params
	h.derive = func(pw, salt []byte, p Params) []byte {
		calls.Add(1)
		got = p
		return idKey(pw, salt, p)
	}
	ctx := context.Background()
	stored, _ := h.Hash(ctx, "password1")
	calls.Store(0)
	h.Verify(ctx, stored, "password2")
	verifyCalls := calls.Load()
	calls.Store(0)
	h.VerifyUnknown(ctx, "password2")
	if n := calls.Load(); n != verifyCalls || n != 1 {
		t.Errorf("VerifyUnknown derived %d keys, Verify %d; want 1 each", n, verifyCalls)
	}
	if got != cheap {
		t.Errorf("VerifyUnknown derived with %+v; want %+v", got, cheap)
	}
}

// TestConcurrencyCap runs more hashes than slots and checks the most in
// flight equals the cap, by counting, not timing.
func TestConcurrencyCap(t *testing.T) {
	const slots, callers = 3, 12
	h := newHasher(cheap, slots)
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	h.derive = func(pw, salt []byte, p Params) []byte {
		n := inFlight.Add(1)
		for {
			m := peak.Load()
			if n <= m || peak.CompareAndSwap(m, n) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
		return make([]byte, p.KeyLen)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			if i%2 == 0 {
				h.Hash(ctx, "password1")
			} else {
				h.VerifyUnknown(ctx, "password1")
			}
		})
	}
	for inFlight.Load() < slots {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if p := peak.Load(); p != slots {
		t.Errorf("peak in-flight hashes = %d; want %d", p, slots)
	}
}

// TestWaitHonoursContext fills the only slot and checks that waiters give up
// when their context ends.
func TestWaitHonoursContext(t *testing.T) {
	h := newHasher(cheap, 1)
	entered, release := make(chan struct{}), make(chan struct{})
	h.derive = func(pw, salt []byte, p Params) []byte {
		entered <- struct{}{}
		<-release
		return make([]byte, p.KeyLen)
	}
	done := make(chan struct{})
	go func() { h.Hash(context.Background(), "password1"); close(done) }()
	<-entered

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := h.Hash(ctx, "password1"); errc <- err }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Hash with a cancelled wait = %v; want context.Canceled", err)
	}
	if _, _, err := h.Verify(ctx, "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5aw", "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("Verify with a cancelled ctx = %v; want context.Canceled", err)
	}
	close(release)
	<-done
}

func TestCheckPassword(t *testing.T) {
	for _, tt := range []struct {
		pw   string
		want error
	}{
		{"", ErrPasswordTooShort},
		{"1234567", ErrPasswordTooShort},
		{"12345678", nil},
		{"        ", ErrPasswordBlank},
		{" \t\n\u00a0\u3000    ", ErrPasswordBlank},
		{"   x    ", nil},
		{strings.Repeat("a", 1024), nil},
		{strings.Repeat("a", 1025), ErrPasswordTooLong},
		{"pässwörd", nil},
	} {
		if got := CheckPassword(tt.pw); got != tt.want {
			t.Errorf("CheckPassword(%.20q) = %v; want %v", tt.pw, got, tt.want)
		}
	}
}

// TestHashingGivesItsMemoryBack: argon2id allocates p.Memory for each
// derivation and drops it; a burst of logins at the production floor
// leaves tens of MiB the collector would not take for minutes, had the
// Hasher not given them back to the operating system once hashing
// stopped (the director's RSS after 500 logins was over 160 MiB).
func TestHashingGivesItsMemoryBack(t *testing.T) {
	h := NewHasher(DefaultParams(), 4)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); h.VerifyUnknown(context.Background(), "correct horse") }()
	}
	wg.Wait()
	want := uint64(4 * DefaultParams().Memory << 10) // what four of the derivations took, at least
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.ReadMemStats(&after)
		if after.HeapReleased >= before.HeapReleased+want {
			t.Logf("%d MiB given back to the OS", (after.HeapReleased-before.HeapReleased)>>20)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after 8 derivations of %d KiB, %d MiB went back to the OS (HeapInuse %d MiB); want %d MiB or more",
				DefaultParams().Memory, (after.HeapReleased-before.HeapReleased)>>20, after.HeapInuse>>20, want>>20)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
