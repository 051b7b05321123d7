// Package statics is an Area's static map: what its ECS world does not
// hold but every client draws and every system walks on. It keeps the
// ground of each square, the objects standing on squares (doors, trees,
// signs, rocks, chests, portals), the squares where players appear, and
// per spatial-hash cell the objects in it and the cell's map version, the
// version the protocol's static message carries.
//
// # Outline
//
//   - [New] makes the Map of a fresh grid; [Map.LayMap] lays a content
//     map on it; [Map.Add] and [Map.AddPortal] put objects on squares.
//   - The Map writes its objects into the grid as they are: a blocking
//     object's square is a wall of the floor layer, a hiding one's blocks
//     the sight layer, so movement, A*, flow fields, sensing and line of
//     sight see a change in the tick it is made.
//   - [Map.Toggle] opens or closes a door; every change bumps its cell's
//     [Map.Version], which tells the interest system to send the cell's
//     map again.
//   - [Map.Static] fills a static message for one cell.
//
// # Caveats
//
// A Map belongs to its Area and is touched only by the goroutine ticking
// it. Objects are kept off walls by the content loader; Add does not check.
package statics
