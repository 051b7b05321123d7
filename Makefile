# ley — see README.md. Every target but peer (Node.js and npm too) works on a fresh machine with only Go installed.
GO      ?= go
PKGS    := ./...
FUZZTIME ?= 10s
BENCHTIME ?= 1s
BENCHCOUNT ?= 6

.PHONY: run test bench fuzz lint ladder ladder-gate peer build

## build: compile the single binary into ./bin/ley, with the product's
## build tags (internal/buildtags: arche's 64-bit masks make every Area's
## World smaller)
TAGS ?= tiny
build:
	$(GO) build -tags $(TAGS) -o bin/ley ./cmd/ley

## run: a whole realm on this machine (director, area hosts, SQLite under ./data, a seeded demo)
run: build
	./bin/ley run

## test: vet (release and leytest builds, and the browser's engine for
## GOOS=js GOARCH=wasm: it must build there), the whole suite with the race
## detector, then the allocation tests again without it (the race detector
## empties sync.Pools at random). The suite is built with the leytest tag:
## the test machinery (failpoints, the area host's simulation harness, the
## model test's mutation switches) exists only in such builds, never in
## the product binary (cmd/ley's TestReleaseBinaryHasNoTestMachinery).
## The per-package timeout guards against a hang: the slowest package,
## director, takes some 450 s alone and 730-830 s beside a second suite
## (its tests run one after another, each a realm of real processes).
TESTTAGS ?= leytest,tiny
test:
	$(GO) vet -tags $(TAGS) $(PKGS)
	$(GO) vet -tags $(TESTTAGS) $(PKGS)
	GOOS=js GOARCH=wasm $(GO) vet ./web/engine/...
	$(GO) test -race -tags $(TESTTAGS) -count=1 -timeout 20m $(PKGS)
	$(GO) test -tags $(TESTTAGS) -count=1 -run 'Alloc' $(PKGS)

## bench: every benchmark, several runs, in a format benchstat compares
bench:
	mkdir -p bench/out
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) $(PKGS) | tee bench/out/bench.txt

## fuzz: run each fuzz target for FUZZTIME
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -tags $(TAGS) -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -tags $(TAGS) -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## lint: go vet and staticcheck (pinned as a go.mod tool): the product
## as released (no tests: they build with the test machinery), and
## everything with it
lint:
	$(GO) vet -tags $(TAGS) $(PKGS)
	$(GO) vet -tags $(TESTTAGS) $(PKGS)
	GOOS=js GOARCH=wasm $(GO) vet ./web/engine/...
	$(GO) tool staticcheck -tags $(TAGS) -tests=false $(PKGS)
	$(GO) tool staticcheck -tags $(TESTTAGS) $(PKGS)
	GOOS=js GOARCH=wasm $$($(GO) tool -n staticcheck) -tests=false ./web/engine/...
	@test -z "$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go'))" || (gofmt -l $$(git ls-files -co --exclude-standard '*.go'); exit 1)

## ladder: the capacity ladder: starts a realm, climbs rungs of Areas x
## players (default 5..80 villages of 20 walking players) until the snapshot
## SLO breaks, and writes bench/ladder-*.md, .json and .svg charts.
## make ladder LADDER_ARGS=--quick checks it in under 45 s;
## LADDER_ARGS="--per-area 1 --rungs 50,100,200,400" climbs homes.
LADDER_ARGS ?=
ladder:
	$(GO) run -tags $(TAGS) ./cmd/ley ladder --out bench $(LADDER_ARGS)

## ladder-gate: the ladder as a regression gate (issue 27): one pinned rung
## of 2,000 village players (the realm on CPU 0, the driver on CPU 1), held
## 20 s, against bench/ladder-village-pinned-gate.json: fails when the rung
## breaks or its realm CPU per player is more than 25% above the
## baseline's. About 45 s; needs two CPUs and a quiet machine.
ladder-gate:
	$(GO) build -tags $(TAGS) -o bin/ley ./cmd/ley
	./bin/ley ladder --pin 0:1 --per-area 20 --rungs 100 --hold 20s --baseline bench/ladder-village-pinned-gate.json --out bench/out --name ladder-gate

## peer: ley beside its Node.js peer (bench/peer: a Colyseus 0.18
## server) and the floor (bench/floorserver -ws) on the same work, driven
## by the same Node.js clients: 500 players in villages of 20 and in homes
## of 1, three alternating runs each, the server pinned to CPU 0 and the
## driver to CPU 1; prints issue 27's table (bench/RESULTS.md, "ley beside
## its Node.js peer") and writes the run and its chart to
## bench/out/peer-compare.json and .svg. The one target that needs more
## than Go: Node.js 20 or later and npm. About 15 min.
## PEER_ARGS="--rounds 1 --workloads homes --targets colyseus,ley" for less.
PEER_ARGS ?=
peer: build
	mkdir -p bench/out
	cd bench/peer && npm ci --no-audit --no-fund && node compare.mjs --out ../out/peer-compare.json --chart ../out/peer-compare.svg $(PEER_ARGS)

## web: rebundle the web client (web/app and web/sdk) into web/dist, which
## the director embeds (esbuild's Go API: Go only); web-check type-checks
## the TypeScript in strict mode (needs Node: npm ci in web/sdk, then tsc)
.PHONY: web web-check
web:
	$(GO) generate ./web
web-check:
	cd web/sdk && npm ci --no-audit --no-fund && npm run check

## image: ley's container image without a container engine: the static
## binary on an empty base, non-root, as a docker-save tarball (ley:dev);
## push it with crane or skopeo (docs/kubernetes.md)
.PHONY: image
image:
	$(GO) run ./internal/containerimage/mkimage -out bin/ley-image.tar
