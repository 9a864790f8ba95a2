# Idenplane: `make run` starts the server, `make test` runs every test.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# The commit's date, not the clock's: the same commit builds the same binary.
DATE ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)
export CGO_ENABLED := 0

.PHONY: build run test fuzz bench generate lint check-generated screenshots release FORCE

build: generate
	go build -trimpath -ldflags '$(LDFLAGS)' -o bin/idenplane .

run:
	go run -ldflags '$(LDFLAGS)' . serve

test:
	go test -count=1 -timeout 30m ./...

# Every fuzz target of every package in turn, each for FUZZTIME (go test's
# -fuzztime: 1m, 30s, 10000x). FUZZ narrows the targets by name (a regexp),
# FUZZFLAGS adds flags such as -parallel 2. Minimizing an input is capped at
# 10s: the default minute went on shrinking the large seeds (realm exports,
# WebAuthn credentials) instead of fuzzing. An input that fails is saved in
# the package's testdata/fuzz/FuzzX: commit it with the fix. Fails at the
# end if any target failed. docs/fuzzing.md lists the targets.
FUZZTIME ?= 1m
FUZZ ?= ^Fuzz
FUZZFLAGS ?=
fuzz:
	@failed=; for pkg in $$(go list ./...); do \
		for target in $$(go test -list '$(FUZZ)' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$target in $$pkg for $(FUZZTIME)"; \
			go test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s $(FUZZFLAGS) $$pkg || failed="$$failed $$target"; \
		done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzzing failed:$$failed"; exit 1; fi

# The browser tests' pages as PNGs in docs/screenshots. Needs chromium and
# `npm ci --prefix testdata/browser` (axe-core), as the browser tests do.
screenshots:
	CI=true IDENPLANE_SCREENSHOTS=$(CURDIR)/docs/screenshots go test -count=1 -run '^TestBrowser' .

# The micro-benchmarks, then the load test of the built binary: it seeds a
# throw-away database, starts `idenplane serve` as a child and prints the
# table of docs/performance.md. Flags go in LOADTEST, e.g.
# make bench LOADTEST='-users 1000000 -duration 30s'.
LOADTEST ?=
bench: build
	go test -run '^$$' -bench . -benchmem -timeout 60m ./...
	./bin/idenplane loadtest $(LOADTEST)

generate:
	go tool templ generate

# go mod tidy -diff fails, showing the diff, when go.mod or go.sum is not
# tidy. It reads the test dependencies of every dependency too: offline, it
# needs them in the module cache (GOPROXY=off make lint, once they are).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go mod tidy -diff
	go vet ./...
	go tool staticcheck ./...
	go test -count=1 -run '^TestOpenAPIDocumentIsValid$$' ./app/ # the OpenAPI document against the OpenAPI 3.1 schema
	GOOS=linux GOARCH=arm GOARM=7 go build ./... # 32-bit: an int constant that overflows there fails the armv7 release

# Generated templ files are committed; CI fails if they are stale.
check-generated: generate
	@if [ -n "$$(git status --porcelain -- '*_templ.go')" ]; then \
		git status --short -- '*_templ.go'; echo "templ files are stale: run make generate and commit"; exit 1; fi

# The release into DIST: a static binary per platform (docs/release.md),
# an SBOM of each (CycloneDX), the deployment files of docs/deploy (the
# Containerfile builds from the repository, so it stays there), and
# SHA256SUMS of them all. One binary alone: make dist/idenplane-linux-amd64.
DIST ?= dist
PLATFORMS := linux-amd64 linux-arm64 linux-armv7 darwin-arm64 windows-amd64
DEPLOY := idenplane.service compose.yaml Caddyfile nginx.conf
exe = $(if $(filter windows-%,$(1)),.exe)
release:
	rm -rf $(DIST)
	$(MAKE) --no-print-directory $(foreach p,$(PLATFORMS),$(DIST)/idenplane-$(p)$(call exe,$(p)) $(DIST)/idenplane-$(p).cdx.json)
	cp $(addprefix docs/deploy/,$(DEPLOY)) $(DIST)/
	cd $(DIST) && sha256sum -- * > SHA256SUMS

# A platform's GOOS and GOARCH from its name (armv7 is GOARCH=arm with
# GOARM=7; GOARM is read by no other GOARCH).
goenv = GOOS=$(word 1,$(subst -, ,$(basename $(1)))) GOARCH=$(patsubst armv7,arm,$(word 2,$(subst -, ,$(basename $(1))))) GOARM=7

# The SBOM tool is built for this machine once (go tool would build it for
# the target's GOOS), then reads the module for each target.
CYCLONEDX = $(shell go tool -n cyclonedx-gomod)
$(DIST)/idenplane-%: FORCE
	@mkdir -p $(@D)
	$(if $(filter %.cdx.json,$*),\
		$(call goenv,$(*:.cdx.json=)) $(CYCLONEDX) app -json -licenses -output $@ .,\
		$(call goenv,$*) go build -trimpath -ldflags '$(LDFLAGS)' -o $@ .)

FORCE:
