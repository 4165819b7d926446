package store

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agentsync/agentsync/synccore"
)

// The checks below are the contract's rules written once: every Store
// applies them in its transaction, so SQLite and PostgreSQL refuse the same
// batches with the same codes. (The PostgreSQL store also has the database
// enforce the sequence and revision rules.)

// Header is what a commit checks a stored message against.
type Header struct {
	Sequence   int64
	Revision   int64
	Role       synccore.Role
	State      synccore.MessageState
	Visibility synccore.Visibility
	CreatedAt  int64
	PartCount  int64
}

// Done reports whether the message can never change again.
func (h Header) Done() bool {
	return h.Role == synccore.RoleUser || h.State == synccore.MessageDone
}

// ValidateHeader checks what a message must satisfy on its own.
func ValidateHeader(sessionID string, m *synccore.Message) error {
	bad := func(format string, args ...any) error {
		return synccore.Errorf(synccore.CodeInvalidMessage, "message %q: "+format, append([]any{m.MessageID}, args...)...)
	}
	switch {
	case m.MessageID == "":
		return synccore.Errorf(synccore.CodeInvalidMessage, "message_id is empty")
	case m.SessionID != "" && m.SessionID != sessionID:
		return bad("belongs to session %q, not %q", m.SessionID, sessionID)
	case m.Sequence < 1:
		return bad("sequence %d is not positive", m.Sequence)
	case m.Visibility != synccore.VisibilityVisible && m.Visibility != synccore.VisibilityInternal:
		return bad("unknown visibility %q", m.Visibility)
	}
	switch m.Role {
	case synccore.RoleUser:
		if m.State != "" {
			return bad("a user message has no state, got %q", m.State)
		}
	case synccore.RoleAgent:
		if m.State != synccore.MessageStreaming && m.State != synccore.MessageDone {
			return bad("unknown agent state %q", m.State)
		}
	default:
		return bad("unknown role %q", m.Role)
	}
	return nil
}

// CheckNew enforces the rules for a message the session does not hold yet.
func CheckNew(m *synccore.Message, head int64) error {
	if m.Sequence != head+1 {
		return synccore.Errorf(synccore.CodeConflict,
			"new message %q has sequence %d, the session's next is %d", m.MessageID, m.Sequence, head+1)
	}
	if m.Revision != 1 {
		return synccore.Errorf(synccore.CodeInvalidMessage,
			"new message %q has revision %d, want 1", m.MessageID, m.Revision)
	}
	return nil
}

// CheckUpdate enforces the rules for a new revision of a stored message.
func (h Header) CheckUpdate(m *synccore.Message) error {
	switch {
	case h.Done():
		return synccore.Errorf(synccore.CodeDoneIsFinal, "message %q is done and can never change", m.MessageID)
	case m.Sequence != h.Sequence:
		return synccore.Errorf(synccore.CodeSequenceChanged,
			"message %q has sequence %d, stored %d", m.MessageID, m.Sequence, h.Sequence)
	case m.Role != h.Role:
		return synccore.Errorf(synccore.CodeInvalidMessage, "message %q changed role from %q to %q", m.MessageID, h.Role, m.Role)
	case m.Visibility != h.Visibility:
		return synccore.Errorf(synccore.CodeInvalidMessage,
			"message %q changed visibility from %q to %q", m.MessageID, h.Visibility, m.Visibility)
	case m.Revision <= h.Revision:
		return synccore.Errorf(synccore.CodeRevisionBackward,
			"message %q: revision %d is not newer than stored revision %d", m.MessageID, m.Revision, h.Revision)
	case m.Revision != h.Revision+1:
		return synccore.Errorf(synccore.CodeConflict,
			"message %q: revision %d skips past stored revision %d", m.MessageID, m.Revision, h.Revision)
	}
	return nil
}

