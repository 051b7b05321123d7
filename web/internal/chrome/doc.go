// Package chrome starts a headless Chromium for the web tests and opens
// tabs in it with chromedp, each in a browser context of its own (its own
// cookies and storage: a second player).
//
// # Outline
//
//   - [Start] finds Chromium (LEY_CHROMIUM, else chromium on PATH, else
//     /usr/bin/chromium) and starts it headless with a fresh profile,
//     stopped when the test ends.
//   - [Browser.Tab] opens a tab in a new browser context and records its
//     console and its uncaught exceptions.
//
// # Caveats
//
//   - Without Chromium a test skips, except under CI (LEY_CI or CI set in
//     the environment, as .ci/run sets LEY_CI), where it fails: the
//     browser tests must run there.
package chrome
