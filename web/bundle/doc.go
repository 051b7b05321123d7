// Package bundle builds ley's web client with esbuild's Go API: the
// TypeScript of web/app and web/sdk, and the vendored copy of cbor-x, into
// the files of web/dist that the director embeds. Only Go is needed: no
// Node, no npm.
//
// # Outline
//
//   - [App] bundles the web client into its files (index.html, app.js,
//     app.css, and the console's console.html, console.js, console.css),
//     minified, byte for byte the same on every run.
//   - [Write] writes them into web/dist; [Check] reports a difference
//     between a fresh bundle and web/dist (the test that keeps the
//     committed bundle current).
//   - [Tests] bundles the SDK's tests into one script for a browser.
//   - [Vendor] refreshes web/third_party/cbor-x from an `npm ci` of
//     web/sdk; [CheckVendor] holds the vendored copy to the version that
//     web/sdk/package-lock.json pins.
//
// # Caveats
//
//   - The bundle is deterministic for one esbuild version: bumping
//     github.com/evanw/esbuild may change web/dist, which Check then asks
//     to regenerate (go generate ./web).
package bundle
