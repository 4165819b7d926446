package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
)

// callTimeout bounds one HTTP call the UI makes.
const callTimeout = 30 * time.Second

type screen int

const (
	screenSessions screen = iota
	screenChat
)

// listMode is what the session list's input line is for.
type listMode int

const (
	listBrowse listMode = iota
	listRename
	listConfirmDelete
)

// Messages of the UI's event loop.
type (
	// viewMsg is a view of the open session; gen names the connection it
	// came from (views of a closed one are dropped).
	viewMsg struct {
		gen int
		v   bindings.View
	}
	sessionsMsg struct {
		list []bindings.Session
		err  error
	}
	openedMsg struct {
		gen  int
		sess bindings.Session
		c    conn
		err  error
	}
	// branchesMsg is the versions of the last reply (gen: of the session
	// they were read for).
	branchesMsg struct {
		gen int
		b   bindings.Branches
		err error
	}
	// switchMsg opens another version of the conversation: a regenerated
	// reply's session, or a sibling's.
	switchMsg struct {
		id  string
		err error
	}
	// doneMsg is the end of a call; what names it for the notice line.
	doneMsg struct {
		what string
		err  error
	}
	renamedMsg struct {
		sess bindings.Session
		err  error
	}
	olderMsg struct {
		gen int
		err error
	}
)

// ui is the UI model: a pure Update over keys, sizes and bindings' views, and
// a View of them. Everything that talks to the server is a tea.Cmd on the
// backend, so the tests drive the model with messages alone.
type ui struct {
	be     backend
	send   func(tea.Msg) // delivers views to the event loop (tea.Program.Send)
	th     theme
	url    string
	width  int
	height int
	screen screen

	// The session list.
	sessions []bindings.Session
	cursor   int
	mode     listMode

	// The open session.
	gen       int
	sess      bindings.Session
	c         conn
	view      bindings.View
	haveView  bool
	rd        *renderer
	scroll    int   // lines scrolled up from the newest
	atTop     bool  // the window shows the oldest message held
	expand    bool  // tools and reasoning shown whole
	loading   bool  // a LoadOlder call is under way
	olderFrom int64 // the view's NextBeforeSequence when it was made
	answered  map[string]bool
	quitArmed bool

	input  textinput.Model
	notice string
	// branches are the versions of the last reply (‹ i / n ›), read when
	// the session opens and after each turn.
	branches   bindings.Branches
	branchesOf string // the message id of the reply they were read for
	startID    string // -session: open it at start

	statusKey  statusKey
	statusText string
	inputKey   inputKey
	inputText  string
}

func newModel(be backend, th theme, url string) *ui {
	in := textinput.New()
	in.Prompt = "› "
	in.Placeholder = "Message (Enter sends)"
	in.CharLimit = 0
	in.Cursor.SetMode(cursor.CursorStatic) // no blink: the view follows keys alone
	in.Focus()
	return &ui{
		be: be, th: th, url: url, rd: newRenderer(th), input: in,
		width: 80, height: 24, answered: map[string]bool{},
		send: func(tea.Msg) {},
	}
}

// lastReply is the newest agent message of the window, nil if none.
func (m *ui) lastReply() *synccore.Message {
	for i := m.view.Messages.Len() - 1; i >= 0; i-- {
		if msg := m.view.Messages.At(i); msg.Role == synccore.RoleAgent {
			return msg
		}
	}
	return nil
}

// branchesOfLastReply reads the versions of the last reply once it is
// done, once per reply (views coalesce: at full speed a whole turn may
// fall between two of them).
func (m *ui) branchesOfLastReply() tea.Cmd {
	reply, c, gen := m.lastReply(), m.c, m.gen
	if reply == nil || c == nil || !reply.Done() || reply.MessageID == m.branchesOf {
		return nil
	}
	m.branchesOf = reply.MessageID
	seq := reply.Sequence
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		b, err := c.Branches(ctx, seq)
		return branchesMsg{gen, b, err}
	}
}

// openSession makes the model open id at start (-session).
func (m *ui) openSession(id string) tea.Cmd {
	m.gen++
	gen := m.gen
	be, send := m.be, m.send
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		c, err := be.Open(ctx, id, func(v bindings.View) { send(viewMsg{gen, v}) })
		return openedMsg{gen: gen, sess: bindings.Session{SessionID: id}, c: c, err: err}
	}
}

