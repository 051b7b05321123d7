// Package tell makes the messages an Area's state gives a player: the
// item kinds of area_info, an inventory, a container, the recipes a
// character knows, and the wire code of each engine outcome. The area
// host (package area) and the browser's engine (web/engine), which plays
// host offline, tell players the same things in the same words.
package tell
