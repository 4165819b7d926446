module github.com/agentsync/agentsync

go 1.26.0

toolchain go1.26.8

require (
	github.com/gorilla/websocket v1.5.3
	github.com/ncruces/go-sqlite3 v0.37.0
	github.com/tetratelabs/wazero v1.12.0
	github.com/vmihailenco/msgpack/v5 v5.4.1
	golang.org/x/sys v0.49.0
)

require (
	github.com/ncruces/go-sqlite3-wasm/v6 v6.5.35401 // indirect
	github.com/ncruces/julianday v1.0.0 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
)
