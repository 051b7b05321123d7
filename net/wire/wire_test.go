package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.hex golden files")

// examples holds one value of every message type: the worked examples of
// docs/protocol.md. Empty lists are non-nil because decoding yields
// non-nil empty slices.
var examples = []Message{
	&Hello{Grant: "g-7f3a9c", JoinID: 42, Versions: []uint16{7}},
	&Resume{Token: "r-51e0", JoinID: 43},
	&Intent{Seq: 7, Kind: IntentMoveItem, Dir: DirE, Item: ItemSlots{From: 2, To: ContainerSlot + 5, Count: 4}},
	&HelloAck{JoinID: 42, Entity: 1001, Tick: 86400, Area: 5, ResumeToken: "r-51e0", Version: 7},
	&Error{Code: CodeBadGrant, RefSeq: 0, JoinID: 42, Detail: "grant unknown"},
	&Rehello{Code: CodeRehello, Detail: "binding lost"},
	&IntentResult{Seq: 7, Code: CodeBlocked},
	&Snapshot{Tick: 86402, AckSeq: 7, Flags: 0, Records: exampleRecords},
	&Static{Cell: 9, Version: 3, Floor: []uint32{1, 12, 7, 2, 3, 50}, Objects: []Object{{ID: 7, Kind: ObjectDoor, X: 8, Y: 9, State: 1, Text: ""}, {ID: 8, Kind: ObjectSign, X: 10, Y: 9, Text: "Inn"}, {ID: 1<<30 + 4, Kind: ObjectItem, X: 11, Y: 9, Item: 6}}},
	&Presence{Area: 5, Players: []Player{{Entity: 1001, Name: "ada"}, {Entity: 1002, Name: "bo"}}},
	&AreaClosing{Reason: CodeAreaClosing, GraceMS: 5000},
	&TakenOver{},
	&Leave{},
	&Watch{Entity: 1001},
	&Flow{Creature: 12, Target: 1001, X: 16, Y: 3, W: 3, H: 2, Dirs: []byte{2, 2, 8, 1, 0, 255}},
	&Left{},
	&PortalBlocked{Reason: CodeTimeout},
	&PortalTransferRejected{Reason: CodeNotMember},
	&PortalMoved{Area: 6, WSURL: "wss://h2.example/ws", Grant: "g-0b11", JoinID: 44},
	&AreaInfo{Area: 5, Kind: "village", W: 64, H: 48, CellSize: 8, TickHz: 20, SnapshotHz: 10, StepMS: 200, QueueLen: 8,
		InterestRadius: 24, ResumeGraceMS: 30000, Rules: RuleDiagonal, PlayerHP: 100, Creatures: []CreatureKind{{Name: "deer", HP: 15}},
		Items: []ItemKind{{Code: 6, Name: "chest", Label: "Chest", Stack: 1, Slot: ItemSlotOccupant, Flags: ItemBlocks, Look: 6, Container: 16},
			{Code: 13, Name: "wood", Label: "Wood", Stack: 99},
			{Code: 17, Name: "cauldron", Label: "Cauldron", Stack: 1, Slot: ItemSlotOccupant, Flags: ItemBlocks, Look: 17, Container: 4, Station: "cauldron"},
			{Code: 18, Name: "blueprint_table", Label: "Table blueprint", Stack: 1, Flags: ItemTeaches},
			{Code: 20, Name: "sapling", Label: "Sapling", Stack: 10, Slot: ItemSlotOccupant, Flags: ItemBlocks, Look: 20, Becomes: 21, Grows: 120}},
		Plots: []Plot{{X: 10, Y: 4, W: 6, H: 5}}},
	&Inventory{Slots: exampleSlots(InventorySlots, Stack{ID: 7<<32 | 1, Kind: 13, Count: 12}, Stack{}, Stack{ID: 7<<32 | 9, Kind: 6, Count: 1}),
		Stash: []Stack{{ID: 3<<32 | 2, Kind: 14, Count: 5}}},
	&Container{X: 11, Y: 9, Slots: exampleSlots(4, Stack{ID: 7<<32 | 4, Kind: 15, Count: 8}),
		Prices: []Amount{{Kind: 14, Count: 3}, {}, {}, {}}, Flags: ContainerOwned, Ready: 0},
	&Recipes{Known: []Recipe{{Code: 1, Name: "planks", Station: "cauldron", Inputs: []Amount{{Kind: 13, Count: 2}}, Outputs: []Amount{{Kind: 15, Count: 4}}},
		{Code: 5, Name: "brick", Station: "furnace", Inputs: []Amount{{Kind: 14, Count: 2}}, Outputs: []Amount{{Kind: 23, Count: 1}}, Seconds: 10}}},
	&Trade{ID: 3, With: 1002, Rev: 4, Mine: []Offered{{Slot: 2, Stack: Stack{ID: 7<<32 | 9, Kind: 15, Count: 4}}},
		Theirs: []Offered{{Slot: 0, Stack: Stack{ID: 3<<32 | 2, Kind: 14, Count: 5}}}, Confirmed: TradeTheirs, Status: TradeOpen, Reason: CodeOK},
}

