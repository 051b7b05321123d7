// Package web is ley's browser side: the TypeScript client SDK (web/sdk,
// an npm package a game team imports), the web client built on it
// (web/app), and the bundle of both that the director serves at / and
// embeds from here.
//
// # Outline
//
//   - [Files]: the bundled web client (index.html, app.js, app.css), as
//     committed in web/dist. `go generate ./web` rebuilds it with
//     esbuild's Go API (package web/bundle), so building and running ley
//     needs only Go; a test fails when web/dist is not what the sources
//     bundle into.
//   - The SDK's tests and the web client's tests run in a real headless
//     Chromium (Debian's chromium package) driven by chromedp from
//     `go test ./web/...`: the SDK against the golden files of
//     net/wire/testdata and the worked sequence of area/testdata/sequence,
//     and the client against a realm started by the test (`ley run`).
//
// # Caveats
//
//   - Without Chromium the browser tests skip, except under CI (LEY_CI
//     set, as .ci/run does), where they fail.
package web