func (m *ui) Init() tea.Cmd {
	if m.startID != "" {
		return m.enterSession(bindings.Session{SessionID: m.startID})
	}
	return m.loadSessions()
}

func (m *ui) loadSessions() tea.Cmd {
	be := m.be
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		list, err := be.Sessions(ctx)
		return sessionsMsg{list, err}
	}
}

// call runs f on the backend as a command whose end is a doneMsg.
func call(what string, f func(ctx context.Context) error) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		return doneMsg{what, f(ctx)}
	}
}

func (m *ui) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 5)
		m.input.Width = m.width - 4
		return m, m.fill()
	case viewMsg:
		if msg.gen != m.gen || m.c == nil {
			return m, nil
		}
		was, _ := m.turn()
		m.view, m.haveView = msg.v, true
		now, _ := m.turn()
		if was && !now && !m.quitArmed {
			m.notice = "" // "stopping", "approved"... are over with the turn
		}
		return m, tea.Batch(m.fill(), m.branchesOfLastReply())
	case sessionsMsg:
		if msg.err != nil {
			m.notice = "sessions: " + msg.err.Error()
			return m, nil
		}
		m.sessions = msg.list
		m.cursor = min(m.cursor, max(len(m.sessions)-1, 0))
		return m, nil
	case openedMsg:
		if msg.gen != m.gen {
			if msg.c != nil {
				_ = msg.c.Close()
			}
			return m, nil
		}
		if msg.err != nil {
			m.screen = screenSessions
			m.notice = "open: " + msg.err.Error()
			return m, nil
		}
		m.c = msg.c
		if msg.sess.Title != "" || m.sess.SessionID != msg.sess.SessionID {
			m.sess = msg.sess
		}
		return m, m.branchesOfLastReply()
	case branchesMsg:
		switch {
		case msg.gen != m.gen:
		case msg.err != nil:
			m.notice = "versions: " + msg.err.Error()
		default:
			m.branches = msg.b
		}
		return m, nil
	case switchMsg:
		if msg.err != nil {
			m.notice = "branch: " + msg.err.Error()
			return m, nil
		}
		return m, m.enterSession(bindings.Session{SessionID: msg.id, Title: m.sess.Title})
	case createdMsg:
		m.notice = ""
		return m, m.enterSession(msg.sess)
	case renamedMsg:
		if msg.err != nil {
			m.notice = "rename: " + msg.err.Error()
			return m, nil
		}
		if msg.sess.SessionID == m.sess.SessionID {
			m.sess = msg.sess
		}
		m.notice = "renamed"
		return m, m.loadSessions()
	case doneMsg:
		if msg.err != nil {
			m.notice = msg.what + ": " + msg.err.Error()
		} else if msg.what == "delete" {
			m.notice = "deleted"
			return m, m.loadSessions()
		} else if msg.what == "retry" && m.notice == "retrying" {
			// The retry is recorded (its action part says how it goes):
			// a turn that ran and ended between two views would leave
			// the notice up for ever.
			m.notice = ""
		}
		return m, nil
	case olderMsg:
		if msg.gen == m.gen {
			m.loading = false
			if msg.err != nil {
				m.notice = "older history: " + msg.err.Error()
				return m, nil
			}
			if m.view.NextBeforeSequence != m.olderFrom {
				// The page is in: fill on if the screen is not full yet.
				return m, m.fill()
			}
		}
		return m, nil
	case tea.KeyMsg:
		if m.screen == screenSessions {
			return m.listKey(msg)
		}
		return m.chatKey(msg)
	}
	return m, nil
}

// --- the session list ---

