package director

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/systems/persist/blob"
)

// inventory returns the inventory the host last sent p, waiting for the
// first.
func (p *peer) inventory() *wire.Inventory {
	p.t.Helper()
	if p.inv == nil {
		p.until(func(m wire.Message) bool { _, ok := m.(*wire.Inventory); return ok })
	}
	return p.inv
}

// count is how many items of kind slots hold.
func count(slots []wire.Stack, kind uint16) int {
	n := 0
	for _, s := range slots {
		if s.Kind == kind {
			n += int(s.Count)
		}
	}
	return n
}

// slotOf is the first slot holding kind, or -1.
func slotOf(slots []wire.Stack, kind uint16) int {
	for i, s := range slots {
		if s.Kind == kind && s.Count > 0 {
			return i
		}
	}
	return -1
}

// sides are the steps towards the four sides of a square.
var sides = map[wire.Dir][2]int32{wire.DirE: {1, 0}, wire.DirS: {0, 1}, wire.DirW: {-1, 0}, wire.DirN: {0, -1}}

// place asks to place one item of slot in each direction in turn until
// one is applied; it returns the square it went to, or the last refusal.
func (p *peer) place(seq *uint32, slot int) (x, y int32, code wire.Code) {
	p.t.Helper()
	for _, d := range []wire.Dir{wire.DirE, wire.DirS, wire.DirW, wire.DirN} {
		*seq++
		p.send(&wire.Intent{Seq: *seq, Kind: wire.IntentPlace, Dir: d, Item: wire.ItemSlots{From: uint8(slot)}})
		m := p.until(func(m wire.Message) bool {
			switch m := m.(type) {
			case *wire.IntentResult:
				return m.Seq == *seq
			case *wire.Snapshot:
				return m.AckSeq >= *seq
			}
			return false
		})
		if r, refused := m.(*wire.IntentResult); refused {
			code = r.Code
			if code == wire.CodeOccupied {
				continue // something stands there: another side
			}
			return 0, 0, code
		}
		you, step := p.you(), sides[d]
		return you.X + step[0], you.Y + step[1], wire.CodeOK
	}
	return 0, 0, code
}

// placedAt reports the kind of the item p's view has placed on (x, y), or 0.
func (p *peer) placedAt(x, y int32) uint16 {
	for _, st := range p.v.Statics {
		for _, o := range st.Objects {
			if o.X == x && o.Y == y && o.Item != 0 {
				return o.Item
			}
		}
	}
	return 0
}

