// Package engine is ley's Area simulation as a client runs it: the
// server's own systems (package systems) built from content as an area
// host builds them (systems/build), with no socket, file or clock of its
// own, so that it compiles to WebAssembly (web/engine/wasm) and the
// browser runs the very rules the server does. Three uses:
//
//   - [Sim]: an Area of a template, driven intent by intent and tick by
//     tick, and read body by body. The divergence test drives the same
//     seeded intents through a Sim in the test process and one in
//     Chromium, and compares them tick by tick.
//   - [Replica]: an Area rebuilt from what a client was told (area_info,
//     then each cell's static), on which a client replays its own
//     pending intents through the server's movement rules: prediction
//     (web/sdk's Session).
//   - [Offline]: a whole Area with the offline rules behind the client
//     protocol, a host in the page: the web client plays it with the same
//     session, view and renderer as online, and keeps its save in the
//     browser (docs/offline.md).
//
// # Caveats
//
//   - In a js/wasm build the content has no recipes (they are the
//     server's secret; package content leaves them out): an offline Area
//     crafts nothing.
//   - A Sim, a Replica or an Offline is used by one goroutine at a time.
package engine