func (m *ui) listKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch m.mode {
	case listRename:
		switch k.String() {
		case "esc":
			m.mode = listBrowse
			m.input.Reset()
			return m, nil
		case "enter":
			m.mode = listBrowse
			title := strings.TrimSpace(m.input.Value())
			m.input.Reset()
			if title == "" || len(m.sessions) == 0 {
				return m, nil
			}
			id, be := m.sessions[m.cursor].SessionID, m.be
			return m, func() tea.Msg {
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				defer cancel()
				s, err := be.Rename(ctx, id, title)
				return renamedMsg{s, err}
			}
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(k)
		return m, cmd
	case listConfirmDelete:
		m.mode = listBrowse
		if k.String() != "y" || len(m.sessions) == 0 {
			m.notice = ""
			return m, nil
		}
		id, be := m.sessions[m.cursor].SessionID, m.be
		m.notice = "deleting…"
		return m, call("delete", func(ctx context.Context) error { return be.Delete(ctx, id) })
	}
	m.notice = ""
	switch k.String() {
	case "ctrl+c", "q":
		return m, tea.Quit
	case "up", "k":
		m.cursor = max(m.cursor-1, 0)
	case "down", "j":
		m.cursor = min(m.cursor+1, max(len(m.sessions)-1, 0))
	case "home", "g":
		m.cursor = 0
	case "end", "G":
		m.cursor = max(len(m.sessions)-1, 0)
	case "ctrl+r", "R":
		return m, m.loadSessions()
	case "n":
		be := m.be
		m.notice = "creating…"
		return m, func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			s, err := be.Create(ctx)
			if err != nil {
				return doneMsg{"create", err}
			}
			return createdMsg{s}
		}
	case "r":
		if len(m.sessions) > 0 {
			m.mode = listRename
			m.input.Reset()
			m.input.SetValue(m.sessions[m.cursor].Title)
			m.input.CursorEnd()
		}
	case "d", "delete":
		if len(m.sessions) > 0 {
			m.mode = listConfirmDelete
			m.notice = fmt.Sprintf("delete %q? y deletes, any other key keeps it", title(m.sessions[m.cursor]))
		}
	case "enter":
		if len(m.sessions) > 0 {
			return m, m.enterSession(m.sessions[m.cursor])
		}
	}
	return m, nil
}

// createdMsg is a session just created: it opens.
type createdMsg struct{ sess bindings.Session }

// enterSession opens s on the chat screen.
func (m *ui) enterSession(s bindings.Session) tea.Cmd {
	m.closeSession()
	m.screen = screenChat
	m.sess = s
	m.input.Reset()
	m.notice = ""
	cmd := m.openSession(s.SessionID)
	return cmd
}

// closeSession stops syncing the open session.
func (m *ui) closeSession() {
	if m.c != nil {
		c := m.c
		go func() { _ = c.Close() }()
	}
	m.gen++
	m.c, m.haveView, m.view, m.branches, m.branchesOf = nil, false, bindings.View{}, bindings.Branches{}, ""
	m.scroll, m.atTop, m.loading, m.quitArmed = 0, false, false, false
	m.answered = map[string]bool{}
	m.rd.reset()
}

func title(s bindings.Session) string {
	if s.Title != "" {
		return s.Title
	}
	return "untitled " + shortID(s.SessionID)
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[len(id)-8:]
	}
	return id
}

// --- the chat screen ---

// turn is the state of the open session's newest turn: running (a reply
// streams or is awaited) and the first pending interaction not yet
// answered from here.
func (m *ui) turn() (running bool, ask *synccore.Part) {
	n := m.view.Messages.Len()
	if n == 0 {
		return false, nil
	}
	agent := m.view.Messages.At(n - 1)
	if agent.Role == synccore.RoleUser {
		// A new turn awaits its reply, or a steer follows the reply.
		if agent = m.turnAgent(n - 1); agent == nil {
			return true, nil
		}
	}
	if agent.Done() {
		return false, nil
	}
	for i := range agent.Parts {
		p := &agent.Parts[i]
		if p.Type == synccore.PartInteraction && p.Status == synccore.InteractionPending && !m.answered[p.InteractionID] {
			return true, p
		}
	}
	return true, nil
}

