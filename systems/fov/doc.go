// Package fov computes field of view and line of sight on a grid with
// Albert Ford's symmetric shadowcasting
// (https://www.albertford.com/shadowcasting/): if square A sees floor
// square B, then B sees A.
//
// The package is pure: it reads a floor layer (0 is a wall, which blocks
// sight; anything else is transparent) and writes into a caller's [View].
//
// # Outline
//
//   - [Caster]: a floor layer and its size. [Caster.Compute] casts the field
//     of view of a square within a radius into a View; [Caster.LineOfSight]
//     answers one pair of squares without casting a whole field.
//   - [View]: a stamp-based visibility buffer: each Compute bumps the stamp
//     instead of clearing w*h flags.
//
// # What is visible
//
// Work in one quadrant, with depth d along its axis and column c across it
// (columns grow with x or y). Each square of row d is the segment across
// its middle, columns c-1/2..c+1/2. A floor square (D, C) is visible iff
// the ray from the origin's center to its center (it crosses row d at
// column C*d/D) gets through every row 0 < d < D:
//
//   - crossing strictly inside a square's segment, that square is floor;
//   - crossing exactly where squares m and m+1 meet: both walls block; one
//     wall lets the ray through, but from then on it runs along that wall's
//     edge, and at later meeting points only the square on the far side of
//     that edge counts (m+1 after a low wall, m after a high one; a ray
//     along both edges is blocked). This is where Ford's row bounds
//     (round ties up at the start, down at the end) put the light.
//
// A wall square is visible if its segment is reached at all (Ford's
// "expansive walls"), which is not symmetric. The origin is always visible;
// off the grid counts as wall and is never marked. Radius r keeps squares
// with dx*dx + dy*dy <= r*r.
//
// [Caster.LineOfSight] tests that ray directly, so for floor squares within
// the radius it agrees with Compute (the tests check it on random maps).
//
// # Caveats
//
//   - A Caster aliases the floor layer: a wall placed is seen at the next
//     call.
//   - A View belongs to one goroutine; a Caster holds no state between calls
//     and can be shared by goroutines reading the same floor.
package fov
