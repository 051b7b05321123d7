// Package action is the action system: what a body's action intent does
// (attack the body next to it, open or close the door there) and what
// follows a death (a player back at a spawn point, anything else gone).
// It is the engine's rule for both, installed by its Init as the Area's
// OnAction and OnDeath; the host sets neither and reads the events it
// emits after the tick.
package action