func (m *ui) chatKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	key := k.String()
	if key != "ctrl+c" {
		m.quitArmed = false
	}
	running, ask := m.turn()
	c := m.c
	switch key {
	case "ctrl+c":
		if m.quitArmed {
			return m, tea.Quit
		}
		m.quitArmed = true
		if running && c != nil {
			m.notice = "stopping · Ctrl-C again quits"
			return m, call("stop", func(ctx context.Context) error { return c.Action(ctx, bindings.ActionStop, "") })
		}
		m.notice = "Ctrl-C again quits"
		return m, nil
	case "esc":
		if running && c != nil {
			m.notice = "stopping"
			return m, call("stop", func(ctx context.Context) error { return c.Action(ctx, bindings.ActionStop, "") })
		}
		m.input.Reset()
		return m, nil
	case "ctrl+g":
		m.closeSession()
		m.screen = screenSessions
		return m, m.loadSessions()
	case "ctrl+o":
		m.expand = !m.expand
		return m, nil
	case "ctrl+n":
		reply := m.lastReply()
		if c == nil || reply == nil || !reply.Done() {
			return m, nil
		}
		m.notice = "regenerating"
		seq := reply.Sequence
		return m, func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			id, err := c.Regenerate(ctx, seq)
			return switchMsg{id, err}
		}
	case "alt+left", "alt+right":
		b := m.branches
		i := b.Index - 1
		if key == "alt+right" {
			i = b.Index + 1
		}
		if reply := m.lastReply(); reply == nil || b.Sequence != reply.Sequence || i < 0 || i >= len(b.Items) {
			return m, nil
		}
		return m, func() tea.Msg { return switchMsg{id: b.Items[i].SessionID} }
	case "ctrl+r":
		if c == nil {
			return m, nil
		}
		m.notice = "retrying"
		return m, call("retry", func(ctx context.Context) error { return c.Action(ctx, bindings.ActionRetry, "") })
	case "pgup", "shift+up", "ctrl+u":
		step := 1
		if key != "shift+up" {
			step = max(m.chatHeight()-2, 1)
		}
		m.scroll += step
		return m, m.fill()
	case "pgdown", "shift+down", "ctrl+d":
		step := 1
		if key != "shift+down" {
			step = max(m.chatHeight()-2, 1)
		}
		m.scroll = max(m.scroll-step, 0)
		return m, nil
	case "end":
		if m.input.Value() == "" {
			m.scroll = 0
			return m, nil
		}
	case "y", "n":
		if ask != nil && m.input.Value() == "" && isApproval(ask) && c != nil {
			id, ok := ask.InteractionID, key == "y"
			m.answered[id] = true
			m.notice = map[bool]string{true: "approved", false: "denied"}[ok]
			return m, call("answer", func(ctx context.Context) error { return c.Answer(ctx, id, bindings.Approval(ok)) })
		}
	case "enter":
		text := strings.TrimSpace(m.input.Value())
		if text == "" || c == nil {
			return m, nil
		}
		m.input.Reset()
		m.scroll = 0
		if cmd := m.command(text); cmd != nil {
			return m, cmd
		}
		if ask != nil && !isApproval(ask) {
			id := ask.InteractionID
			m.answered[id] = true
			return m, call("answer", func(ctx context.Context) error { return c.Answer(ctx, id, bindings.Reply(text)) })
		}
		if running {
			m.notice = "steering the running turn"
		} else {
			m.notice = ""
		}
		return m, call("send", func(ctx context.Context) error { return c.Send(ctx, text) })
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return m, cmd
}

// command runs a /command typed in the composer; nil when text is not one.
func (m *ui) command(text string) tea.Cmd {
	name, arg, _ := strings.Cut(text, " ")
	c, id, be := m.c, m.sess.SessionID, m.be
	switch name {
	case "/sessions":
		m.closeSession()
		m.screen = screenSessions
		return m.loadSessions()
	case "/rename":
		arg = strings.TrimSpace(arg)
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			s, err := be.Rename(ctx, id, arg)
			return renamedMsg{s, err}
		}
	case "/retry":
		return call("retry", func(ctx context.Context) error { return c.Action(ctx, bindings.ActionRetry, "") })
	case "/stop":
		return call("stop", func(ctx context.Context) error { return c.Action(ctx, bindings.ActionStop, "") })
	case "/model":
		arg = strings.TrimSpace(arg)
		return call("model", func(ctx context.Context) error { return c.Action(ctx, bindings.ActionSetModel, arg) })
	case "/approvals":
		mode := strings.TrimSpace(arg)
		if mode != string(httpwire.ApprovalAsk) && mode != string(httpwire.ApprovalAuto) {
			m.notice = "/approvals ask or /approvals auto"
			return func() tea.Msg { return nil }
		}
		m.notice = "approvals: " + mode
		return call("approvals", func(ctx context.Context) error { return c.Action(ctx, bindings.ActionSetApprovalMode, mode) })
	case "/help":
		m.notice = "/sessions /rename T /model M /approvals ask|auto /retry /stop /quit · Ctrl-N regenerates · Alt-←/→ versions"
		return func() tea.Msg { return nil }
	case "/quit":
		return tea.Quit
	}
	return nil
}

