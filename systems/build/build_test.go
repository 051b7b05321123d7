package build

import (
	"testing"

	"github.com/leyworks/ley/content"
)

// TestAreasOfALibraryShareItsCatalogue: every Area built from one library
// runs on the one item catalogue compiled from it, not on a copy of its
// own; a library of other content has its own.
func TestAreasOfALibraryShareItsCatalogue(t *testing.T) {
	lib := content.Default()
	home, err := Area(lib, Spec{ID: 1, Template: "home", TickRate: 20, CellSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	village, err := Area(lib, Spec{ID: 2, Template: "village", TickRate: 20, CellSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	if home.Items.Catalog == nil || home.Items.Catalog != village.Items.Catalog {
		t.Fatalf("two Areas of one library hold catalogues %p and %p; want the same one", home.Items.Catalog, village.Items.Catalog)
	}
	if len(home.Items.Kinds) == 0 || len(home.Items.Recipes) == 0 {
		t.Fatalf("the catalogue holds %d item kinds and %d recipes; the embedded content has both", len(home.Items.Kinds), len(home.Items.Recipes))
	}
	other, err := content.Load(content.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	again, err := Area(other, Spec{ID: 3, Template: "home", TickRate: 20, CellSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	if again.Items.Catalog == home.Items.Catalog {
		t.Fatal("an Area of another library runs on the first library's catalogue")
	}
}
