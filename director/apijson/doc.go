// Package apijson holds the JSON shapes of the director's HTTP API: the
// director answers with them and [github.com/leyworks/ley/director/dirclient]
// decodes them, so that the two cannot drift apart. The OpenAPI document
// (director/openapi.yaml) describes the same shapes; the director's tests
// check its answers against it.
package apijson