func isApproval(p *synccore.Part) bool {
	req, _ := httpwire.RequestOf(p)
	return req.Kind == httpwire.KindApproval
}

// chatHeight is the rows of the message area: all but the input line and
// the status line.
func (m *ui) chatHeight() int { return max(m.height-2, 1) }

// fill loads older history when the window reached the oldest message held
// and there is more: the history fills the screen, and scrolling up past
// the top reads the next page.
func (m *ui) fill() tea.Cmd {
	if m.screen != screenChat || !m.haveView || m.c == nil || !m.view.HasMoreOlder {
		return nil
	}
	m.window()
	if !m.atTop || !m.view.HasMoreOlder || m.view.LoadingOlder || m.loading {
		return nil
	}
	m.loading = true
	m.olderFrom = m.view.NextBeforeSequence
	c, gen := m.c, m.gen
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		return olderMsg{gen, c.LoadOlder(ctx)}
	}
}

// window is the message area's lines, newest at the bottom, scrolled up by
// m.scroll lines (clamped): it renders the messages from the newest back
// only until the window is full, each through the renderer's cache. The
// part of a reply that answers a steer is shown after that steer.
func (m *ui) window() []string {
	h := m.chatHeight()
	need := m.scroll + h
	var shown []*piece // newest first
	total := 0
	add := func(p *piece) {
		if p != nil && p.n > 0 {
			shown = append(shown, p)
			total += p.n
		}
	}
	i := m.view.Messages.Len() - 1
	for ; i >= 0 && total < need; i-- {
		msg := m.view.Messages.At(i)
		if msg.Role == synccore.RoleUser {
			if a := m.turnAgent(i); a != nil {
				add(m.rd.block(a, m.width, m.expand).answering(msg.Sequence))
			}
		}
		add(m.rd.block(msg, m.width, m.expand).head())
	}
	m.atTop = i < 0 && total <= need
	if m.atTop {
		m.scroll = max(min(m.scroll, total-h), 0)
	}
	// Lines [total-scroll-h, total-scroll) of the pieces, oldest first.
	from, to := max(total-m.scroll-h, 0), total-m.scroll
	out := make([]string, 0, h)
	pos := 0
	for j := len(shown) - 1; j >= 0; j-- {
		p := shown[j]
		if pos+p.n > from && pos < to {
			for k := max(from-pos, 0); k < min(p.n, to-pos); k++ {
				out = append(out, p.line(k))
			}
		}
		pos += p.n
	}
	return out
}

// turnAgent is the agent message of the turn of the message at index i:
// the newest agent message before it in the same turn (a turn's messages
// are adjacent), or nil.
func (m *ui) turnAgent(i int) *synccore.Message {
	turn := m.view.Messages.At(i).TurnID
	if turn == "" {
		return nil
	}
	for j := i - 1; j >= 0 && j >= i-64; j-- {
		mj := m.view.Messages.At(j)
		if mj.TurnID != turn {
			return nil
		}
		if mj.Role == synccore.RoleAgent {
			return mj
		}
	}
	return nil
}

func (m *ui) View() string {
	if m.screen == screenSessions {
		return m.listView()
	}
	return m.chatView()
}

func (m *ui) listView() string {
	th := m.th
	var b strings.Builder
	b.WriteString(truncate(th.accent.Render("agentsync")+th.dim.Render(" · "+m.url), m.width))
	b.WriteString("\n\n")
	rows := max(m.height-5, 1)
	first := max(m.cursor-rows+1, 0)
	if len(m.sessions) == 0 {
		b.WriteString(th.dim.Render("  no sessions yet: n creates one"))
		b.WriteString("\n")
	}
	for i := first; i < len(m.sessions) && i < first+rows; i++ {
		s := m.sessions[i]
		mark, st := "  ", th.agent
		if i == m.cursor {
			mark, st = th.cursor.Render("› "), th.cursor
		}
		line := mark + st.Render(sanitize(title(s))) + th.dim.Render(" · "+s.Model+" · "+ago(s.UpdatedAt, s.CreatedAt))
		b.WriteString(truncate(line, m.width))
		b.WriteString("\n")
	}
	used := strings.Count(b.String(), "\n")
	b.WriteString(strings.Repeat("\n", max(m.height-2-used, 0)))
	switch m.mode {
	case listRename:
		b.WriteString(truncate("rename: "+m.input.View(), m.width))
	default:
		b.WriteString("")
	}
	b.WriteString("\n")
	hint := "Enter open · n new · r rename · d delete · q quit"
	if m.notice != "" {
		hint = m.notice
	}
	b.WriteString(truncate(th.status.Render(hint), m.width))
	return b.String()
}

