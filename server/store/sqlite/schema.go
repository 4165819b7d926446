package sqlite

import (
	"context"
	"fmt"
)

// migrations are applied in order, each in its own transaction; the number
// of applied ones is kept in schema_version. Never edit a shipped migration:
// append a new one.
//
// Keys are the session's integer rowid (sid) rather than its text id, so the
// message and part indexes stay small. Tables keyed by (sid, sequence) are
// WITHOUT ROWID: a page read is then one contiguous range of the b-tree.
// Visible-only pages scan that same range and skip internal messages (rare)
// rather than use an index on visibility, which would cost a second b-tree
// lookup per row (and was not chosen by the planner anyway).
var migrations = []string{
	// 1: sessions, messages, parts.
	`CREATE TABLE sessions (
		sid           INTEGER PRIMARY KEY,
		session_id    TEXT NOT NULL UNIQUE,
		model         TEXT NOT NULL,
		approval_mode TEXT NOT NULL,
		created_at    INTEGER NOT NULL,
		updated_at    INTEGER NOT NULL,
		head_sequence INTEGER NOT NULL DEFAULT 0,
		visible_count INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX sessions_by_created ON sessions (created_at);

	CREATE TABLE messages (
		sid        INTEGER NOT NULL REFERENCES sessions (sid),
		sequence   INTEGER NOT NULL,
		message_id TEXT NOT NULL,
		revision   INTEGER NOT NULL,
		role       TEXT NOT NULL,
		state      TEXT NOT NULL,
		turn_id    TEXT NOT NULL,
		visibility TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		part_count INTEGER NOT NULL,
		PRIMARY KEY (sid, sequence),
		UNIQUE (sid, message_id)
	) WITHOUT ROWID;
	CREATE INDEX messages_streaming ON messages (sid, sequence) WHERE state = 'streaming';

	CREATE TABLE parts (
		sid          INTEGER NOT NULL,
		msg_sequence INTEGER NOT NULL,
		sequence     INTEGER NOT NULL,
		part_id      TEXT NOT NULL,
		body         BLOB NOT NULL,
		PRIMARY KEY (sid, msg_sequence, sequence),
		UNIQUE (sid, msg_sequence, part_id),
		FOREIGN KEY (sid, msg_sequence) REFERENCES messages (sid, sequence)
	) WITHOUT ROWID;`,
	// 2: summaries, derived data of the composer policy: the text that
	// stands for messages from_sequence..to_sequence in a model's context.
	// Not messages: no sequence of their own, never in a page.
	`CREATE TABLE summaries (
		sid           INTEGER NOT NULL REFERENCES sessions (sid),
		to_sequence   INTEGER NOT NULL,
		from_sequence INTEGER NOT NULL,
		text          TEXT NOT NULL,
		model         TEXT NOT NULL,
		created_at    INTEGER NOT NULL,
		PRIMARY KEY (sid, to_sequence)
	) WITHOUT ROWID;`,

	// 3: a session's title (shown by clients instead of its id), and the
	// sidebar's order: most recently active first.
	`ALTER TABLE sessions ADD COLUMN title TEXT NOT NULL DEFAULT '';
	CREATE INDEX sessions_by_updated ON sessions (updated_at);`,

	// 4: a session's owner, the principal that created it (the API's
	// authorizer decides who that is). '' is the shared principal of a
	// server without per-user auth; sessions from before this migration
	// belong to it. A principal's sidebar is one range of the index.
	`ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
	CREATE INDEX sessions_by_owner ON sessions (owner, updated_at);`,

	// 5: a session's lease (store.Leaser): the node that holds it, until
	// when (Unix ms), and the epoch every acquisition bumps.
	`ALTER TABLE sessions ADD COLUMN lease_node TEXT NOT NULL DEFAULT '';
	ALTER TABLE sessions ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN lease_expires INTEGER NOT NULL DEFAULT 0;`,

	// 6: the conversation tree (store.Forker). A fork names its parent's
	// sid and the sequence it was forked before: its messages below that
	// are the parent path's rows, read by reference; its head starts at
	// fork_sequence - 1. root_sid is the conversation's root (0 for a root
	// itself). A deleted session that forks
	// still reference is kept as a tombstone (deleted = 1) until its last
	// fork goes.
	`ALTER TABLE sessions ADD COLUMN parent_sid INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN fork_sequence INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN root_sid INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
	CREATE INDEX sessions_forks ON sessions (parent_sid, fork_sequence) WHERE parent_sid <> 0;
	CREATE INDEX sessions_by_root ON sessions (root_sid, fork_sequence) WHERE parent_sid <> 0;`,

	// 7: who else may use a session (store.Access): share links, found by
	// the SHA-256 of their token (never the token), and members with a
	// role. Keyed by the session's text id; DeleteSession removes them.
	`CREATE TABLE session_shares (
		share_id      TEXT PRIMARY KEY,
		session_id    TEXT NOT NULL,
		token_hash    BLOB NOT NULL UNIQUE,
		mode          TEXT NOT NULL,
		include_forks INTEGER NOT NULL DEFAULT 0,
		expires_at    INTEGER NOT NULL DEFAULT 0,
		created_at    INTEGER NOT NULL,
		created_by    TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX session_shares_by_session ON session_shares (session_id, created_at);
	CREATE TABLE session_members (
		session_id TEXT NOT NULL,
		principal  TEXT NOT NULL,
		role       TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		PRIMARY KEY (session_id, principal)
	) WITHOUT ROWID;`,
	// 8: search (search.go).
	searchMigration,
}

// migrate brings the schema up to date. It is idempotent: a reopened store
// applies only the migrations it has not seen.
func migrate(ctx context.Context, c *conn) error {
	if err := c.db.Exec(`CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("store: create schema_version: %w", err)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		applied, err := migrateOne(c)
		if err != nil || !applied {
			return err
		}
	}
}

// migrateOne applies the next pending migration, if any, in one
// transaction that also records the new version.
func migrateOne(c *conn) (applied bool, err error) {
	if err := c.db.Exec(`BEGIN IMMEDIATE`); err != nil {
		return false, fmt.Errorf("store: begin migration: %w", err)
	}
	defer func() {
		if err != nil || !applied {
			c.db.Exec(`ROLLBACK`)
		}
	}()
	version, err := schemaVersion(c)
	if err != nil {
		return false, err
	}
	if version > len(migrations) {
		return false, fmt.Errorf("store: database schema version %d is newer than this binary (%d)", version, len(migrations))
	}
	if version == len(migrations) {
		return false, nil
	}
	if err := c.db.Exec(migrations[version]); err != nil {
		return false, fmt.Errorf("store: migration %d: %w", version+1, err)
	}
	if migrations[version] == searchMigration {
		if err := backfillSearch(c); err != nil {
			return false, fmt.Errorf("store: migration %d: %w", version+1, err)
		}
	}
	if err := c.db.Exec(`DELETE FROM schema_version`); err != nil {
		return false, fmt.Errorf("store: migration %d: %w", version+1, err)
	}
	if err := c.exec(`INSERT INTO schema_version (version) VALUES (?)`, version+1); err != nil {
		return false, err
	}
	if err := c.db.Exec(`COMMIT`); err != nil {
		return false, fmt.Errorf("store: commit migration %d: %w", version+1, err)
	}
	return true, nil
}

func schemaVersion(c *conn) (int, error) {
	st, err := c.query(`SELECT version FROM schema_version`)
	if err != nil {
		return 0, err
	}
	v := 0
	if st.Step() {
		v = st.ColumnInt(0)
	}
	return v, done(st)
}
