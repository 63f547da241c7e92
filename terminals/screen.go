package terminals

import (
	"context"
	"slices"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/lockrank"
	"github.com/termhost/termhost/terminals/hub"
	"github.com/termhost/termhost/terminals/screen"
)

// screenWait bounds how long a subscribe waits for the screen model to
// reach its snapshot (it lags by at most screen.MaxLag bytes); past it the
// joiner gets the history alone.
const screenWait = 2 * time.Second

// maxWithRedraw bounds a snapshot's content with a redraw in it, as JSON:
// under the smallest send queue a connection has (4 MiB, handlers'
// minSendQueue) with room for the rest of the state. A redraw that would
// take a snapshot past it is left out: the screen model never makes a
// snapshot too large to send.
const maxWithRedraw = 4<<20 - 256<<10

// screenSlot is a terminal's screen model (package screen).
type screenSlot struct {
	model *screen.Model // nil: no model (an adopted terminal)
	// mu orders "publish, then feed the model" against "snapshot, then
	// mark the model", so a mark lands exactly where the snapshot's content
	// ends.
	mu   lockrank.Mutex[lockrank.ScreenSlot]
	stop func() // ends the model's goroutine and waits for it
}

// start makes the model of a cols×rows terminal and its goroutine.
func (s *screenSlot) start(cols, rows int) {
	s.model = screen.New(cols, rows)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.model.Run(ctx) }()
	s.stop = func() { cancel(); <-done }
}

// close stops the model's goroutine (dispose, hand-over).
func (s *screenSlot) close() {
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
}

// publish feeds the model a's output and publishes a to the hub.
func (s *screenSlot) publish(h *hub.Hub, uri string, a ahp.Action) int {
	if s.model == nil { // no model (--screen-model=false): nothing to order against
		backlog, _ := h.Publish(uri, a)
		return backlog
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.Type == ahp.TerminalData {
		// Fed first: a screen asked for by anyone who saw this frame
		// (x-termhost/screen takes no lock here) includes it.
		s.model.Feed(a.Data)
	}
	if a.Type == ahp.TerminalCommandExecuted {
		s.model.CommandStart() // a joiner may get the screen before its output
	}
	backlog, _ := h.Publish(uri, a)
	return backlog
}

// screenMarks are the model marks taken with a set of snapshots.
type screenMarks map[string]*screen.Pending

// marked runs snap (a hub call taking snapshots of uris) with the
// terminals' publishing held, and marks their models right after it where
// the snapshot may need a redraw.
func (m *Manager) marked(uris []string, snap func()) screenMarks {
	var slots []*screenSlot
	var names []string
	for _, uri := range slices.Compact(slices.Sorted(slices.Values(uris))) { // one lock order
		if t := m.live(uri); t != nil && t.scr.model != nil {
			slots, names = append(slots, &t.scr), append(names, uri)
		}
	}
	for _, s := range slots {
		s.mu.Lock()
	}
	snap()
	marks := screenMarks{}
	for i, s := range slots {
		if s.model.NeedsRedraw(int64(m.cfg.Scrollback)) {
			marks[names[i]] = s.model.Mark()
		}
		s.mu.Unlock()
	}
	return marks
}

// apply adds the screen redraw to a snapshot's content when the history
// alone would not draw the screen: it was trimmed (more output than the
// scrollback budget) or a full-screen program is on the alternate screen.
// See withRedraw for where it goes: any AHP client that writes the content
// into a terminal draws the exact screen (docs/protocol.md, "Screen
// snapshots").
func (m *Manager) applyScreen(marks screenMarks, snap *ahp.Snapshot) {
	p := marks[snap.Resource]
	st, ok := snap.State.(ahp.TerminalState)
	if p == nil || !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), screenWait)
	defer cancel()
	scr, ok := p.Wait(ctx)
	if ok && scr.OverBudget {
		// Said once per join: the joiner's screen may be off (see
		// docs/protocol.md, "Screen snapshots").
		m.log.Info("screen redraw over budget: joiner gets the history alone",
			"terminal", snap.Resource, "cols", scr.Cols, "rows", scr.Rows, "budget", screen.RedrawBudget(scr.Cols, scr.Rows))
	}
	if !ok || !scr.Exact || scr.Redraw == nil || (!scr.AltScreen && scr.Fed <= int64(m.cfg.Scrollback)) {
		return
	}
	content := withRedraw(st.Content, scr)
	if size := jsonSize(content); size > maxWithRedraw {
		m.log.Info("snapshot with a screen redraw too large: joiner gets the history alone",
			"terminal", snap.Resource, "size", size, "limit", maxWithRedraw)
		return
	}
	st.Content = content
	snap.State = st
}

// jsonSize bounds the JSON size of parts' texts.
func jsonSize(parts []ahp.Part) int {
	n := 0
	for _, p := range parts {
		n += screen.JSONLen(p.Text())
	}
	return n
}

// withRedraw places a screen redraw in a snapshot's content so that the
// content, written in order, ends on the screen, and no command's output
// holds a byte the command did not print (issue 23 point 4):
//
//   - after an unclassified part: at the end of its value;
//   - after a completed command: in a new unclassified part, where the next
//     output would start one anyway;
//   - after a running command: just before it (the end of the unclassified
//     part before it, or a new one). When the snapshot holds the command's
//     whole output, that is the redraw of the screen where the command
//     started, and the output follows it. Otherwise (the output was
//     trimmed, or no start redraw) it is the redraw of the screen now, and
//     this snapshot leaves out what the command printed so far, as the
//     spec lets a server trim content: the redraw draws it. What the
//     command prints from now on goes into its output, as for every client.
func withRedraw(parts []ahp.Part, scr screen.State) []ahp.Part {
	out := slices.Clone(parts)
	n := len(out)
	redraw := string(scr.Redraw)
	switch {
	case n == 0 || (out[n-1].Type == ahp.PartCommand && out[n-1].IsComplete):
		return append(out, ahp.Part{Type: ahp.PartUnclassified, Value: redraw})
	case out[n-1].Type != ahp.PartCommand:
		out[n-1].Value += redraw
		return out
	}
	if scr.Start != nil && int64(len(out[n-1].Output)) == scr.SinceStart {
		redraw = string(scr.Start)
	} else {
		out[n-1].Output = ""
	}
	if n > 1 && out[n-2].Type == ahp.PartUnclassified {
		out[n-2].Value += redraw
		return out
	}
	return slices.Insert(out, n-1, ahp.Part{Type: ahp.PartUnclassified, Value: redraw})
}

// Screen returns the current screen of a terminal s may see, from its
// model (x-termhost/screen), as text: a preview builds no redraw.
func (m *Manager) Screen(ctx context.Context, s Subscriber, uri string) (screen.State, error) {
	t := m.live(uri)
	if t == nil || t.scr.model == nil || !m.hub.Visible(s, uri) {
		return screen.State{}, ErrNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, screenWait)
	defer cancel()
	scr, ok := t.scr.model.Peek().Wait(ctx)
	if !ok {
		return screen.State{}, context.DeadlineExceeded
	}
	return scr, nil
}
