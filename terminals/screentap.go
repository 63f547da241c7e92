package terminals

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/lockrank"
	"github.com/termhost/termhost/terminals/hub"
	"github.com/termhost/termhost/terminals/screen"
)

// screenWait bounds how long a subscribe waits for the screen model to
// reach its snapshot (it lags by at most screen.MaxLag bytes); past it the
// joiner gets the history alone.
const screenWait = 2 * time.Second

// skipWait bounds how long a connection that skips ahead waits for the
// screen model to reach its skip (Redraw). Longer than a join's wait: under
// a flood on a busy machine the model may need more than 2 s, the viewer
// keeps the screen it has meanwhile, and giving up means evicting it. Not
// longer: nothing reaches the connection meanwhile, and the browser's
// client calls a link dead after 10 s without a frame (ping interval +
// timeout, assets/ahp/client.ts).
const skipWait = 8 * time.Second

// maxWithRedraw bounds a snapshot's content with a redraw in it, as JSON:
// under the smallest send queue a connection has (4 MiB, handlers'
// minSendQueue) with room for the rest of the state. A redraw that would
// take a snapshot past it is left out: the screen model never makes a
// snapshot too large to send.
const maxWithRedraw = 4<<20 - 256<<10

// screenTap is a terminal's screen model (package screen), a tap on its
// hub channel (hub.Tap): it is fed the channel's output, command starts and
// resizes in the order subscribers get them, and it adds the screen redraw
// to a joiner's snapshot when the history alone would not draw the screen.
type screenTap struct {
	model      *screen.Model
	scrollback int64 // the channel's budget (Config.Scrollback)
	log        *slog.Logger
	closed     bool // close was called
}

// newScreenTap makes the model of a cols×rows terminal and starts it.
func newScreenTap(cols, rows, scrollback int, log *slog.Logger) *screenTap {
	return startScreenTap(screen.New(cols, rows), scrollback, log)
}

func startScreenTap(model *screen.Model, scrollback int, log *slog.Logger) *screenTap {
	s := &screenTap{model: model, scrollback: int64(scrollback), log: log}
	s.model.Start()
	return s
}

// ErrNoScreen is wrapped, with the reason, when the screen of a terminal
// without a screen model is asked for (-32008, as for a terminal that
// does not exist: there is no screen to give).
var ErrNoScreen = errors.New("no screen model")

// Why a terminal has no screen model (Screen's error).
const (
	noScreenFlag = "the server keeps no screen models (it was started with --screen-model=false)"
	// A predecessor that handed no model over (an older version).
	noScreenHanded = "it was carried over by an upgrade from a termhost version that did not hand screen models over"
)

// close ends the model's goroutine (dispose, hand-over). A nil tap (no
// model) is closed.
func (s *screenTap) close() {
	if s != nil && !s.closed {
		s.model.Close()
		s.closed = true
	}
}

// Action feeds the model (under the hub lock: it only queues). Output is
// fed before any subscriber sees it: a screen asked for by anyone who saw
// this frame (x-termhost/screen) includes it.
func (s *screenTap) Action(a ahp.Action) {
	switch a.Type {
	case ahp.TerminalData:
		s.model.Feed(a.Data)
	case ahp.TerminalCommandExecuted:
		s.model.CommandStart() // a joiner may get the screen before its output
	case ahp.TerminalResized:
		s.model.Resize(a.Cols, a.Rows)
	}
}

// Snapshot marks the model where a joiner's snapshot is taken, when the
// snapshot may need a redraw: the mark lands exactly where the snapshot's
// content ends (under the hub lock, Mark only queues). The redraw is added
// once the model reaches the mark (redraw).
func (s *screenTap) Snapshot() hub.Amend {
	if !s.model.NeedsRedraw(s.scrollback) {
		return nil
	}
	p := s.model.Mark()
	var scr screen.State
	var ok, waited bool
	return func(snap *ahp.Snapshot) {
		if !waited { // a join that names the channel twice waits once
			scr, ok = s.wait(p, snap.Resource)
			waited = true
		}
		if ok {
			s.redraw(scr, snap)
		}
	}
}

