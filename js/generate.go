package agentsyncjs

// errcodes.js and errcodes.d.ts are generated from wire.ErrorCodes, the
// protocol's one error table.
//go:generate go run ../tools/errcodes -dir .
