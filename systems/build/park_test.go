package build

import (
	"bytes"
	"testing"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
)

// parking is a home built as a host builds one, with the blob it saved
// and what a host parks it with: restore builds it again in its own
// ecs.Area from that blob (Area with Spec.Into, then Load), and the Built
// of it is then built.
type parking struct {
	spec  Spec
	built *Built
	blob  []byte
}

func newParking(tb testing.TB, template string) *parking {
	tb.Helper()
	p := &parking{spec: Spec{ID: 7, Kind: "home", Template: template, W: 32, H: 32, Seed: 3, TickRate: 20, CellSize: 8}}
	var err error
	if p.built, err = Area(content.Default(), p.spec); err != nil {
		tb.Fatal(err)
	}
	p.built.Populate()
	if p.blob, err = p.built.Save(); err != nil {
		tb.Fatal(err)
	}
	return p
}

func (p *parking) restore(a *ecs.Area) {
	s := p.spec
	s.Into = a
	again, err := Area(content.Default(), s)
	if err != nil {
		panic(err)
	}
	if _, err := again.Load(p.blob); err != nil {
		panic(err)
	}
	p.built = again
}

// TestAHomeBuiltAgainSavesTheSameBlob: a home parked and built again in
// its own ecs.Area from its blob saves that same blob, byte for byte: a
// host parks only the blob its director holds (area, park.go), so an Area
// built again and left again must not need a new snapshot to park.
func TestAHomeBuiltAgainSavesTheSameBlob(t *testing.T) {
	for _, template := range []string{"home", TemplateNone} {
		t.Run("template="+template, func(t *testing.T) {
			p := newParking(t, template)
			a, before := p.built.Area, p.built
			a.Park(p.restore)
			a.PostNow(func(*ecs.Area) {})
			if p.built == before || p.built.Area != a || a.Parked() || a.Grid == nil {
				t.Fatalf("the home was not built again in its own Area (parked %v)", a.Parked())
			}
			if err := a.CheckGrid(); err != nil {
				t.Fatal(err)
			}
			got, err := p.built.Save()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, p.blob) {
				t.Fatalf("built again, the home saves %x; want its blob %x", got, p.blob)
			}
			if template == TemplateNone && a.Wanderers() == 0 {
				t.Fatal("a home built from its seed has no wanderers: the check above compared nothing")
			}
		})
	}
}

// BenchmarkParkedHomeBuiltAgain: what a parked home costs to build again
// when someone comes: its engine in its ecs.Area, then its blob.
func BenchmarkParkedHomeBuiltAgain(b *testing.B) {
	p := newParking(b, "home")
	a := p.built.Area
	for b.Loop() {
		a.Park(p.restore)
		a.PostNow(func(*ecs.Area) {})
	}
}
