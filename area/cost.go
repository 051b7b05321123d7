package area

// The memory an Area holds is almost all in arrays sized by its squares
// (w*h) and by its spatial hash's cells ((w/CellSize)*(h/CellSize)). The
// estimate, per square:
//
//	grid layers      12 B  floor, occupant, sight: 3 x int32 (ecs.Grid)
//	portal stops      4 B  int32, only in an Area with portals
//	static map        5 B  ground uint8 + object index int32 (statics.Map)
//	A* (movement)    16 B  g, parent, seen, closed: 4 x 4 B (astar.Searcher)
//	A* (creatures)   16 B  the creature system's own searcher, where it has one
//	flow fields      10 B  one target's published and building field,
//	                       Dist int32 + Dir uint8 each, where creatures chase
//	line of sight     4 B  the field-of-view marks, where the rules say so
//
// and per hash cell 144 B: the interest round's cell (~104 B), the spatial
// hash's head, count and version (12 B), the static map's version and
// object list header (28 B). Entities, peers and queues are left out:
// they grow with who is there, not with the Area. A 1024x1024 Area with no
// creatures is 33 B x 1 Mi + 144 B x 16 Ki = 35.3 MiB; the host's heap
// grows by some 36.7 MiB for one (TestUnloadedAreasFreeTheirMemory).
const (
	bytesPerSquare      = 12 + 5 + 16
	bytesPortalStops    = 4
	bytesCreatureSearch = 16
	bytesFlowFields     = 10
	bytesLineOfSight    = 4
	bytesPerHashCell    = 144
)

// areaBytes is the estimate above for a w x h Area with hash cells of
// cellSize squares.
func areaBytes(w, h, cellSize int, portals, creatures, lineOfSight bool) int64 {
	perSquare := int64(bytesPerSquare)
	if portals {
		perSquare += bytesPortalStops
	}
	if creatures {
		perSquare += bytesCreatureSearch + bytesFlowFields
	}
	if lineOfSight {
		perSquare += bytesLineOfSight
	}
	cw, ch := (w+cellSize-1)/cellSize, (h+cellSize-1)/cellSize
	return int64(w)*int64(h)*perSquare + int64(cw)*int64(ch)*bytesPerHashCell
}