func ago(updated, created int64) string {
	ms := updated
	if ms == 0 {
		ms = created
	}
	if ms == 0 {
		return ""
	}
	d := time.Since(time.UnixMilli(ms))
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return time.UnixMilli(ms).Format("2006-01-02")
}

func (m *ui) chatView() string {
	var b strings.Builder
	lines := m.window()
	h := m.chatHeight()
	for range h - len(lines) {
		b.WriteString("\n")
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString("\n")
	}
	b.WriteString(m.inputLine())
	b.WriteString("\n")
	b.WriteString(m.statusLine())
	return b.String()
}

// statusLine is the connection status, the session and the keys that
// apply now (or the latest notice).
func (m *ui) statusLine() string {
	th := m.th
	status := "connecting"
	if m.haveView {
		status = m.view.Status
	}
	running, ask := m.turn()
	hint := "Enter send · Ctrl-O tools · PgUp older · Ctrl-G sessions"
	switch {
	case ask != nil && isApproval(ask):
		hint = "y approve · n deny · Esc stop"
	case ask != nil:
		hint = "type the answer · Enter replies · Esc stop"
	case running:
		hint = "streaming · Esc stop · Enter steers"
	}
	if reply := m.lastReply(); !running && reply != nil && reply.Done() {
		hint += " · Ctrl-N regenerates"
		if b := m.branches; b.Sequence == reply.Sequence && len(b.Items) > 1 {
			hint = fmt.Sprintf("‹ %d / %d › Alt-←/→ · ", b.Index+1, len(b.Items)) + hint
		}
	}
	if m.scroll > 0 {
		hint = fmt.Sprintf("↑%d · End follows · ", m.scroll) + hint
	}
	if m.loading || m.view.LoadingOlder {
		hint = "loading older · " + hint
	}
	if m.notice != "" {
		hint = m.notice + " · " + hint
	}
	key := statusKey{status, m.title(), hint, m.width}
	if key == m.statusKey {
		return m.statusText // styling costs more than the rest of a delta
	}
	var dot string
	switch status {
	case synccore.StatusLive:
		dot = th.ok.Render("●") + " live"
	case synccore.StatusBackoff:
		dot = th.bad.Render("○") + " reconnecting"
	case synccore.StatusClosed:
		dot = th.bad.Render("○") + " closed"
	default:
		dot = th.warn.Render("◌") + " " + status
	}
	// The title gives way to the hints on a narrow terminal.
	left := dot + th.dim.Render(" · "+truncate(sanitize(key.title), max(m.width/4, 12)))
	line := left + th.dim.Render(" · ") + th.status.Render(hint)
	m.statusKey, m.statusText = key, truncate(line, m.width)
	return m.statusText
}

// inputLine is the composer, styled again only after a key changed it.
func (m *ui) inputLine() string {
	key := inputKey{m.input.Value(), m.input.Position(), m.width}
	if key != m.inputKey {
		m.inputKey, m.inputText = key, truncate(m.input.View(), m.width)
	}
	return m.inputText
}

type inputKey struct {
	value      string
	pos, width int
}

// title is the open session's title: the server's, or until the list is
// read again the first user message's text (what the server makes it).
func (m *ui) title() string {
	if m.sess.Title == "" && m.view.Messages.Len() > 0 {
		if first := m.view.Messages.At(0); first.Sequence == 1 && first.Role == synccore.RoleUser && len(first.Parts) > 0 {
			t := strings.Join(strings.Fields(first.Parts[0].Text), " ")
			if r := []rune(t); len(r) > 40 {
				t = string(r[:40]) + "…"
			}
			if t != "" {
				return t
			}
		}
	}
	return title(m.sess)
}

// statusKey is what the status line shows.
type statusKey struct {
	status, title, hint string
	width               int
}