var knownPartTypes = []synccore.PartType{
	synccore.PartText, synccore.PartReasoning, synccore.PartContext, synccore.PartFile, synccore.PartData,
	synccore.PartTool, synccore.PartInteraction, synccore.PartAction, synccore.PartError,
}

// CheckParts validates the given parts of m against the stored ones and
// returns the message's part count afterwards. count is the stored part
// count (0 for a new message); storedSeq looks up the sequence of a stored
// part by id (0: none) and is not called for a new message. Part ids are
// unique in a message and keep their sequence forever; new parts must
// continue the message's gapless 1-based sequence (count+1, count+2...).
func CheckParts(m *synccore.Message, count int64, exists bool, storedSeq func(partID string) (int64, error)) (int64, error) {
	var newSeqs []int64
	for i := range m.Parts {
		p := &m.Parts[i]
		switch {
		case p.PartID == "":
			return 0, synccore.Errorf(synccore.CodeInvalidPart, "message %q: part %d has no part_id", m.MessageID, i)
		case p.Sequence < 1:
			return 0, synccore.Errorf(synccore.CodeInvalidPart, "message %q: part %q has sequence %d", m.MessageID, p.PartID, p.Sequence)
		case !slices.Contains(knownPartTypes, p.Type):
			return 0, synccore.Errorf(synccore.CodeUnknownPartType, "message %q: part %q has unknown type %q", m.MessageID, p.PartID, p.Type)
		}
		for j := range i {
			if m.Parts[j].PartID == p.PartID || m.Parts[j].Sequence == p.Sequence {
				return 0, synccore.Errorf(synccore.CodeInvalidMessage,
					"message %q: parts %q and %q repeat an id or a sequence", m.MessageID, m.Parts[j].PartID, p.PartID)
			}
		}
		stored := int64(0)
		if exists {
			var err error
			if stored, err = storedSeq(p.PartID); err != nil {
				return 0, err
			}
		}
		switch {
		case stored == 0:
			newSeqs = append(newSeqs, p.Sequence)
		case stored != p.Sequence:
			return 0, synccore.Errorf(synccore.CodeSequenceChanged,
				"message %q: part %q has sequence %d, stored %d", m.MessageID, p.PartID, p.Sequence, stored)
		}
	}
	slices.Sort(newSeqs)
	for i, seq := range newSeqs {
		want := count + int64(i) + 1
		if seq == want {
			continue
		}
		if seq <= count {
			return 0, synccore.Errorf(synccore.CodeSequenceChanged,
				"message %q: part sequence %d already belongs to another part", m.MessageID, seq)
		}
		return 0, synccore.Errorf(synccore.CodeInvalidMessage,
			"message %q: new part sequence %d leaves a gap (next is %d)", m.MessageID, seq, want)
	}
	return count + int64(len(newSeqs)), nil
}

// CheckSummary checks that a summary's range lies within 1..head.
func CheckSummary(sum Summary, head int64) error {
	if sum.FromSequence < 1 || sum.ToSequence < sum.FromSequence || sum.ToSequence > head {
		return synccore.Errorf(synccore.CodeBadRequest, "summary range %d..%d is not within 1..%d", sum.FromSequence, sum.ToSequence, head)
	}
	return nil
}

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

// BatchTitle is the title an untitled session takes from a commit: that of
// the batch's first visible user message with text, "" if none.
func BatchTitle(msgs []synccore.Message) string {
	for _, m := range msgs {
		if m.Role != synccore.RoleUser || m.Visibility == synccore.VisibilityInternal {
			continue
		}
		if title := TitleFrom(m); title != "" {
			return title
		}
	}
	return ""
}

// CleanTitle trims a title given to RenameSession and checks its length.
func CleanTitle(title string) (string, error) {
	title = strings.TrimSpace(title)
	switch n := len([]rune(title)); {
	case n == 0:
		return "", synccore.Errorf(synccore.CodeBadRequest, "title is empty")
	case n > MaxTitleRunes:
		return "", synccore.Errorf(synccore.CodeBadRequest, "title has %d characters, at most %d", n, MaxTitleRunes)
	}
	return title, nil
}

