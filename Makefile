# agentsync — the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
ADDR ?= 127.0.0.1:8080
DB ?= data/dev.db
SPEED ?= 15ms
# MODEL: one or more PROVIDER:MODEL (openai:gpt-4o-mini, anthropic:claude-sonnet-4-5); empty = the scripted model
MODEL ?=
# ORIGINS: comma list of other browser origins allowed, e.g. http://localhost:5173
ORIGINS ?=
GO ?= go
WASM := wasm/module/agentsync.wasm
# The Go that builds the wasm module: its bytes embed the Go version, so
# `make wasm` and bindings' freshness test both build with go.mod's
# toolchain line (the go command fetches it if the local Go is another).
TOOLCHAIN := $(shell awk '$$1 == "toolchain" {print $$2}' go.mod)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
TOOLS := $(CURDIR)/.tools
# Packages that start goroutines (the server, the Go host, the examples,
# the terminal client)
# run under the race detector; the pure ones (the core, the traces, the
# tools) run without it, so every test runs once.
RACE_PKGS := ./server/... ./bindings/... ./examples/... ./cmd/...
PLAIN_PKGS = $$($(GO) list ./... ./testdata ./testdata/gen | grep -v -e /server -e /bindings -e /examples -e /cmd/)

.PHONY: run test test-go test-js wasm bench fuzz vet lint clean vendor-web vendor-web-check

## run: the reference server with its live demo page on $(ADDR), SQLite file $(DB);
## ORIGINS=http://localhost:5173 lets an app served from there use it
run:
	$(GO) run ./server/cmd/syncserver -addr $(ADDR) -db $(DB) -speed $(SPEED) -origins '$(ORIGINS)' $(foreach m,$(MODEL),-model $(m))

## wasm: rebuild the WebAssembly module (committed, embedded by wasm/module)
wasm:
	GOTOOLCHAIN=$(TOOLCHAIN) GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w' -o $(WASM) ./wasm

## test: every check and test of the repository (lint, Go natively with -race and under wazero, Node, headless Chromium)
test: vet lint test-go test-js

vet:
	$(GO) vet ./... ./testdata ./testdata/gen

## lint: the repository's rules (no tracked executable, no tracked file over 4 MB, one
## release version); every Go file gofmt'ed; go.mod is tidy; staticcheck (pinned) natively, and as the module is
## built (wasip1; without U1000, which takes //go:wasmexport functions for unused ones)
lint: $(TOOLS)/staticcheck
	$(GO) run ./tools/repocheck
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "not gofmt'ed:" $$unformatted; exit 1; fi
	$(GO) mod tidy -diff
	$(TOOLS)/staticcheck $$($(GO) list ./... ./testdata ./testdata/gen | grep -v '/wasm$$')
	GOOS=wasip1 GOARCH=wasm $(TOOLS)/staticcheck -checks inherit,-U1000 ./wasm ./synccore/...

$(TOOLS)/staticcheck: Makefile
	GOBIN=$(TOOLS) $(GO) install $(STATICCHECK)

test-go:
	$(GO) test -race -count=1 -timeout 20m $(RACE_PKGS)
	$(GO) test -count=1 -timeout 20m $(PLAIN_PKGS)

# test-js also packs js/ into the Vite + React app of examples/vite-react
# (js/test/vite-app.test.js) and the assistant-ui app of
# js/demo-test/assistant-ui-app (js/demo-test/assistant-ui.test.js), so
# those apps' packages are needed too.
AUI_APP := js/demo-test/assistant-ui-app
test-js: js/node_modules examples/vite-react/node_modules $(AUI_APP)/node_modules vendor-web-check
	cd js && npm test

## vendor-web: copy the demo page's pinned browser libraries (markdown, sanitizer, highlighter) into server/web/static/vendor
VENDOR_SRC := server/web/vendor-src
vendor-web: $(VENDOR_SRC)/node_modules
	cd $(VENDOR_SRC) && node vendor.mjs

# vendor-web-check: the committed vendor files are exactly what vendor-web writes
vendor-web-check: $(VENDOR_SRC)/node_modules
	cd $(VENDOR_SRC) && node vendor.mjs --check

$(VENDOR_SRC)/node_modules: $(VENDOR_SRC)/package-lock.json
	cd $(VENDOR_SRC) && npm ci --no-audit --no-fund
	touch $(VENDOR_SRC)/node_modules

js/node_modules: js/package.json
	cd js && npm ci --no-audit --no-fund
	touch js/node_modules

examples/vite-react/node_modules: examples/vite-react/package.json
	cd examples/vite-react && npm ci --no-audit --no-fund
	touch examples/vite-react/node_modules

$(AUI_APP)/node_modules: $(AUI_APP)/package.json
	cd $(AUI_APP) && npm ci --no-audit --no-fund
	touch $(AUI_APP)/node_modules

## bench: every benchmark, one table with the baseline each is compared against
bench:
	bash .ci/postgres.sh
	$(GO) run ./tools/benchtable

## fuzz: a longer fuzzing session of the core's decoders (make test runs the corpus only)
fuzz:
	$(GO) test ./synccore -run '^$$' -fuzz FuzzDecodeFrames -fuzztime 60s
	$(GO) test ./synccore -run '^$$' -fuzz FuzzHandleBytes -fuzztime 60s
	$(GO) test ./synccore -run '^$$' -fuzz FuzzCodecMatchesLibrary -fuzztime 60s

clean:
	rm -rf data js/node_modules .tools examples/vite-react/node_modules $(AUI_APP)/node_modules $(VENDOR_SRC)/node_modules
