package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// mdLimit is the longest finished text rendered as markdown; a longer one
// stays the plain wrapped text it streamed as (glamour's cost grows with it).
const mdLimit = 64 << 10

// segment is a run of screen lines of one part, read by index: a streamed
// text's segment formats only the lines the window shows.
type segment interface {
	count() int
	line(i int) string
}

// lines is a segment of lines made once.
type lines []string

func (l lines) count() int        { return len(l) }
func (l lines) line(i int) string { return l[i] }

// wrapSeg is a wrapped text shown with a prefix (and a style) per line.
type wrapSeg struct {
	w      *wrapper
	prefix string
	style  *lipgloss.Style
}

func (s wrapSeg) count() int { return len(s.w.lines) }
func (s wrapSeg) line(i int) string {
	l := s.w.line(i)
	if s.style != nil {
		l = s.style.Render(l)
	}
	return s.prefix + l
}

// partCache is what a part's rendering keeps across views of its message.
type partCache struct {
	wrap   *wrapper // the streamed text, wrapped as it grows
	md     lines    // the finished text, rendered as markdown
	mdText string   // the text md was rendered from
}

// piece is a run of a message's parts shown together: a message is one
// piece, except an agent message that read steers (docs/protocol.md §2:
// the agentsync.read marker), whose parts after a marker are shown after
// the user message they answer.
type piece struct {
	after int64 // 0: at the message's place; else the user message's sequence
	segs  []segment
	n     int // lines, with the blank line after the piece (0: nothing to show)
}

func (p *piece) line(i int) string {
	for _, s := range p.segs {
		if i < s.count() {
			return s.line(i)
		}
		i -= s.count()
	}
	return ""
}

// block is one message on screen: its pieces, rendered for a width.
type block struct {
	msg    *synccore.Message
	width  int
	expand bool
	pieces []piece
	parts  map[string]*partCache
}

// head is the piece shown at the message's place.
func (b *block) head() *piece { return &b.pieces[0] }

// answering is the piece shown after user message seq, or nil.
func (b *block) answering(seq int64) *piece {
	for i := 1; i < len(b.pieces); i++ {
		if b.pieces[i].after == seq {
			return &b.pieces[i]
		}
	}
	return nil
}

