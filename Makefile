# agentsync — the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
ADDR ?= 127.0.0.1:8080
DB ?= data/dev.db
SPEED ?= 15ms
GO ?= go
WASM := wasm/module/agentsync.wasm

.PHONY: run test test-go test-js wasm wasm-check bench fuzz vet clean vendor-web vendor-web-check

## run: the reference server with its live demo page on $(ADDR), SQLite file $(DB)
run:
	$(GO) run ./server/cmd/syncserver -addr $(ADDR) -db $(DB) -speed $(SPEED)

## wasm: rebuild the WebAssembly module (committed, embedded by wasm/module)
wasm:
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w' -o $(WASM) ./wasm

## test: every test of the repository (Go natively and under wazero, Node, headless Chromium)
test: vet test-go test-js

vet:
	$(GO) vet ./... ./testdata ./testdata/gen

test-go:
	$(GO) test -count=1 -timeout 20m ./... ./testdata ./testdata/gen

test-js: js/node_modules vendor-web-check
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

## bench: every benchmark, one table with the baseline each is compared against
bench:
	$(GO) run ./tools/benchtable

## fuzz: a longer fuzzing session of the core's decoders (make test runs the corpus only)
fuzz:
	$(GO) test ./synccore -run '^$$' -fuzz FuzzDecodeFrames -fuzztime 60s
	$(GO) test ./synccore -run '^$$' -fuzz FuzzHandleBytes -fuzztime 60s
	$(GO) test ./synccore -run '^$$' -fuzz FuzzCodecMatchesLibrary -fuzztime 60s

clean:
	rm -rf data js/node_modules $(VENDOR_SRC)/node_modules
