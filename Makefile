# termhost — see README.md. `make test` is the one command that runs every test.
GO      ?= go
export PATH := $(PATH):/usr/local/go/bin
FUZZTIME ?= 10s

.PHONY: all build assets generate deps test test-go test-js fuzz check-generated bench clean

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
	@git diff --exit-code --stat -- static/dist web || \
	  (echo "generated files are stale: run 'npm run build && go generate ./...' and commit" >&2; exit 1)

test-go:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...

test-js:
	npm test

# Short fuzz runs of every fuzz target (longer: make fuzz FUZZTIME=10m).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

test: deps check-generated test-go test-js fuzz

bench:
	$(GO) run ./cmd/termhost bench

clean:
	rm -f termhost
