package cache

import "github.com/ncruces/go-sqlite3"

type (
	sqliteConn = sqlite3.Conn
	sqliteStmt = sqlite3.Stmt
)
