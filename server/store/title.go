package store

import (
	"context"
	"strings"
	"unicode"

	"github.com/agentsync/agentsync/synccore"
)

// MaxTitleRunes bounds a session title, set or derived.
const MaxTitleRunes = 120

// derivedTitleRunes is where a title taken from a message is cut: a
// sidebar line, not the whole prompt.
const derivedTitleRunes = 60

// TitleFrom is the title a session gets from its first visible user
// message: the text of its text parts, whitespace collapsed, cut at a word
// boundary near derivedTitleRunes runes with "…". "" when there is no text.
func TitleFrom(m synccore.Message) string {
	var words []string
	for _, p := range m.Parts {
		if p.Type == synccore.PartText {
			words = append(words, strings.FieldsFunc(p.Text, unicode.IsSpace)...)
		}
	}
	title := strings.Join(words, " ")
	runes := []rune(title)
	if len(runes) <= derivedTitleRunes {
		return title
	}
	cut := string(runes[:derivedTitleRunes])
	if i := strings.LastIndexByte(cut, ' '); i > derivedTitleRunes/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " .,;:") + "…"
}

// titleFromFirstUserMessage gives an untitled session the title of the first
// visible user message in msgs, inside the commit's transaction (a title a
// user or a model set is never replaced).
func titleFromFirstUserMessage(c *conn, sid int64, msgs []synccore.Message) error {
	for _, m := range msgs {
		if m.Role != synccore.RoleUser || m.Visibility == synccore.VisibilityInternal {
			continue
		}
		if title := TitleFrom(m); title != "" {
			return c.exec(`UPDATE sessions SET title = ? WHERE sid = ? AND title = ''`, title, sid)
		}
	}
	return nil
}

// RenameSession sets a session's title: whitespace is trimmed, an empty or
// longer title than MaxTitleRunes is CodeBadRequest. It is not activity:
// updated_at (the sidebar's order) does not move. CodeNotFound if the
// session does not exist.
func (s *Store) RenameSession(ctx context.Context, id, title string) (Session, error) {
	title = strings.TrimSpace(title)
	switch n := len([]rune(title)); {
	case n == 0:
		return Session{}, synccore.Errorf(synccore.CodeBadRequest, "title is empty")
	case n > MaxTitleRunes:
		return Session{}, synccore.Errorf(synccore.CodeBadRequest, "title has %d characters, at most %d", n, MaxTitleRunes)
	}
	err := s.write(ctx, func(c *conn) error {
		if err := c.exec(`UPDATE sessions SET title = ? WHERE session_id = ?`, title, id); err != nil {
			return err
		}
		if c.db.Changes() == 0 {
			return errNoSession(id)
		}
		return nil
	})
	if err != nil {
		return Session{}, err
	}
	return s.Session(ctx, id)
}

// DeleteSession removes a session with all its messages, parts and
// summaries in one transaction. CodeNotFound if it does not exist.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	return s.write(ctx, func(c *conn) error {
		row, err := lookupSession(c, id)
		if err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM summaries WHERE sid = ?`,
			`DELETE FROM parts WHERE sid = ?`,
			`DELETE FROM messages WHERE sid = ?`,
			`DELETE FROM sessions WHERE sid = ?`,
		} {
			if err := c.exec(q, row.sid); err != nil {
				return err
			}
		}
		return nil
	})
}