// readMarker is the user sequence an agentsync.read data part names.
func readMarker(p *synccore.Part) (int64, bool) {
	if p.Type != synccore.PartData || p.DataType != "agentsync.read" {
		return 0, false
	}
	d, ok := p.Data.(map[string]any)
	if !ok {
		return 0, false
	}
	switch n := d["user_sequence"].(type) {
	case int64:
		return n, true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}

// renderer renders messages into blocks, keeping one block per message: a
// view in which only the streaming message changed (the same pointers for
// every other message) re-renders that message alone, a streamed text is
// wrapped incrementally, and a finished text is rendered as markdown once
// per width.
type renderer struct {
	th     theme
	md     map[int]*glamour.TermRenderer
	blocks map[string]*block

	// Counters, for the tests and the benchmark.
	builds    int // blocks (re)built
	mdRenders int // markdown renders
}

func newRenderer(th theme) *renderer {
	return &renderer{th: th, md: map[int]*glamour.TermRenderer{}, blocks: map[string]*block{}}
}

// reset drops every cached block (a new session, a new theme).
func (r *renderer) reset() {
	r.blocks = map[string]*block{}
}

// block is m's block for width, rebuilt only when m (the pointer), the
// width or expand changed.
func (r *renderer) block(m *synccore.Message, width int, expand bool) *block {
	b := r.blocks[m.MessageID]
	if b != nil && b.msg == m && b.width == width && b.expand == expand {
		return b
	}
	if b == nil || b.width != width {
		b = &block{parts: map[string]*partCache{}}
		r.blocks[m.MessageID] = b
	}
	b.msg, b.width, b.expand = m, width, expand
	r.builds++
	b.pieces = append(b.pieces[:0], piece{})
	if m.Role == synccore.RoleUser {
		b.pieces[0].segs = r.userSegs(m, width)
	} else {
		for i := range m.Parts {
			if seq, ok := readMarker(&m.Parts[i]); ok {
				b.pieces = append(b.pieces, piece{after: seq})
				continue
			}
			if s := r.agentPart(b, m, &m.Parts[i], width); s != nil && s.count() > 0 {
				cur := &b.pieces[len(b.pieces)-1]
				cur.segs = append(cur.segs, s)
			}
		}
		if last := &b.pieces[len(b.pieces)-1]; len(last.segs) == 0 && !m.Done() {
			last.segs = append(last.segs, lines{r.th.dim.Render("  …")})
		}
	}
	for i := range b.pieces {
		p := &b.pieces[i]
		p.n = 0
		if len(p.segs) == 0 {
			continue
		}
		p.segs = append(p.segs, lines{""})
		for _, s := range p.segs {
			p.n += s.count()
		}
	}
	return b
}

func (r *renderer) userSegs(m *synccore.Message, width int) []segment {
	var text []string
	for _, p := range m.Parts {
		switch p.Type {
		case synccore.PartText:
			text = append(text, p.Text)
		case synccore.PartFile:
			text = append(text, "[file "+p.Filename+"]")
		case synccore.PartContext:
			text = append(text, "[context "+p.Tag+"]")
		case synccore.PartData:
			text = append(text, "[data "+p.DataType+"]")
		}
	}
	ls := wrapLines(strings.Join(text, "\n"), width-2)
	out := make(lines, len(ls))
	for i, l := range ls {
		prefix := "  "
		if i == 0 {
			prefix = r.th.user.Render("›") + " "
		}
		out[i] = prefix + r.th.user.Render(l)
	}
	if m.Visibility == synccore.VisibilityInternal {
		out = append(out, r.th.dim.Render("  (internal)"))
	}
	return []segment{out}
}

func (b *block) part(p *synccore.Part) *partCache {
	pc := b.parts[p.PartID]
	if pc == nil {
		pc = &partCache{}
		b.parts[p.PartID] = pc
	}
	return pc
}

// agentPart renders one part of an agent message.
func (r *renderer) agentPart(b *block, m *synccore.Message, p *synccore.Part, width int) segment {
	th := r.th
	switch p.Type {
	case synccore.PartText:
		pc := b.part(p)
		done := p.State != synccore.StateStreaming || m.Done()
		if done && len(p.Text) <= mdLimit {
			if pc.md == nil || pc.mdText != p.Text {
				pc.md, pc.mdText = r.markdown(p.Text, width), p.Text
			}
			return pc.md
		}
		if pc.wrap == nil {
			pc.wrap = newWrapper(width - 4)
		}
		pc.wrap.set(p.Text)
		return wrapSeg{w: pc.wrap, prefix: "  "}
	case synccore.PartReasoning:
		done := p.State != synccore.StateStreaming || m.Done()
		if done && !b.expand {
			return lines{th.reasoning.Render(fmt.Sprintf("  ∴ thought · %d words (Ctrl-O shows)", len(strings.Fields(p.Text))))}
		}
		pc := b.part(p)
		if pc.wrap == nil {
			pc.wrap = newWrapper(width - 4)
		}
		pc.wrap.set(p.Text)
		return wrapSeg{w: pc.wrap, prefix: th.dim.Render("  │ "), style: &th.reasoning}
	case synccore.PartTool:
		return r.toolLines(p, width, b.expand)
	case synccore.PartInteraction:
		return r.interactionLines(p, width)
	case synccore.PartAction:
		st := th.dim
		if p.State == synccore.ActionFailed {
			st = th.bad
		}
		name := p.Title
		if name == "" {
			name = p.ActionType
		}
		return lines{truncate(st.Render(fmt.Sprintf("  ■ %s · %s", name, p.State)), width)}
	case synccore.PartError:
		msg := fmt.Sprintf("  ✗ %s: %s", p.Code, p.Message)
		out := lines{}
		for _, l := range wrapLines(msg, width) {
			out = append(out, th.bad.Render(l))
		}
		if p.Recoverable {
			out = append(out, th.dim.Render("    Ctrl-R retries"))
		}
		return out
	case synccore.PartData:
		return lines{th.dim.Render(truncate(fmt.Sprintf("  [data %s]", p.DataType), width))}
	case synccore.PartFile:
		return lines{th.dim.Render(truncate(fmt.Sprintf("  [file %s %s]", p.Filename, p.MediaType), width))}
	}
	return nil
}

// toolState is a tool state's mark and style.
func (r *renderer) toolState(s synccore.PartState) (string, lipgloss.Style) {
	switch s {
	case synccore.ToolOutputAvailable:
		return "✓", r.th.ok
	case synccore.ToolOutputError, synccore.ToolOutputDenied:
		return "✗", r.th.bad
	case synccore.ToolAwaitingApproval:
		return "?", r.th.warn
	default:
		return "⋯", r.th.warn
	}
}

func (r *renderer) toolLines(p *synccore.Part, width int, expand bool) segment {
	mark, st := r.toolState(p.State)
	head := fmt.Sprintf("  %s %s · %s", mark, p.ToolName, p.State)
	if !expand {
		args := compactJSON(p.Input)
		if args != "" && args != "null" {
			head += " " + args
		}
		return lines{truncate(st.Render(sanitize(head)), width)}
	}
	out := lines{st.Render(truncate(sanitize(head), width))}
	for _, kv := range []struct {
		k string
		v any
	}{{"input", p.Input}, {"output", p.Output}} {
		if kv.v == nil {
			continue
		}
		for i, l := range wrapLines(kv.k+": "+compactJSON(kv.v), width-6) {
			if i == 0 {
				out = append(out, r.th.dim.Render("    "+l))
			} else {
				out = append(out, r.th.dim.Render("      "+l))
			}
		}
	}
	return out
}

func (r *renderer) interactionLines(p *synccore.Part, width int) segment {
	th := r.th
	req, _ := httpwire.RequestOf(p)
	resp, _ := httpwire.ResponseOf(p)
	var text string
	st := th.warn
	if req.Kind == httpwire.KindApproval {
		what := req.ToolName + " " + compactJSON(req.Input)
		switch {
		case p.Status == synccore.InteractionPending:
			text = "? approve " + what + "  [y] approve · [n] deny"
		case p.Status == synccore.InteractionCancelled:
			text, st = "– approval cancelled: "+what, th.dim
		case resp.Approved != nil && *resp.Approved:
			text, st = "✓ approved "+what, th.ok
		default:
			text, st = "✗ denied "+what, th.bad
		}
	} else {
		switch {
		case p.Status == synccore.InteractionPending:
			text = "? " + req.Question + "  (type the answer, Enter)"
		case p.Status == synccore.InteractionCancelled:
			text, st = "– question cancelled: "+req.Question, th.dim
		default:
			answer := ""
			if resp.Answer != nil {
				answer = *resp.Answer
			}
			text, st = "? "+req.Question+" → "+answer, th.ok
		}
	}
	out := lines{}
	for _, l := range wrapLines(text, width-2) {
		out = append(out, "  "+st.Render(l))
	}
	return out
}

// markdown renders a finished text with glamour at width, its lines cut to
// the width (glamour pads them).
func (r *renderer) markdown(text string, width int) lines {
	r.mdRenders++
	md := r.md[width]
	if md == nil {
		var err error
		md, err = r.th.markdown(width - 2)
		if err != nil {
			return lines(wrapLines(text, width-4))
		}
		r.md[width] = md
	}
	out, err := md.Render(sanitizeText(text))
	if err != nil {
		return lines(wrapLines(text, width-4))
	}
	if r.th.noColor {
		// glamour writes bold and italics under any colour profile.
		out = ansi.Strip(out)
	}
	var ls []string
	for _, l := range strings.Split(strings.Trim(out, "\n"), "\n") {
		l = strings.TrimRight(l, " ")
		if ansi.StringWidth(l) <= width {
			ls = append(ls, l)
			continue
		}
		// glamour wraps at spaces only: a run of CJK text (or a long
		// word) is cut to the width here, continued under the margin.
		for i, piece := range strings.Split(ansi.Hardwrap(l, width-2, true), "\n") {
			if i > 0 {
				piece = "  " + piece
			}
			ls = append(ls, truncate(piece, width))
		}
	}
	// Drop the blank lines glamour puts around the document.
	for len(ls) > 0 && strings.TrimSpace(ansi.Strip(ls[0])) == "" {
		ls = ls[1:]
	}
	for len(ls) > 0 && strings.TrimSpace(ansi.Strip(ls[len(ls)-1])) == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// truncate cuts a (styled) line to width cells.
func truncate(s string, width int) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

func compactJSON(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