// TestAHomeIsFoundAsItWasLeft: a new character comes with the starter
// kit; its owner furnishes its home (a guest may not, until the owner
// names it a builder); the host is killed with SIGKILL; on return the
// home holds the chair where it was placed and the inventory lacks it,
// as the last stored snapshot has them both.
// atHome makes player ann, her home, and ann in it (a new character: the
// starter kit is minted there).
func atHome(t *testing.T, r *realm) (ann *dirclient.Client, acct dirclient.Account, home dirclient.Area, p *peer) {
	t.Helper()
	ctx := context.Background()
	ann, acct = r.player("ann")
	home, err := ann.CreateArea(ctx, "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	j, err := ann.Join(ctx, home.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ = connect(t, j)
	return ann, acct, home, p
}

func TestAHomeIsFoundAsItWasLeft(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	ann, acct, home, p := atHome(t, r)
	chair, _ := content.Default().Item("chair")
	inv := p.inventory()
	if count(inv.Slots, chair.Code) != 4 {
		t.Fatalf("a new character carries %+v; want the starter kit's 4 chairs", inv.Slots)
	}
	p.snapshot(0)
	var seq uint32
	x, y, code := p.place(&seq, slotOf(inv.Slots, chair.Code))
	if code != wire.CodeOK {
		t.Fatalf("the owner places a chair in its home: %v", code)
	}
	if got := count(p.inventory().Slots, chair.Code); got != 3 {
		t.Fatalf("after placing one of 4 chairs the inventory holds %d", got)
	}
	p.until(func(wire.Message) bool { return p.placedAt(x, y) == chair.Code })

	// A guest, a member of the home but no builder, may not build there.
	bob, bobAcct := r.player("bob")
	code1, err := ann.Invite(ctx, home.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Redeem(ctx, code1); err != nil {
		t.Fatal(err)
	}
	jb, err := bob.Join(ctx, home.ID)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := connect(t, jb)
	binv := pb.inventory()
	pb.snapshot(0)
	var bseq uint32
	if _, _, code := pb.place(&bseq, slotOf(binv.Slots, chair.Code)); code != wire.CodeNotBuilder {
		t.Fatalf("a guest places in another's home: %v; want NOT_BUILDER", code)
	}
	if _, err := bob.SetRole(ctx, home.ID, bobAcct.ID, "builder"); refusal(t, err) != "FORBIDDEN" {
		t.Fatalf("a guest names itself a builder: %v; want FORBIDDEN", err)
	}
	if m, err := ann.SetRole(ctx, home.ID, bobAcct.ID, "builder"); err != nil || m.Role != "builder" || m.Name != bobAcct.Name {
		t.Fatalf("the owner names the guest a builder: %+v, %v", m, err)
	}
	if ms, err := ann.Members(ctx, home.ID); err != nil || len(ms) != 2 || ms[0].Name == "" || ms[1].Name == "" {
		t.Fatalf("the home's members as its owner sees them: %+v, %v; want both, named", ms, err)
	}
	if _, err := ann.SetRole(ctx, home.ID, acct.ID, "member"); refusal(t, err) != "OWNER_STAYS" {
		t.Fatalf("the owner makes itself a member: %v; want OWNER_STAYS", err)
	}
	jb2, err := bob.Join(ctx, home.ID) // the role holds from its next arrival
	if err != nil {
		t.Fatal(err)
	}
	pb2, _ := connect(t, jb2)
	binv = pb2.inventory()
	pb2.snapshot(0)
	bseq = 0
	if _, _, code := pb2.place(&bseq, slotOf(binv.Slots, chair.Code)); code != wire.CodeOK {
		t.Fatalf("a builder places in the home: %v", code)
	}

	// The chair and ann's 3 chairs are stored together, then the host dies.
	waitFor(t, "ann's inventory stored with the home", func() bool {
		ch, err := r.store.Character(ctx, store.AccountID(acct.ID))
		if err != nil {
			return false
		}
		c, err := blob.DecodeCharacter(ch.State)
		if err != nil {
			return false
		}
		n := 0
		for _, s := range c.Inventory {
			if s.Kind == chair.Code {
				n += int(s.Count)
			}
		}
		return n == 3
	})
	h := r.live(home.ID).Host
	if err := syscall.Kill(h.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dead host unregistered", func() bool { _, ok := r.host(h.ID); return !ok })
	j2, err := ann.Join(ctx, home.ID)
	if err != nil {
		t.Fatalf("join after the host died: %v", err)
	}
	p2, _ := connect(t, j2)
	if got := count(p2.inventory().Slots, chair.Code); got != 3 {
		t.Fatalf("after the crash ann carries %d chairs; want the 3 stored", got)
	}
	p2.until(func(wire.Message) bool { return p2.placedAt(x, y) == chair.Code })

	// Every item the store holds is counted once, and as many as were made.
	leave(t, p2) // bob's session died with the host; his body was never re-made
	waitFor(t, "the home's last snapshot stored", func() bool {
		c, err := storedItems(ctx, r.store)
		return err == nil && c.Characters == 2 && c.Areas == 1
	})
	c, err := storedItems(ctx, r.store)
	if err != nil {
		t.Fatal(err)
	}
	// Ann's 3 and the one placed, at least; bob's kit too if a snapshot
	// of the home stored it before the host died (else its making died
	// with the host, ledger and all: the count is conserved either way).
	for _, k := range c.Kinds {
		if k.Kind == chair.Code && k.Present != 4 && k.Present != 8 {
			t.Fatalf("the store holds %d chairs; want 4 (ann's kit) or 8 (bob's stored too)", k.Present)
		}
	}
	admin, adminAcct := r.player("admin")
	r.admin(adminAcct)
	if got, err := admin.Items(ctx); err != nil || !got.OK || got.Stacks != c.Stacks {
		t.Fatalf("GET /v1/admin/items = %+v, %v; want the %d stacks counted, conserved", got, err, c.Stacks)
	}
	if _, err := ann.Items(ctx); refusal(t, err) != "FORBIDDEN" {
		t.Fatalf("a player counts the realm's items: %v; want FORBIDDEN", err)
	}
}

// leave ends p's session on purpose: its body leaves, its state stored.
func leave(t *testing.T, p *peer) {
	t.Helper()
	p.send(&wire.Leave{})
	p.until(func(m wire.Message) bool { _, ok := m.(*wire.Left); return ok })
}

// TestItemsInPlay: the live count sees what the store does not hold yet
// (the home stores a snapshot only every hour here): a new character's
// starter kit, minted in the live home, and a chair placed since; once the
// owner leaves and the home stored its snapshot, the store's count is the
// live one.
func TestItemsInPlay(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.PersistEvery = time.Hour })
	ctx := context.Background()
	admin, adminAcct := r.player("admin")
	r.admin(adminAcct)
	ann, _, _, p := atHome(t, r)
	chair, _ := content.Default().Item("chair")
	inv := p.inventory()
	p.snapshot(0)
	chairs := func(c dirclient.ItemCensus) int64 {
		for _, k := range c.Kinds {
			if k.Kind == chair.Code {
				return k.Present
			}
		}
		return 0
	}
	stored, err := admin.Items(ctx)
	if err != nil || !stored.OK || stored.Live || chairs(stored) != 0 {
		t.Fatalf("the store's count before any snapshot: %+v, %v; want none of the kit", stored, err)
	}
	live, err := admin.LiveItems(ctx)
	if err != nil || !live.OK || !live.Live || len(live.Unanswered) != 0 || chairs(live) != 4 {
		t.Fatalf("the live count: %+v, %v; want the kit's 4 chairs, conserved", live, err)
	}
	var seq uint32
	if _, _, code := p.place(&seq, slotOf(inv.Slots, chair.Code)); code != wire.CodeOK {
		t.Fatalf("placing a chair: %v", code)
	}
	placed, err := admin.LiveItems(ctx)
	if err != nil || !placed.OK || placed.Stacks != live.Stacks+1 || chairs(placed) != 4 {
		t.Fatalf("the live count after a chair was placed: %+v, %v; want one stack more (%d), 4 chairs", placed, err, live.Stacks+1)
	}
	if _, err := ann.LiveItems(ctx); refusal(t, err) != "FORBIDDEN" {
		t.Fatalf("a player counts the items in play: %v; want FORBIDDEN", err)
	}
	leave(t, p)
	waitFor(t, "the home's snapshot stored", func() bool {
		c, err := admin.Items(ctx)
		return err == nil && c.Stacks == placed.Stacks
	})
	if c, err := admin.Items(ctx); err != nil || !c.OK || chairs(c) != 4 {
		t.Fatalf("the store's count after the owner left: %+v, %v; want the 4 chairs, conserved", c, err)
	}
}
