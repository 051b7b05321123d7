// Package content is a realm's content as data: the maps (Tiled JSON
// files), the rule sets, the creature kinds, the item kinds and what the
// map's objects yield when gathered, and the templates that join a rule
// set to a map. The defaults are embedded in the binary; an operator
// may lay a folder of their own over them ([LoadDir]).
//
// content only loads and checks. It runs no simulation and imports no
// other ley package: the director uses it to name area kinds and
// templates, the area host turns a [Map] into grid layers, static
// objects, spawners and portals.
//
// # Outline
//
//   - [Load] reads a whole content folder (an [fs.FS]) and checks it as a
//     whole; [Default] is the embedded content, loaded once; [LoadDir]
//     merges an operator's folder over it.
//   - A [Library] answers lookups: [Library.Template], [Library.Rules],
//     [Library.Creature], [Library.Kind] (the area-kind check the director
//     makes), [Library.Templates], [Library.Kinds], and for items
//     [Library.Item], [Library.ItemByCode] (the protocol's code),
//     [Library.Items] and [Library.Source], and [Library.Recipes].
//   - [LoadMap] reads and checks one Tiled map into a [Map]: per-square
//     [FloorKind] and walls, static [Object] values, spawn points,
//     [Spawner] and [Portal] values, with [Map.Walkable] and [Map.Opaque].
//   - Every error is an [*Error] naming the file, layer and object, and
//     wrapping [ErrInvalid], [ErrUnsupported], [ErrTooLarge] or
//     [ErrNotFound]. Nothing unknown is ever given a silent default.
//
// # A content folder
//
//	rules.json       the rule sets ([RuleSet] shows the format)
//	creatures.json   the creature kinds ([Creature] shows the format)
//	templates.json   the templates ([Template] shows the format)
//	items.json       the item kinds and the sources (see "Items" below)
//	recipes.json     the recipes, optional ([Recipe] shows the format)
//	maps/*.tmj       Tiled maps; maps/ley.tsj is the shipped tileset
//
// The embedded content has the rule sets and templates home, village,
// arena and offline (offline plays on the home map), and the creature
// kinds wolf, deer and slime, and the item kinds and sources listed under
// "Items" below. A template named like a rule set is the
// default template of that area kind. The shipped maps are written by
// the program in internal/gen (go generate); they open in Tiled.
//
// # An operator's folder
//
// ley's operator may point the server at a folder of their own with the
// embedded layout (see [LoadDir]). Every file is optional. Entries of its
// rules.json, creatures.json, templates.json, items.json and recipes.json replace the
// embedded entries of the same name (a source: of the same class) and add
// new ones; any other file (a map, a tileset) is read in preference to the
// embedded file of the same path. An item kind's code is for ever: an
// operator's kind named like an embedded one must keep the embedded
// kind's code (it may change anything else), and a new kind takes a code
// from [MinOperatorItemCode] (32768) to 65535 that no other kind has.
// Codes 1 to 32767 are ley's, so a kind a later ley ships never takes a
// code an operator's realm already stores. A recipe's code is for ever
// in the same way ([MinOperatorRecipeCode]): a character's state keeps
// the codes of the recipes it knows.
// So to give the village a new map, save it from Tiled as
// maps/village.tmj in the folder; to add an area kind "forest", add a
// "forest" rule set and a "forest" template naming maps/forest.tmj. The
// whole is checked at start-up, and the first problem stops it with a
// message naming the file. [Embedded] gives the embedded files to copy
// from.
//
// # Items
//
// items.json lists the item kinds (the format is [Item]'s, the "placed"
// object [Placement]'s) and the sources, what gathering from a map's
// objects gives (the format is [Source]'s), and the starter kit, what
// every new character is given in the first Area it joins (a yields
// list; an operator's items.json that has one replaces it). Each table is
// optional within the file. For example:
//
//	{
//	  "items": [
//	    {"name": "wood", "code": 13, "label": "Wood", "stack": 99},
//	    {"name": "plank", "code": 15, "label": "Plank", "stack": 99},
//	    {"name": "chest", "code": 6, "label": "Chest", "stack": 1,
//	     "placed": {"slot": "occupant", "blocks": true, "look": 6, "container": 16}},
//	    {"name": "door_wood", "code": 10, "label": "Wooden door", "stack": 10,
//	     "placed": {"slot": "occupant", "door": true, "look": 10}},
//	    {"name": "floor_wood", "code": 11, "label": "Wooden floor", "stack": 99,
//	     "placed": {"slot": "floor", "look": 11},
//	     "yields": [{"item": "plank", "count": 2}]}
//	  ],
//	  "sources": [
//	    {"class": "tree", "yields": [{"item": "wood", "count": 2}], "cooldown_ticks": 40}
//	  ],
//	  "starter": [{"item": "chest", "count": 1}, {"item": "wood", "count": 20}]
//	}
//
// Names are like the other names (lower-case letters, digits, '-' and
// '_', starting with a letter; at most [MaxName] bytes). Every kind a
// yields list names must be listed. A kind with no "placed" stays in
// inventories; a placed one sits in a square's floor slot (a floor tile:
// walkable, never blocking sight) or its occupant slot (furniture, walls,
// doors), and taking it back gives its yields, by default itself, once.
// At most [MaxYields] entries of at most [MaxYieldCount] each; a stack of
// 1 to [MaxStack]; look and cooldown_ticks in 0..65535 and 1..65535.
//
// # Authoring maps in Tiled
//
// Save maps as JSON (.tmj). ley reads what Tiled writes, from 1.8 on
// (objects' and tiles' class as "type", or as "class" in Tiled 1.9).
//
// The map: orientation orthogonal, not infinite, at most [MaxSide] x
// [MaxSide] squares, any tile size (one tile is one square; object
// positions in pixels are divided by the tile size). A file is at most
// [MaxFileSize] bytes and a map holds at most [MaxObjects] objects.
// Tile layer data may be CSV (a JSON array) or Base64, uncompressed or
// compressed with zlib or gzip (not zstd). Tilesets may be embedded in the
// map or external JSON tilesets (.tsj) beside it; the flip and rotation
// bits of tile IDs are ignored. Layer visibility, opacity, tint and
// parallax are editor matters and change nothing; hidden layers and
// objects count. Layers must not be offset, and must be top-level (no
// groups). Objects must not be rotated; ley reads points, rectangles and
// tile objects (not ellipses, polygons, polylines, text, or objects still
// linked to an object template). Custom properties are allowed only where
// listed below, with the type listed ("float" also takes an int); the map,
// its layers, tilesets and tiles take none.
//
// An object's class is its Class field (called Type before Tiled 1.9); a
// tile object with no class of its own takes its tile's class. Where an
// object stands:
//
//   - a point: the square holding it;
//   - a rectangle: every square whose centre it contains (at least one);
//   - a tile object: the square its image stands on, the one holding the
//     point half a square above the middle of its bottom edge.
//
// Every object must lie inside the map. Where a layer below says "one
// square", a rectangle must cover exactly one.
//
// The layers, by exact name; any other layer is an error:
//
//	floor     tile layer, required
//	walls     tile layer
//	objects   object layer
//	portals   object layer
//	spawns    object layer, required
//	spawners  object layer
//	plots     object layer
//
// floor: every cell's tile gives the square's floor kind: the tile's
// class in its tileset (set it in Tiled's tileset editor) is a floor
// kind's name below. An empty cell is void. A tile with no class, or an
// unknown class, is an error naming the tileset and the tile.
//
// walls: any tile makes its square a wall, whatever the tile: a wall
// stops bodies and line of sight.
//
// objects: static objects, one square each, never on a wall, on void, or
// on a square another object or a portal holds. Class and properties:
//
//	door   open (bool, default false): a closed door blocks movement and sight, an open one neither
//	tree   no properties
//	sign   text (string, required, 1 to 200 bytes)
//	rock   no properties
//	chest  no properties
//
// portals: class "portal", one square, walkable, holding no object and no
// other portal. Properties: target (string, required: the name of the
// template the portal leads to); to_x, to_y (int, both or neither: the
// arrival square in the target's map, which must be walkable there and not
// a portal; without them players arrive on the target's spawn points).
//
// spawns: class "spawn", points or rectangles, no properties: the squares
// where players appear. At least one; each walkable, on no blocking
// object and no portal, none listed twice.
//
// spawners: class "spawner", a point or a rectangle: the area where the
// creatures appear, with at least one walkable square that holds no
// object and no portal. Properties:
//
//	creature  string, required  a creature kind's name (creatures.json)
//	count     int, required     how many are alive at once, 1..1000
//	respawn   float, default 10 seconds before a dead one is replaced, 0..86400
//	leash     int, default 12   how far (squares) one chases from the area before returning, 1..1024
//
// plots: class "plot", a point or a rectangle, no properties: where
// players may build in an Area whose rule set says "build": "plots" (a
// village). Each holds at least one square of ground; plots may overlap
// and may hold objects (nothing is built on an object's square). A rule
// set that builds on plots over a map that marks none is an error.
//
// # Codes
//
// The protocol sends floor kinds and object classes as these uint16
// codes. They are stable: a code is never renumbered or reused, and a new
// kind or class gets a new code.
//
//	floor kind    code  walkable  blocks sight
//	void            0   no        no    (an empty floor cell)
//	grass           1   yes       no
//	dirt            2   yes       no
//	stone           3   yes       no
//	sand            4   yes       no
//	wood            5   yes       no
//	water           6   no        no
//
//	object class  code  blocks movement      blocks sight
//	door            1   when closed          when closed
//	tree            2   yes                  yes
//	sign            3   yes                  no
//	rock            4   yes                  no
//	chest           5   yes                  no
//	portal          6   no                   no    (a portal square; authored in "portals", not "objects")
//
// Code 0 of the object classes is "none" and is never sent for an object.
// A wall is not a floor kind: the walls layer is sent on its own.
//
// Item kinds carry their code in items.json (1..65535; 0 is no item, codes
// from [MinOperatorItemCode] up are an operator's). The shipped kinds:
//
//	item kind     code  placed    blocks       blocks sight  stack
//	chair            1  occupant  yes          no               10
//	table            2  occupant  yes          no                5
//	bed              3  occupant  yes          no                1
//	lamp             4  occupant  yes          no               10
//	rug              5  occupant  no           no               10
//	chest            6  occupant  yes          no                1  (a container of 16 slots)
//	wall_wood        7  occupant  yes          yes              99
//	wall_stone       8  occupant  yes          yes              99
//	fence            9  occupant  yes          no               99
//	door_wood       10  occupant  when closed  when closed      10
//	floor_wood      11  floor     no           no               99
//	floor_stone     12  floor     no           no               99
//	wood            13  -                                       99
//	stone           14  -                                       99
//	plank           15  -                                       99
//	berries         16  -                                       50
//
// The shipped sources: a tree gives 2 wood every 40 ticks, a rock 2
// stone every 60.
//
// # Caveats
//
//   - A door's Open is its state when the map loads; whether players may
//     open and close doors is the simulation's business, not this
//     package's. [Map.Walkable] and [Map.Opaque] describe the map as loaded.
//   - An [Item] describes a kind, never a held or placed item: ids,
//     inventories, placement, taking, gathering and a source's cooldown
//     are the simulation's, as is a placed door's open state.
//   - A [Library] and its maps never change after loading; callers must
//     not write to a Map's slices.
package content

//go:generate go run ./internal/gen -out data/maps
