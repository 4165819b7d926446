package sqlite

import (
	"context"
	"math"
	"strings"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// searchMigration adds the search index (store.Searcher): search_docs
// holds the indexed text of each done visible message, by (sid, sequence),
// and search_fts is an FTS5 index over it (external content: the text is
// stored once). Triggers keep the two in step; a session's rows are
// dropped with it. unicode61 without diacritics removal matches as
// PostgreSQL's 'simple' configuration does.
//
// Ids count down (each new row takes the smallest id less one), so the
// newest hits come first in FTS5's forward order: reading a doclist
// backwards (ORDER BY rowid DESC) costs the whole doclist, 9 ms for a
// word of most of 100,000 messages against 0.2 ms forwards. The prefix
// indexes of 2 and 3 characters make a short last word (search as one
// types) one doclist rather than the merge of every word it begins.
const searchMigration = `CREATE TABLE search_docs (
		id       INTEGER PRIMARY KEY,
		sid      INTEGER NOT NULL,
		sequence INTEGER NOT NULL,
		text     TEXT NOT NULL
	);
	CREATE INDEX search_docs_by_sid ON search_docs (sid, sequence);
	CREATE VIRTUAL TABLE search_fts USING fts5(text, content='search_docs', content_rowid='id',
		tokenize='unicode61 remove_diacritics 0', prefix='2 3');
	CREATE TRIGGER search_docs_insert AFTER INSERT ON search_docs BEGIN
		INSERT INTO search_fts (rowid, text) VALUES (new.id, new.text);
	END;
	CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs BEGIN
		INSERT INTO search_fts (search_fts, rowid, text) VALUES ('delete', old.id, old.text);
	END;`

// indexMessage adds m to the search index if it is done and visible,
// inside the commit's transaction (its parts are written already).
func indexMessage(c *conn, sid int64, m *synccore.Message) error {
	if !store.Indexed(m) {
		return nil
	}
	one := []synccore.Message{{Sequence: m.Sequence}}
	if err := loadParts(c, sid, one); err != nil {
		return err
	}
	return insertDoc(c, sid, m.Sequence, one[0].Parts)
}

func insertDoc(c *conn, sid, seq int64, parts []synccore.Part) error {
	text := store.SearchText(parts)
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return c.exec(`INSERT INTO search_docs (id, sid, sequence, text)
		VALUES ((SELECT coalesce(min(id), 0) - 1 FROM search_docs), ?, ?, ?)`, sid, seq, text)
}

// backfillSearch indexes the done visible messages a database held before
// the search migration, in its transaction.
func backfillSearch(c *conn) error {
	st, err := c.query(`SELECT m.sid, m.sequence, p.body FROM messages m
		JOIN parts p ON p.sid = m.sid AND p.msg_sequence = m.sequence
		WHERE m.visibility = 'visible' AND (m.role = 'user' OR m.state = 'done')
		ORDER BY m.sid, m.sequence, p.sequence`)
	if err != nil {
		return err
	}
	type doc struct {
		sid, seq int64
		parts    []synccore.Part
	}
	var docs []doc
	for st.Step() {
		sid, seq := st.ColumnInt64(0), st.ColumnInt64(1)
		if n := len(docs); n == 0 || docs[n-1].sid != sid || docs[n-1].seq != seq {
			docs = append(docs, doc{sid: sid, seq: seq})
		}
		d := &docs[len(docs)-1]
		var p synccore.Part
		if err := c.codec.decode(st.ColumnRawBlob(2), &p); err != nil {
			done(st)
			return err
		}
		d.parts = append(d.parts, p)
	}
	if err := done(st); err != nil {
		return err
	}
	for _, d := range docs {
		if err := insertDoc(c, d.sid, d.seq, d.parts); err != nil {
			return err
		}
	}
	return nil
}

// ftsQuery is the FTS5 query of terms: each a quoted string (so no word
// is an operator), all required, the last one a prefix too.
func ftsQuery(terms []string) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(`"` + strings.ReplaceAll(t, `"`, `""`) + `"`)
		if i == len(terms)-1 {
			b.WriteByte('*')
		}
	}
	return b.String()
}

const searchSQL = `SELECT -d.id, s.session_id, d.sequence, m.message_id, m.role, m.created_at, d.text, s.title
	FROM search_fts
	JOIN search_docs d ON d.id = search_fts.rowid
	JOIN sessions s ON s.sid = d.sid
	JOIN messages m ON m.sid = d.sid AND m.sequence = d.sequence
	WHERE search_fts MATCH ? AND search_fts.rowid > ? AND s.deleted = 0
	  AND (s.owner = ?3 OR EXISTS (SELECT 1 FROM session_members sm WHERE sm.session_id = s.session_id AND sm.principal = ?3))
	ORDER BY search_fts.rowid LIMIT ?4`

// Search finds the messages matching q.Text of the sessions q.Owner
// owns or is a member of (store.Searcher).
func (s *Store) Search(ctx context.Context, q store.SearchQuery) (store.SearchPage, error) {
	terms, err := store.SearchTerms(q.Text)
	if err != nil {
		return store.SearchPage{}, err
	}
	limit := store.SearchLimit(q.Limit)
	// A hit's key is its id negated (ids count down): the page after
	// cursor holds the ids above -cursor.
	after := int64(math.MinInt64)
	if q.Cursor > 0 {
		after = -q.Cursor
	}
	page := store.SearchPage{Items: []store.SearchHit{}}
	err = s.read(ctx, func(c *conn) error {
		st, err := c.query(searchSQL, ftsQuery(terms), after, q.Owner, limit+1)
		if err != nil {
			return err
		}
		for st.Step() {
			page.Items = append(page.Items, store.SearchHit{
				Key:       st.ColumnInt64(0),
				SessionID: st.ColumnText(1),
				Sequence:  st.ColumnInt64(2),
				MessageID: st.ColumnText(3),
				Role:      synccore.Role(st.ColumnText(4)),
				CreatedAt: st.ColumnInt64(5),
				Snippet:   store.Snippet(st.ColumnText(6), terms),
				Title:     st.ColumnText(7),
			})
		}
		return done(st)
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
	err := s.read(ctx, func(c *conn) error {
		sess, segs, err := path(c, sessionID)
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
			st, err := c.query(`SELECT `+messageColumns+` FROM messages WHERE sid = ? AND `+vis+
				`sequence BETWEEN ? AND ? ORDER BY sequence `+order+` LIMIT ?`, sid, from, to, n)
			if err != nil {
				return nil, err
			}
			var out []synccore.Message
			for st.Step() {
				out = append(out, scanMessage(st, sessionID))
			}
			return out, done(st)
		}}
		if page, err = store.ReadWindow(r, q, sess.head, sess.head); err != nil {
			return err
		}
		return store.Runs(segs, page.Items, func(sid int64, run []synccore.Message) error {
			return loadParts(c, sid, run)
		})
	})
	if err != nil {
		return store.WindowPage{}, err
	}
	return page, nil
}
