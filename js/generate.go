package agentsyncjs

// errcodes.js and errcodes.d.ts are generated from wire.ErrorCodes, the
// protocol's one error table.
//go:generate go run ../tools/errcodes -dir .

// index.d.ts's HTTP API shapes (sessions, posts, actions, answers) are
// generated from package httpwire, between its BEGIN/END httpwire lines.
//go:generate go run ../tools/genwire -root ..
