# termhost — see README.md. `make test` is the one command that runs every test.
GO      ?= go
SHELL   := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
# Counted, not timed: a timed run that ends while the fuzzer minimizes a new
# input reports "context deadline exceeded" as a failure. 5000 inputs a
# target take about 30 s of make test in all (20000 took 100 s); every
# target's seed corpus also runs as a plain test in test-go.
FUZZTIME ?= 5000x

.PHONY: all build assets generate deps test check test-short lint test-go test-big test-js fuzz check-generated bench clean

all: build

build:
	$(GO) build -o termhost ./cmd/termhost

deps:
	./.ci/deps
	npm ci --no-audit --no-fund

# Rebuild the committed front-end bundle and templ views.
assets:
	npm run build
generate:
	$(GO) generate ./...

# Generated files must match their sources.
check-generated: assets generate
	@if [ -n "$$(git status --porcelain -- static/dist web)" ]; then \
	  git status --short -- static/dist web; \
	  echo "generated files are stale: run 'npm ci && npm run build && go generate ./...' and commit" >&2; exit 1; fi

# Let the tools hold the line: gofmt, vet, staticcheck (a pinned go tool),
# a tidy go.mod and commit subjects that fit in 72 characters.
lint:
	./.ci/commit-subjects
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$unformatted" ]; then \
	  echo "not gofmt-ed (run gofmt -w): $$unformatted" >&2; exit 1; fi
	$(GO) vet -tags e2e ./...
	$(GO) vet -tags lockrank ./internal/lockrank/
	$(GO) tool staticcheck -tags e2e ./...
	$(GO) mod tidy -diff

# The inner loop: lint and the unit tests with -short (testing.Short:
# smaller sizes), without the browser tests (build tag e2e) nor the volume
# tests (testenv.Volume), which make test runs (see internal/testenv).
# Without -race, measured: with it the tests took 19 min of wall time and
# 6.8 min of CPU (load 19-22 on 2 cores), without it 3 min and 2.7 min of
# CPU (load 6 to 4); make test-go runs them all under -race.
check: lint test-short
test-short:
	$(GO) test -short -count=1 -timeout 10m ./...

# Everything but the volume tests under the race detector, with the lock
# order checked (package lockrank) and the browser tests (e2e; see e2e/doc.go
# for what they need). These are the longest package: named first, they
# start first, and the others run beside them. The browser tests run one at
# a time: four at a time, with four packages at once (-p 4 -parallel 4),
# saved a minute alone but failed a dozen tests with two suites running at
# once (load 50-68), as did running test-big and fuzz beside test-go.
test-go:
	$(GO) test -race -tags 'lockrank e2e' -count=1 -timeout 40m ./e2e/ $$($(GO) list ./... | grep -v '/e2e$$')

# The volume tests (those that call testenv.Volume: 64 MiB to two
# subscribers, ten viewers and a stalled one on a flood, 128 sockets that
# never read their answers, 64 MiB through the browser...), once, at full
# size, without -race. They are found in the test files, like the fuzz
# targets.
test-big:
	@for dir in $$(git grep -l 'testenv\.Volume(' -- '*_test.go' | xargs -n1 dirname | sort -u); do \
	  run=$$(awk '/^func Test/ { name = $$2; sub(/\(.*/, "", name) } /testenv\.Volume\(/ { print name }' $$dir/*_test.go | sort -u | paste -sd'|'); \
	  echo "volume ./$$dir $$run"; \
	  $(GO) test -tags 'volume e2e' -count=1 -timeout 15m -run "^($$run)$$" ./$$dir || exit 1; \
	done

test-js:
	npm run check
	npm test

# Short fuzz runs of every fuzz target (longer: make fuzz FUZZTIME=10m).
# The targets are found in the test files: listing them with go test -list
# would build every package's tests once more.
fuzz:
	@for dir in $$(grep -l '^func Fuzz' $$(git ls-files '*_test.go') | xargs -n1 dirname | sort -u); do \
	  for f in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$dir/*_test.go); do \
	    echo "fuzz ./$$dir $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./$$dir || exit 1; \
	  done; \
	done

# The steps one after the other, but lint and test-js side by side: both
# only read the tree and neither has a test that waits on time, while
# each leaves a core mostly idle. (Test steps beside test-go made its
# waits run out when two suites ran at once; see test-go.)
# Each step says how long it took.
test: deps check-generated
	@$(call timed,-j2 -O lint test-js)
	@$(call timed,test-go)
	@$(call timed,test-big)
	@$(call timed,fuzz)

timed = TIMEFORMAT='make $(1): %0R s (CPU: %0U s user, %0S s system)'; time $(MAKE) --no-print-directory $(1)

bench:
	$(GO) run ./cmd/termhost bench

clean:
	rm -f termhost

# Refresh the pinned upstream AHP schemas and fixtures (ahp/upstream)
# from a checkout of that data, named explicitly; commit the result:
#   make refresh-upstream UPSTREAM_AHP=/path/to/ahp
PINNED_AHP   := ahp/upstream
.PHONY: refresh-upstream
refresh-upstream:
	@test -n "$(UPSTREAM_AHP)" && test -d "$(UPSTREAM_AHP)" || { echo "refresh-upstream: name the upstream data: make refresh-upstream UPSTREAM_AHP=/path/to/ahp" >&2; exit 1; }
	rm -rf $(PINNED_AHP)/schema $(PINNED_AHP)/schema-1.x $(PINNED_AHP)/fixtures
	mkdir -p $(PINNED_AHP)/schema $(PINNED_AHP)/schema-1.x $(PINNED_AHP)/fixtures/reducers $(PINNED_AHP)/fixtures/round-trips
	install -m 0644 $(UPSTREAM_AHP)/schema/*.json $(PINNED_AHP)/schema/
	install -m 0644 $(UPSTREAM_AHP)/schema-1.x/*.json $(UPSTREAM_AHP)/schema-1.x/README.md $(PINNED_AHP)/schema-1.x/
	install -m 0644 $(UPSTREAM_AHP)/fixtures/reducers/*.json $(PINNED_AHP)/fixtures/reducers/
	install -m 0644 $(UPSTREAM_AHP)/fixtures/round-trips/*.json $(PINNED_AHP)/fixtures/round-trips/
	@echo "refreshed $(PINNED_AHP) from $(UPSTREAM_AHP); update $(PINNED_AHP)/README.md if the upstream revision changed"
