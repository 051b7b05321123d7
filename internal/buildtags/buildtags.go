// Package buildtags names the build tags ley is built with, so that every
// place that runs `go build` (the Makefile, the tests and benchmarks that
// build the binary they spawn, the container image and
// docs/deploy/Dockerfile) builds the same product.
//
// The product is built with arche's `tiny` tag: its component masks are
// 64 bits instead of 256, which every World's registries, archetypes and
// nodes are sized by. ley registers a dozen component types and a handful
// of resources, well under 64; an Area's World then holds some 14 KB less
// (bench/RESULTS.md, "Smaller Worlds"), and spawning an Area is faster.
// A build without the tag works the same, only larger.
package buildtags

// Product is the tag list of the product binary (`make build`).
const Product = "tiny"

// Test is the tag list of the test suite and of the binaries tests spawn:
// the product's tags and leytest, which compiles the test machinery in
// (internal/failpoint).
const Test = "leytest," + Product
