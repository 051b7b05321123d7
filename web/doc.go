// Package web is ley's browser side: the TypeScript client SDK (web/sdk,
// an npm package a game team imports), the web client built on it
// (web/app), the operator's console (web/app/src/console.ts, admins
// only), and the bundle of them that the director serves at / and
// /console and embeds from here.
//
// # Outline
//
//   - [Files]: the bundled web client (index.html, app.js, app.css; the
//     console's console.html, console.js, console.css; the service worker
//     sw.js; the engine, engine-<hash>.wasm.gz), as committed in
//     web/dist. `go generate ./web` rebuilds it with esbuild's Go API and
//     the go command (package web/bundle), so building and running ley
//     needs only Go; a test fails when web/dist is not what the sources
//     bundle into.
//   - The engine (web/engine, built for GOOS=js GOARCH=wasm by
//     web/engine/wasm): the server's own Area simulation in the browser,
//     for the SDK's prediction and for offline play (docs/offline.md).
//     TestDivergence drives thousands of seeded intents through it in
//     Chromium and through the server's Area here, tick by tick.
//   - The SDK's tests and the web client's tests run in a real headless
//     Chromium (Debian's chromium package) driven by chromedp from
//     `go test ./web/...`: the SDK against the golden files of
//     net/wire/testdata and the worked sequence of systems/interest/testdata/sequence,
//     and the client against a realm started by the test (`ley run`).
//   - The SDK's codes (web/sdk/src/codes.ts) and message type numbers
//     (web/sdk/src/protocol.ts) are written by hand; a Go test
//     (TestSDKMirrorsWire) holds them to net/wire's, name for name and
//     number for number.
//
// # Caveats
//
//   - Without Chromium the browser tests skip, except under CI (LEY_CI
//     set, as .ci/run does), where they fail.
package web
