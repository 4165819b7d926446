// Package agentsyncjs embeds the JavaScript host so that the reference
// server can serve it under /js/ (the module itself is served from
// wasm/module at /js/agentsync.wasm). Tests live in js/test and stay out of
// the glob.
package agentsyncjs

import "embed"

// Files holds the package's ES modules and TypeScript declarations.
//
//go:embed *.js *.d.ts
var Files embed.FS