// interruptedToolOutput is the output given to a tool that never finished
// and had no output of its own: output-error needs one to explain itself.
var interruptedToolOutput = map[string]any{"error": "the server stopped before the tool finished"}

// RecoverMessage closes m, an agent message left streaming by a crash:
// open parts are closed (text and reasoning → done, an unfinished tool →
// output-error, a pending interaction → cancelled, a pending action →
// failed), the error part built by mkErr is appended (its sequence set to
// last part + 1; an empty part_id becomes "recovery-error:<sequence>", an
// empty type "error") and the message becomes done at revision + 1. mkErr
// sees the message already closed, without the error part. It returns the
// whole closed message and the delta to commit (the changed parts only).
func RecoverMessage(m synccore.Message, mkErr func(m synccore.Message) synccore.Part) (whole, delta synccore.Message) {
	m.Parts = slices.Clone(m.Parts)
	changed := closeOpenParts(&m)
	m.State = synccore.MessageDone
	m.Revision++
	ep := mkErr(m)
	ep.Sequence = lastPartSequence(m.Parts) + 1
	if ep.Type == "" {
		ep.Type = synccore.PartError
	}
	if ep.PartID == "" {
		ep.PartID = fmt.Sprintf("recovery-error:%d", ep.Sequence)
	}
	m.Parts = append(m.Parts, ep)
	delta = m
	delta.Parts = append(changed, ep)
	return m, delta
}

// closeOpenParts closes, in place, every part of m that could still change
// and returns copies of the parts it changed.
func closeOpenParts(m *synccore.Message) []synccore.Part {
	var changed []synccore.Part
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case synccore.PartText, synccore.PartReasoning:
			if p.State != synccore.StateStreaming {
				continue
			}
			p.State = synccore.StateDone
		case synccore.PartTool:
			switch p.State {
			case synccore.ToolOutputAvailable, synccore.ToolOutputError, synccore.ToolOutputDenied:
				continue
			}
			p.State = synccore.ToolOutputError
			if p.Output == nil {
				p.Output = interruptedToolOutput
			}
		case synccore.PartInteraction:
			if p.Status != synccore.InteractionPending {
				continue
			}
			p.Status = synccore.InteractionCancelled
		case synccore.PartAction:
			if p.State != synccore.ActionPending {
				continue
			}
			p.State = synccore.ActionFailed
		default:
			continue
		}
		changed = append(changed, *p)
	}
	return changed
}

func lastPartSequence(parts []synccore.Part) int64 {
	var last int64
	for _, p := range parts {
		last = max(last, p.Sequence)
	}
	return last
}

// TouchEvery (ms) is how far a session's updated_at may lag its latest
// commit while that commit only extends messages that keep streaming: such
// a checkpoint moves updated_at only when it is this much older than now.
//
// Why: a streaming answer commits a checkpoint every few milliseconds, and
// on PostgreSQL moving updated_at (an indexed column, for the session list
// and the tree's latest branch) makes every one of them a new row version
// of the session with two index entries, where leaving the row alone
// writes nothing. A list ordered by last activity loses nothing at a
// second's grain; a commit a user sees as activity (a new message, an
// answer ending, a state change) still moves it at once.
const TouchEvery = 1000

// Moves reports whether writing m over the stored header old (found:
// whether the session holds m already) moves updated_at at once: a new
// message, or one whose state changes.
func Moves(m *synccore.Message, old Header, found bool) bool {
	return !found || m.State != old.State
}

// Touches reports whether a commit moves the session's updated_at to now:
// at once when it moved the session (Moves), else only once updatedAt, as
// stored, is TouchEvery old.
func Touches(moved bool, updatedAt, now int64) bool {
	return moved || updatedAt <= now-TouchEvery
}
