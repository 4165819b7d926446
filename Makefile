# agentsync — the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
ADDR ?= 127.0.0.1:8080
DB ?= data/dev.db
SPEED ?= 15ms
# ORIGINS: comma list of other browser origins allowed, e.g. http://localhost:5173
ORIGINS ?=
GO ?= go
WASM := wasm/module/agentsync.wasm

.PHONY: run test test-go test-js wasm wasm-check bench fuzz vet clean

## run: the reference server with its live demo page on $(ADDR), SQLite file $(DB);
## ORIGINS=http://localhost:5173 lets an app served from there use it
run:
	$(GO) run ./server/cmd/syncserver -addr $(ADDR) -db $(DB) -speed $(SPEED) -origins '$(ORIGINS)'

## wasm: rebuild the WebAssembly module (committed, embedded by wasm/module)
wasm:
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w' -o $(WASM) ./wasm

## test: every test of the repository (Go natively and under wazero, Node, headless Chromium)
test: vet test-go test-js

vet:
	$(GO) vet ./... ./testdata ./testdata/gen

test-go:
	$(GO) test -count=1 -timeout 20m ./... ./testdata ./testdata/gen

# test-js also packs js/ into the Vite + React app of examples/vite-react
# (js/test/vite-app.test.js), so that app's packages are needed too.
test-js: js/node_modules examples/vite-react/node_modules
	cd js && npm test

js/node_modules: js/package.json
	cd js && npm ci --no-audit --no-fund
	touch js/node_modules

examples/vite-react/node_modules: examples/vite-react/package.json
	cd examples/vite-react && npm ci --no-audit --no-fund
	touch examples/vite-react/node_modules

## bench: every benchmark, one table with the baseline each is compared against
bench:
	$(GO) run ./tools/benchtable

## fuzz: a longer fuzzing session of the core's decoders (make test runs the corpus only)
fuzz:
	$(GO) test ./synccore -run '^$$' -fuzz FuzzDecodeFrames -fuzztime 60s
	$(GO) test ./synccore -run '^$$' -fuzz FuzzHandleBytes -fuzztime 60s
	$(GO) test ./synccore -run '^$$' -fuzz FuzzCodecMatchesLibrary -fuzztime 60s

clean:
	rm -rf data js/node_modules examples/vite-react/node_modules
