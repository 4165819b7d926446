package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are applied in order, each in its own transaction; the number
// of applied ones is kept in schema_version. Never edit a shipped migration:
// append a new one.
//
// The database itself enforces the rules a bug in a node (or a node that
// lost its session) must not break, beside the checks the code makes first
// with typed errors:
//   - gapless sequences: a message is inserted only as its session's
//     head + 1, checked by a trigger that holds the session's row lock and
//     advances head_sequence itself (the code never writes it);
//   - increasing revisions: an update of a message must raise its revision
//     by exactly one, must not touch a done message, and never changes its
//     sequence, id, role or visibility (trigger);
//   - a part keeps its id and sequence (trigger), ids and sequences are
//     unique in a message (keys);
//   - fencing: a message is written only by a transaction at the
//     session's current lease epoch (trigger, check_fence), so a node
//     whose lease was taken cannot write whatever its code believes.
//
// Violations raise check_violation (SQLSTATE 23514), which the store
// reports as CodeConflict.
var migrations = []string{
	// 1: sessions, messages, parts, summaries and the rules' triggers.
	`CREATE TABLE sessions (
		sid           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		session_id    text NOT NULL UNIQUE,
		model         text NOT NULL,
		approval_mode text NOT NULL,
		created_at    bigint NOT NULL,
		updated_at    bigint NOT NULL,
		head_sequence bigint NOT NULL DEFAULT 0 CHECK (head_sequence >= 0),
		visible_count bigint NOT NULL DEFAULT 0 CHECK (visible_count >= 0),
		title         text NOT NULL DEFAULT '',
		owner         text NOT NULL DEFAULT '',
		-- the lease (store.Leaser): holder, expiry by the database's clock,
		-- and the epoch every acquisition bumps (0: never leased)
		lease_node    text NOT NULL DEFAULT '',
		lease_epoch   bigint NOT NULL DEFAULT 0 CHECK (lease_epoch >= 0),
		lease_expires timestamptz NOT NULL DEFAULT '-infinity'
	);
	CREATE INDEX sessions_by_updated ON sessions (updated_at DESC, sid DESC);
	CREATE INDEX sessions_by_owner ON sessions (owner, updated_at DESC, sid DESC);

	CREATE TABLE messages (
		sid        bigint NOT NULL REFERENCES sessions (sid),
		sequence   bigint NOT NULL CHECK (sequence >= 1),
		message_id text NOT NULL,
		revision   bigint NOT NULL CHECK (revision >= 1),
		role       text NOT NULL CHECK (role IN ('user', 'agent')),
		state      text NOT NULL,
		turn_id    text NOT NULL,
		visibility text NOT NULL CHECK (visibility IN ('visible', 'internal')),
		created_at bigint NOT NULL,
		part_count bigint NOT NULL CHECK (part_count >= 0),
		PRIMARY KEY (sid, sequence),
		UNIQUE (sid, message_id)
	);
	CREATE INDEX messages_streaming ON messages (sid, sequence) WHERE state = 'streaming';

	CREATE TABLE parts (
		sid          bigint NOT NULL,
		msg_sequence bigint NOT NULL,
		sequence     bigint NOT NULL CHECK (sequence >= 1),
		part_id      text NOT NULL,
		body         bytea NOT NULL,
		PRIMARY KEY (sid, msg_sequence, sequence),
		UNIQUE (sid, msg_sequence, part_id),
		FOREIGN KEY (sid, msg_sequence) REFERENCES messages (sid, sequence)
	);

	CREATE TABLE summaries (
		sid           bigint NOT NULL REFERENCES sessions (sid),
		to_sequence   bigint NOT NULL,
		from_sequence bigint NOT NULL,
		text          text NOT NULL,
		model         text NOT NULL,
		created_at    bigint NOT NULL,
		PRIMARY KEY (sid, to_sequence)
	);

	-- The epoch a transaction writes under is its setting
	-- agentsync.lease_epoch (set by the store with set_config(..., true)
	-- when it locks the session; unset means 0, an unleased write). A
	-- message is written only at the session's current epoch.
	CREATE FUNCTION check_fence(sid bigint, epoch bigint) RETURNS void LANGUAGE plpgsql AS $$
	DECLARE
		writer bigint := coalesce(nullif(current_setting('agentsync.lease_epoch', true), ''), '0')::bigint;
	BEGIN
		IF writer <> epoch THEN
			RAISE EXCEPTION 'a write at lease epoch % to session % at epoch %: fenced', writer, sid, epoch
				USING ERRCODE = 'check_violation';
		END IF;
	END $$;

	CREATE FUNCTION messages_insert_gapless() RETURNS trigger LANGUAGE plpgsql AS $$
	DECLARE
		head bigint;
		epoch bigint;
	BEGIN
		SELECT head_sequence, lease_epoch INTO head, epoch FROM sessions WHERE sid = NEW.sid FOR UPDATE;
		PERFORM check_fence(NEW.sid, epoch);
		IF NEW.sequence <> head + 1 THEN
			RAISE EXCEPTION 'message % has sequence %, the session''s next is %', NEW.message_id, NEW.sequence, head + 1
				USING ERRCODE = 'check_violation';
		END IF;
		IF NEW.revision <> 1 THEN
			RAISE EXCEPTION 'new message % has revision %, want 1', NEW.message_id, NEW.revision
				USING ERRCODE = 'check_violation';
		END IF;
		UPDATE sessions SET head_sequence = NEW.sequence,
			visible_count = visible_count + CASE WHEN NEW.visibility = 'visible' THEN 1 ELSE 0 END
			WHERE sid = NEW.sid;
		RETURN NEW;
	END $$;
	CREATE TRIGGER messages_insert_gapless BEFORE INSERT ON messages
		FOR EACH ROW EXECUTE FUNCTION messages_insert_gapless();

	CREATE FUNCTION messages_update_revision() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM check_fence(NEW.sid, (SELECT lease_epoch FROM sessions WHERE sid = NEW.sid FOR UPDATE));
		IF OLD.role = 'user' OR OLD.state = 'done' THEN
			RAISE EXCEPTION 'message % is done and can never change', OLD.message_id
				USING ERRCODE = 'check_violation';
		END IF;
		IF NEW.revision <> OLD.revision + 1 THEN
			RAISE EXCEPTION 'message %: revision % does not follow stored revision %', OLD.message_id, NEW.revision, OLD.revision
				USING ERRCODE = 'check_violation';
		END IF;
		IF (NEW.sid, NEW.sequence, NEW.message_id, NEW.role, NEW.visibility, NEW.created_at)
			IS DISTINCT FROM (OLD.sid, OLD.sequence, OLD.message_id, OLD.role, OLD.visibility, OLD.created_at) THEN
			RAISE EXCEPTION 'message % changed its sequence, id, role, visibility or creation time', OLD.message_id
				USING ERRCODE = 'check_violation';
		END IF;
		RETURN NEW;
	END $$;
	CREATE TRIGGER messages_update_revision BEFORE UPDATE ON messages
		FOR EACH ROW EXECUTE FUNCTION messages_update_revision();

	CREATE FUNCTION parts_update_keep() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF (NEW.sid, NEW.msg_sequence, NEW.sequence, NEW.part_id)
			IS DISTINCT FROM (OLD.sid, OLD.msg_sequence, OLD.sequence, OLD.part_id) THEN
			RAISE EXCEPTION 'part % changed its id or sequence', OLD.part_id
				USING ERRCODE = 'check_violation';
		END IF;
		RETURN NEW;
	END $$;
	CREATE TRIGGER parts_update_keep BEFORE UPDATE ON parts
		FOR EACH ROW EXECUTE FUNCTION parts_update_keep();`,

	// 2: the conversation tree (store.Forker). A fork names its parent's
	// sid and the sequence it was forked before: its messages below that
	// are the parent path's rows, read by reference; its head starts at
	// fork_sequence - 1, so the insert trigger numbers its own messages
	// after the prefix. root_sid is the conversation's root (0 for a
	// root itself). A deleted session that forks still reference is kept as a
	// tombstone (deleted) until its last fork goes.
	`ALTER TABLE sessions ADD COLUMN parent_sid bigint NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN fork_sequence bigint NOT NULL DEFAULT 0 CHECK (fork_sequence >= 0);
	ALTER TABLE sessions ADD COLUMN root_sid bigint NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN deleted boolean NOT NULL DEFAULT false;
	CREATE INDEX sessions_forks ON sessions (parent_sid, fork_sequence) WHERE parent_sid <> 0;
	CREATE INDEX sessions_by_root ON sessions (root_sid, fork_sequence) WHERE parent_sid <> 0;`,

	// 3: who else may use a session (store.Access): share links, found by
	// the SHA-256 of their token (never the token), and members with a
	// role. Keyed by the session's text id; DeleteSession removes them.
	`CREATE TABLE session_shares (
		share_id      text PRIMARY KEY,
		session_id    text NOT NULL,
		token_hash    bytea NOT NULL UNIQUE,
		mode          text NOT NULL,
		include_forks boolean NOT NULL DEFAULT false,
		expires_at    bigint NOT NULL DEFAULT 0,
		created_at    bigint NOT NULL,
		created_by    text NOT NULL DEFAULT ''
	);
	CREATE INDEX session_shares_by_session ON session_shares (session_id, created_at);
	CREATE TABLE session_members (
		session_id text NOT NULL,
		principal  text NOT NULL,
		role       text NOT NULL,
		created_at bigint NOT NULL,
		PRIMARY KEY (session_id, principal)
	);`,
	// 4: search (search.go).
	searchMigration,
}

