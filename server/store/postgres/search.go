package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
)

// searchMigration adds the search index (store.Searcher): search_docs
// holds the indexed text of each done visible message by (sid, sequence),
// with its tsvector ('simple': words lower-cased, no stemming, as SQLite's
// unicode61) under a GIN index. A session's rows are dropped with it. The
// index is written at each insert (fastupdate off): with the pending list
// every search scanned the rows inserted since the last vacuum, tens of
// milliseconds after 100,000 commits.
const searchMigration = `CREATE TABLE search_docs (
		id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		sid      bigint NOT NULL,
		sequence bigint NOT NULL,
		body     text NOT NULL,
		tsv      tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED
	);
	CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv) WITH (fastupdate = off);
	CREATE INDEX search_docs_by_sid ON search_docs (sid, sequence);`

// closingIDs are the ids of the messages a batch may close (done and
// visible in it), once each.
func closingIDs(msgs []synccore.Message) []string {
	var out []string
	for i := range msgs {
		if store.Indexed(&msgs[i]) && msgs[i].Role == synccore.RoleAgent && !slices.Contains(out, msgs[i].MessageID) {
			out = append(out, msgs[i].MessageID)
		}
	}
	return out
}

// storedTextsSQL reads the stored parts of a message not done yet.
const storedTextsSQL = `SELECT p.sequence, p.body FROM parts p
	JOIN messages m ON m.sid = p.sid AND m.sequence = p.msg_sequence
	JOIN sessions s ON s.sid = m.sid
	WHERE s.session_id = $1 AND m.message_id = $2 AND m.state <> 'done'`

func scanStoredTexts(results pgx.BatchResults) (map[int64]synccore.Part, error) {
	rows, err := results.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]synccore.Part{}
	for rows.Next() {
		var seq int64
		var body []byte
		if err := rows.Scan(&seq, &body); err != nil {
			return nil, err
		}
		p, err := wire.DecodePart(body)
		if err != nil {
			return nil, fmt.Errorf("postgres store: decode part body: %w", err)
		}
		out[seq] = synccore.Part{Sequence: seq, Type: p.Type, Text: p.Text}
	}
	return out, rows.Err()
}

// queueIndex queues the search row of a message becoming done, in the
// commit's transaction.
func queueIndex(batch *pgx.Batch, sid, seq int64, parts map[int64]synccore.Part) {
	list := make([]synccore.Part, 0, len(parts))
	for _, p := range parts {
		list = append(list, p)
	}
	slices.SortFunc(list, func(a, b synccore.Part) int { return int(a.Sequence - b.Sequence) })
	text := store.SearchText(list)
	if strings.TrimSpace(text) == "" {
		return
	}
	batch.Queue(`INSERT INTO search_docs (sid, sequence, body) VALUES ($1, $2, $3)`, sid, seq, text)
}