// exampleShort is the worked example of a short snapshot: sent after the
// snapshot example (tick 86402, ack_seq 7), tick 86412, ack_seq 8, player 9
// stepped south. Its golden file is testdata/snapshot_short.hex.
var exampleShort = &ShortSnapshot{Tick8: 86412 % 256, Ack8: 8, Records: AppendStep(nil, 9, DirS)}

const shortGolden = "testdata/snapshot_short.hex"

// TestGoldenShortSnapshot is TestGolden for the short snapshot, whose
// golden file its type does not name.
func TestGoldenShortSnapshot(t *testing.T) {
	if *update {
		b, err := Encode(exampleShort)
		if err != nil {
			t.Fatal(err)
		}
		text := formatHex(exampleShort, b)
		text = []byte(strings.Replace(string(text), "TestGolden", "TestGoldenShortSnapshot", 1))
		if err := os.WriteFile(shortGolden, text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := readShortGolden(t)
	got, err := Decode(b)
	if err != nil || !reflect.DeepEqual(got, exampleShort) {
		t.Fatalf("Decode(%x) = %+v, %v; want %+v", b, got, err, exampleShort)
	}
	if again, err := Encode(got); err != nil || !bytes.Equal(again, b) {
		t.Errorf("re-encode = %x, %v; want %x", again, err, b)
	}
}

func readShortGolden(t testing.TB) []byte {
	t.Helper()
	text, err := os.ReadFile(shortGolden)
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseHex(text)
	if err != nil {
		t.Fatalf("%s: %v", shortGolden, err)
	}
	return b
}

// exampleSlots is n slots beginning with first (the rest empty).
func exampleSlots(n int, first ...Stack) []Stack {
	out := make([]Stack, n)
	copy(out, first)
	return out
}

// exampleRecords are the snapshot example's records: player 9 stepped
// east, creature 12 stepped into this view from elsewhere (whole), and
// cell 3 left the view.
var exampleRecords = func() []byte {
	b := AppendStep(nil, 9, DirE)
	b = AppendEnter(b, &EntityState{ID: 12, Kind: KindCreature, Look: 1, X: 17, Y: 4, Facing: DirW, HP: 15})
	return AppendForget(b, 3)
}()

func goldenPath(t Type) string { return filepath.Join("testdata", t.String()+".hex") }

// formatHex renders a golden file: comment lines, then 16 bytes a line.
func formatHex(m Message, b []byte) []byte {
	var w bytes.Buffer
	v := strings.ReplaceAll(fmt.Sprintf("%+v", m), "_:{} ", "")
	fmt.Fprintf(&w, "# %s (type %d): %s\n", m.Type(), m.Type(), strings.TrimPrefix(v, "&"))
	fmt.Fprintf(&w, "# %d bytes; regenerate with: go test ./net/wire/ -run TestGolden -update\n", len(b))
	for i := 0; i < len(b); i += 16 {
		line := b[i:min(i+16, len(b))]
		for j, c := range line {
			if j > 0 {
				w.WriteByte(' ')
			}
			fmt.Fprintf(&w, "%02x", c)
		}
		w.WriteByte('\n')
	}
	return w.Bytes()
}

// parseHex reads hex text, ignoring whitespace and '#' comments.
func parseHex(text []byte) ([]byte, error) {
	var digits strings.Builder
	for line := range strings.SplitSeq(string(text), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	return hex.DecodeString(digits.String())
}

func readGolden(t testing.TB, typ Type) []byte {
	t.Helper()
	text, err := os.ReadFile(goldenPath(typ))
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseHex(text)
	if err != nil {
		t.Fatalf("%s: %v", goldenPath(typ), err)
	}
	return b
}

func TestGolden(t *testing.T) {
	seen := map[Type]bool{}
	for _, m := range examples {
		seen[m.Type()] = true
		t.Run(m.Type().String(), func(t *testing.T) {
			if *update {
				b, err := Encode(m)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(goldenPath(m.Type()), formatHex(m, b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b := readGolden(t, m.Type())
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Errorf("Decode = %+v; want %+v", got, m)
			}
			again, err := Encode(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, b) {
				t.Errorf("re-encode = %x; want %x", again, b)
			}
		})
	}
	for typ := Type(0); typ < 255; typ++ {
		if typ.Known() && !seen[typ] {
			t.Errorf("no example for %s", typ)
		}
	}
}

// TestProtocolDocExamples keeps the worked examples of docs/protocol.md in
// step with the golden files: each golden's hex must appear there.
func TestProtocolDocExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(string(doc)), "")
	for _, m := range examples {
		want := hex.EncodeToString(readGolden(t, m.Type()))
		if !strings.Contains(flat, want) {
			t.Errorf("docs/protocol.md lacks the %s example %s", m.Type(), want)
		}
	}
	if want := hex.EncodeToString(readShortGolden(t)); !strings.Contains(flat, want) {
		t.Errorf("docs/protocol.md lacks the short snapshot example %s", want)
	}
}

func TestCodeRegistry(t *testing.T) {
	// The numbers are the protocol: this table must only ever grow.
	tests := []struct {
		code Code
		num  uint16
		name string
	}{
		{CodeOK, 0, "OK"}, {CodeNotHello, 1, "NOT_HELLO"}, {CodeRehello, 2, "REHELLO"},
		{CodeBadGrant, 3, "BAD_GRANT"}, {CodeGrantExpired, 4, "GRANT_EXPIRED"},
		{CodeSuperseded, 5, "SUPERSEDED"}, {CodeTooFast, 6, "TOO_FAST"},
		{CodeEntityGone, 7, "ENTITY_GONE"}, {CodePortalInProgress, 8, "PORTAL_IN_PROGRESS"},
		{CodeTakenOver, 9, "TAKEN_OVER"}, {CodeAreaClosing, 10, "AREA_CLOSING"},
		{CodeMalformed, 11, "MALFORMED"}, {CodeTooLarge, 12, "TOO_LARGE"},
		{CodeRateLimited, 13, "RATE_LIMITED"}, {CodeVersionUnsupported, 14, "VERSION_UNSUPPORTED"},
		{CodeBlocked, 15, "BLOCKED"}, {CodeOutOfBounds, 16, "OUT_OF_BOUNDS"},
		{CodeNoPath, 17, "NO_PATH"}, {CodeTimeout, 18, "TIMEOUT"},
		{CodeNotMember, 19, "NOT_MEMBER"}, {CodeRealmClosed, 20, "REALM_CLOSED"},
		{CodeRealmFull, 21, "REALM_FULL"}, {CodeInternal, 22, "INTERNAL"},
		{CodeUnknownType, 23, "UNKNOWN_TYPE"}, {CodeBadToken, 24, "BAD_TOKEN"},
		{CodeNotAllowed, 25, "NOT_ALLOWED"}, {CodeAreaFull, 26, "AREA_FULL"},
		{CodeStaleSeq, 27, "STALE_SEQ"}, {CodeNothingThere, 28, "NOTHING_THERE"},
		{CodeUnavailable, 29, "UNAVAILABLE"}, {CodeInventoryFull, 30, "INVENTORY_FULL"},
		{CodeNotBuilder, 31, "NOT_BUILDER"}, {CodeBudget, 32, "BUDGET"},
		{CodeCooldown, 33, "COOLDOWN"}, {CodeItemCap, 34, "ITEM_CAP"},
		{CodeOccupied, 35, "OCCUPIED"}, {CodeNotEmpty, 36, "NOT_EMPTY"},
		{CodeSpectator, 37, "SPECTATOR"}, {CodeOffPlot, 38, "OFF_PLOT"},
		{CodeNoRecipe, 39, "NO_RECIPE"}, {CodeKnown, 40, "KNOWN"},
		{CodeTrading, 41, "TRADING"}, {CodeNotTrading, 42, "NOT_TRADING"}, {CodeBusy, 43, "BUSY"},
		{CodeStale, 44, "STALE"}, {CodeTradeCancelled, 45, "TRADE_CANCELLED"}, {CodeTradeFar, 46, "TRADE_FAR"},
		{CodeTradeLeft, 47, "TRADE_LEFT"}, {CodeTradePortal, 48, "TRADE_PORTAL"},
		{CodeTradeTakenOver, 49, "TRADE_TAKEN_OVER"}, {CodeTradeChanged, 50, "TRADE_CHANGED"},
		{CodeWorking, 51, "WORKING"}, {CodeNotOwner, 52, "NOT_OWNER"}, {CodeNotForSale, 53, "NOT_FOR_SALE"},
		{CodeCantPay, 54, "CANT_PAY"},
		{Code(55), 55, "CODE(55)"},
	}
	for _, tt := range tests {
		if got := uint16(tt.code); got != tt.num {
			t.Errorf("%s = %d; want %d", tt.name, got, tt.num)
		}
		if got := tt.code.String(); got != tt.name {
			t.Errorf("Code(%d).String() = %q; want %q", tt.num, got, tt.name)
		}
		if tt.code.Known() && (tt.code.Meaning() == "" || tt.code.Meaning() == "unknown code") {
			t.Errorf("Code(%d).Meaning() = %q; want a description", tt.num, tt.code.Meaning())
		}
	}
	if got := Code(999).Meaning(); got != "unknown code" {
		t.Errorf("Code(999).Meaning() = %q; want %q", got, "unknown code")
	}
}

func TestNegotiate(t *testing.T) {
	tests := []struct {
		client []uint16
		want   uint16
		ok     bool
	}{
		{[]uint16{7}, 7, true},
		{[]uint16{8, 7, 6}, 7, true},
		{[]uint16{6}, 0, false},
		{[]uint16{6, 8}, 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		got, ok := Negotiate(tt.client)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Negotiate(%v) = %d, %v; want %d, %v", tt.client, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCodeOf(t *testing.T) {
	tests := []struct {
		err  error
		want Code
	}{
		{nil, CodeOK},
		{fmt.Errorf("x: %w", ErrMalformed), CodeMalformed},
		{fmt.Errorf("x: %w", ErrTooLarge), CodeTooLarge},
		{fmt.Errorf("x: %w", ErrVersion), CodeVersionUnsupported},
		{fmt.Errorf("x: %w", ErrUnknownType), CodeUnknownType},
		{errors.New("other"), CodeInternal},
	}
	for _, tt := range tests {
		if got := CodeOf(tt.err); got != tt.want {
			t.Errorf("CodeOf(%v) = %v; want %v", tt.err, got, tt.want)
		}
	}
}