// wait waits (screenWait at most) for the model to reach a mark.
func (s *screenTap) wait(p *screen.Pending, uri string) (screen.State, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), screenWait)
	defer cancel()
	scr, ok := p.Wait(ctx)
	if !ok {
		s.log.Info("screen model too slow to reach the join: joiner gets the history alone",
			"terminal", uri, "waited", screenWait)
	}
	if ok && scr.OverBudget {
		// Said once per join: the joiner's screen may be off (see
		// docs/protocol.md, "Screen snapshots").
		s.log.Info("screen redraw over budget: joiner gets the history alone",
			"terminal", uri, "cols", scr.Cols, "rows", scr.Rows, "budget", screen.RedrawBudget(scr.Cols, scr.Rows))
	}
	return scr, ok
}

// redraw adds the screen redraw to a snapshot's content when the history
// alone would not draw the screen: it was trimmed (more output than the
// scrollback budget) or a full-screen program is on the alternate screen.
// See withRedraw for where it goes: any AHP client that writes the content
// into a terminal draws the exact screen (docs/protocol.md, "Screen
// snapshots").
func (s *screenTap) redraw(scr screen.State, snap *ahp.Snapshot) {
	st, ok := snap.State.(ahp.TerminalState)
	if !ok || !scr.Exact || scr.Redraw == nil || (!scr.AltScreen && scr.Fed <= s.scrollback) {
		return
	}
	content := withRedraw(st.Content, scr)
	if size := jsonSize(content); size > maxWithRedraw {
		s.log.Info("snapshot with a screen redraw too large: joiner gets the history alone",
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
// holds a byte the command did not print:
//
//   - after an unclassified part: at the end of its value;
//   - after a completed command: in a new unclassified part, where the next
//     output would start one anyway;
//   - after a running command: just before it (the end of the unclassified
//     part before it, or a new one). When the snapshot holds the command's
//     whole output, that is the redraw of the screen where the command
//     started, and the output follows it. Otherwise (the output was
//     trimmed, or no start redraw) it is the redraw of the screen now, and
//     this snapshot leaves out what the command printed so far, as
//     AHP lets a server trim content: the redraw draws it. What the
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
	if t == nil || !m.hub.Visible(s, uri) {
		return screen.State{}, ErrNotFound
	}
	if t.scr == nil {
		return screen.State{}, fmt.Errorf("%w: %s", ErrNoScreen, t.noScreen)
	}
	ctx, cancel := context.WithTimeout(ctx, screenWait)
	defer cancel()
	scr, ok := t.scr.model.Peek().Wait(ctx)
	if !ok {
		return screen.State{}, context.DeadlineExceeded
	}
	return scr, nil
}

// Redraw marks the model where a subscriber that fell behind skips ahead
// (hub.Redrawer; under the hub lock, Mark only queues). The redraw is the
// screen at the mark, alone: it draws on any terminal of the size whatever
// was written to it before (screen.State.Redraw), so it stands in for the
// output the subscriber skipped. Every subscriber that skips at this point
// shares the one mark.
func (s *screenTap) Redraw() hub.Redraw {
	p := s.model.Mark()
	var (
		mu     lockrank.Mutex[lockrank.Leaf]
		done   bool
		redraw []byte
	)
	return func(ctx context.Context) ([]byte, bool) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			ctx, cancel := context.WithTimeout(ctx, skipWait)
			defer cancel()
			scr, ok := p.Wait(ctx)
			if !ok {
				return nil, false // the next caller waits again
			}
			done = true
			if scr.Exact && scr.Redraw != nil {
				redraw = scr.Redraw
			}
		}
		return redraw, redraw != nil
	}
}