// backfillSearch indexes the done visible messages a database held before
// the search migration, in its transaction.
func backfillSearch(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT m.sid, m.sequence, p.sequence, p.body FROM messages m
		JOIN parts p ON p.sid = m.sid AND p.msg_sequence = m.sequence
		WHERE m.visibility = 'visible' AND (m.role = 'user' OR m.state = 'done')
		ORDER BY m.sid, m.sequence, p.sequence`)
	if err != nil {
		return err
	}
	type doc struct {
		sid, seq int64
		parts    map[int64]synccore.Part
	}
	var docs []doc
	for rows.Next() {
		var sid, seq, pseq int64
		var body []byte
		if err := rows.Scan(&sid, &seq, &pseq, &body); err != nil {
			rows.Close()
			return err
		}
		if n := len(docs); n == 0 || docs[n-1].sid != sid || docs[n-1].seq != seq {
			docs = append(docs, doc{sid: sid, seq: seq, parts: map[int64]synccore.Part{}})
		}
		p, err := wire.DecodePart(body)
		if err != nil {
			rows.Close()
			return err
		}
		docs[len(docs)-1].parts[pseq] = p
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var batch pgx.Batch
	for _, d := range docs {
		queueIndex(&batch, d.sid, d.seq, d.parts)
	}
	if batch.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, &batch).Close()
}

// tsQuery is the tsquery text of terms (letters and digits only, so no
// word is an operator): all required, the last one a prefix too.
func tsQuery(terms []string) string {
	return strings.Join(terms, " & ") + ":*"
}

// A search takes one of two plans, by how many rows match (probeSQL,
// counting up to searchProbe of them through the GIN index): a common
// query walks the ids backwards (newest first) and stops at the page, a
// few rows in; a rare one reads its few matches through the GIN index
// (the CTE keeps the planner from walking every id for them, which it
// otherwise does: 560 ms for a word no message of 100,000 has).
const searchProbe = 200

var probeSQL = fmt.Sprintf(`SELECT count(*) FROM (SELECT 1 FROM search_docs
	WHERE tsv @@ to_tsquery('simple', $1) AND id < $2 LIMIT %d) x`, searchProbe)

// readableBy3: the session s is $3's, or $3 is one of its members.
const readableBy3 = `(s.owner = $3 OR EXISTS (SELECT 1 FROM session_members sm WHERE sm.session_id = s.session_id AND sm.principal = $3))`

const searchColumns = `d.id, s.session_id, d.sequence, m.message_id, m.role, m.created_at, d.body, s.title`

const searchCommonSQL = `SELECT ` + searchColumns + `
	FROM search_docs d
	JOIN sessions s ON s.sid = d.sid
	JOIN messages m ON m.sid = d.sid AND m.sequence = d.sequence
	WHERE d.tsv @@ to_tsquery('simple', $1) AND d.id < $2 AND NOT s.deleted AND ` + readableBy3 + `
	ORDER BY d.id DESC LIMIT $4`

const searchRareSQL = `WITH d AS MATERIALIZED (
		SELECT id, sid, sequence, body FROM search_docs WHERE tsv @@ to_tsquery('simple', $1) AND id < $2)
	SELECT ` + searchColumns + `
	FROM d
	JOIN sessions s ON s.sid = d.sid
	JOIN messages m ON m.sid = d.sid AND m.sequence = d.sequence
	WHERE NOT s.deleted AND ` + readableBy3 + `
	ORDER BY d.id DESC LIMIT $4`

// Search finds the messages matching q.Text of the sessions q.Owner
// owns or is a member of (store.Searcher).
func (s *Store) Search(ctx context.Context, q store.SearchQuery) (store.SearchPage, error) {
	terms, err := store.SearchTerms(q.Text)
	if err != nil {
		return store.SearchPage{}, err
	}
	limit := store.SearchLimit(q.Limit)
	cursor := q.Cursor
	if cursor <= 0 {
		cursor = math.MaxInt64
	}
	page := store.SearchPage{Items: []store.SearchHit{}}
	err = s.read(ctx, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, probeSQL, tsQuery(terms), cursor).Scan(&n); err != nil {
			return err
		}
		query := searchRareSQL
		if n >= searchProbe {
			query = searchCommonSQL
		}
		rows, err := tx.Query(ctx, query, tsQuery(terms), cursor, q.Owner, limit+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h store.SearchHit
			var role string
			if err := rows.Scan(&h.Key, &h.SessionID, &h.Sequence, &h.MessageID, &role, &h.CreatedAt, &h.Snippet, &h.Title); err != nil {
				return err
			}
			h.Role = synccore.Role(role)
			h.Snippet = store.Snippet(h.Snippet, terms)
			page.Items = append(page.Items, h)
		}
		return rows.Err()
	})
	if err != nil {
		return store.SearchPage{}, err
	}
	page.Cut(limit)
	return page, nil
}

// Window reads one page around or after a sequence, or as Messages does
// (store.Windower), from one snapshot.
func (s *Store) Window(ctx context.Context, sessionID string, q store.PageQuery) (store.WindowPage, error) {
	if err := store.CheckWindow(q); err != nil {
		return store.WindowPage{}, err
	}
	var page store.WindowPage
	err := s.read(ctx, func(tx pgx.Tx) error {
		sess, segs, err := path(ctx, tx, sessionID, false)
		if err != nil {
			return err
		}
		vis := `visibility = 'visible' AND `
		if q.IncludeInternal {
			vis = ``
		}
		r := store.SegmentReader{Segs: segs, Rows: func(sid, from, to int64, desc bool, n int) ([]synccore.Message, error) {
			order := `ASC`
			if desc {
				order = `DESC`
			}
			return queryMessages(ctx, tx, sessionID, 0, `SELECT `+messageColumns+` FROM messages WHERE sid = $1 AND `+vis+
				`sequence BETWEEN $2 AND $3 ORDER BY sequence `+order+` LIMIT $4`, sid, from, to, n)
		}}
		if page, err = store.ReadWindow(r, q, sess.head, sess.head); err != nil {
			return err
		}
		return store.Runs(segs, page.Items, func(sid int64, run []synccore.Message) error {
			return loadParts(ctx, tx, sid, run)
		})
	})
	if err != nil {
		return store.WindowPage{}, err
	}
	return page, nil
}