// migrationLock is the advisory lock key that serialises migrations of
// nodes starting at the same time ("agentsync" in ASCII, truncated).
const migrationLock = 0x6167656e7473

// migrate brings the schema up to date, one migration per transaction.
// Nodes starting together take turns on an advisory lock.
func migrate(ctx context.Context, conn *pgx.Conn) error {
	for {
		applied, err := migrateOne(ctx, conn)
		if err != nil || !applied {
			return err
		}
	}
}

func migrateOne(ctx context.Context, conn *pgx.Conn) (applied bool, err error) {
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
		// Under the lock: CREATE ... IF NOT EXISTS itself races between
		// sessions (a duplicate key on the catalog).
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)`); err != nil {
			return err
		}
		var version int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&version); err != nil {
			return err
		}
		switch {
		case version > len(migrations):
			return fmt.Errorf("database schema version %d is newer than this binary (%d)", version, len(migrations))
		case version == len(migrations):
			return nil
		}
		if _, err := tx.Exec(ctx, migrations[version]); err != nil {
			return fmt.Errorf("migration %d: %w", version+1, err)
		}
		if migrations[version] == searchMigration {
			if err := backfillSearch(ctx, tx); err != nil {
				return fmt.Errorf("migration %d: %w", version+1, err)
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM schema_version`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, version+1); err != nil {
			return err
		}
		applied = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("postgres store: migrate: %w", err)
	}
	return applied, nil
}
