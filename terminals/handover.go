package terminals

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/termhost/termhost/internal/ondemand"
	"github.com/termhost/termhost/terminals/hub"
	"github.com/termhost/termhost/terminals/pty"
	"github.com/termhost/termhost/terminals/screen"
	"github.com/termhost/termhost/terminals/shellint"
	"golang.org/x/sys/unix"
)

// Handover is what a termhost hands to its successor besides descriptors:
// the hub (serverSeq, states, contents, replay ring) and, per terminal, what
// its reader and writer need to carry on.
type Handover struct {
	Hub       hub.State        `json:"hub"`
	Terminals []HandedTerminal `json:"terminals"`
	Scripts   []string         `json:"scripts"` // shell-integration script directories the shells still use
	// Held are the claim holders that had a live connection when the
	// server stopped serving: the successor keeps their claims for the
	// grace of a client that just left, for them to reconnect. A claim
	// whose holder had none is nobody's at once (whoever may act and types
	// gets it). HeldKnown is false from a predecessor that did not say:
	// every holder then gets the grace.
	Held      []string `json:"held,omitempty"`
	HeldKnown bool     `json:"heldKnown,omitempty"`
}

// HandedTerminal is one terminal of a Handover. A running one comes with
// two descriptors, its pty master and a pidfd of its process.
type HandedTerminal struct {
	URI         string        `json:"uri"`
	Running     bool          `json:"running"`
	Pid         int           `json:"pid,omitempty"`
	ExitCode    *int          `json:"exitCode,omitempty"`
	Nonce       string        `json:"nonce,omitempty"`
	Mode        shellint.Mode `json:"mode"`
	Integrated  bool          `json:"integrated"`
	TitlePinned bool          `json:"titlePinned"`
	Input       [][]byte      `json:"input,omitempty"` // queued, not yet written to the pty
	// Shell is the shell-integration state (nil from a predecessor that
	// did not send it: start afresh).
	Shell *shellint.State `json:"shell,omitempty"`
	// Screen is the screen model's state, so that joiners and previews get
	// the exact screen after the hand-over as before it; nil when the
	// terminal has none, for the reason in NoScreen (empty from a
	// predecessor that did not hand models over).
	Screen   *screen.Saved `json:"screen,omitempty"`
	NoScreen string        `json:"noScreen,omitempty"`
}

// Paused is a manager whose terminals are stopped for a hand-over: their
// shells run on, their output waits in the ptys. Then either the process
// re-executes (an upgrade), or Resume (the upgrade failed), or Commit
// (another manager of this process adopted them).
type Paused struct {
	m      *Manager
	State  Handover
	FDs    []int // per running terminal, in State order: pty master, pidfd
	terms  []*terminal
	pidfds []int
}

// Pause stops every terminal's reader and writer without ending its shell
// and returns what a successor needs. Call it with no connection left (no
// dispatch may arrive); Create is refused until Resume. connected are the
// clients that had a live connection before they were closed for the
// hand-over (ConnectedClients then): only their claims stay held.
func (m *Manager) Pause(connected []string) (*Paused, error) {
	m.mu.Lock()
	if m.closed || m.paused {
		m.mu.Unlock()
		return nil, errors.New("terminals: closed or already paused")
	}
	m.paused = true
	var terms []*terminal
	for _, t := range m.terms {
		if t.live {
			terms = append(terms, t)
		}
	}
	m.mu.Unlock()
	m.creating.Wait()

	p := &Paused{m: m, terms: terms, State: Handover{Scripts: append([]string{m.scripts}, m.adoptedScripts...)}}
	for _, t := range terms {
		t.pause()
	}
	screens := saveScreens(terms, m.log)
	for i, t := range terms {
		h, err := p.hand(t)
		if err != nil {
			p.Resume()
			return nil, err
		}
		h.Screen, h.NoScreen = screens[i].saved, screens[i].why
		p.State.Terminals = append(p.State.Terminals, h)
	}
	p.State.Hub = m.hub.Export() // after the readers' last flush
	p.State.Held, p.State.HeldKnown = heldClaims(p.State.Hub, connected), true
	return p, nil
}

// saveWait bounds how long a hand-over waits for the screen models to
// apply the output they were fed (they work in parallel, each at most
// screen.MaxLag behind): a model not done by then is not handed over.
const saveWait = skipWait

// savedScreen is a terminal's screen model for its Handover, or why there
// is none.
type savedScreen struct {
	saved *screen.Saved
	why   string
}

// saveScreens saves the models of paused terminals (fed their last output),
// all at once.
func saveScreens(terms []*terminal, log *slog.Logger) []savedScreen {
	out := make([]savedScreen, len(terms))
	ctx, cancel := context.WithTimeout(context.Background(), saveWait)
	defer cancel()
	var wg sync.WaitGroup
	for i, t := range terms {
		if t.scr == nil {
			out[i].why = t.noScreen
			continue
		}
		wg.Go(func() {
			if s, ok := t.scr.model.Save(ctx); ok {
				out[i].saved = &s
				return
			}
			out[i].why = fmt.Sprintf("its screen model did not catch up with the output within %v when the server was upgraded", saveWait)
			log.Warn("screen model not handed over: too slow", "terminal", t.uri, "waited", saveWait)
		})
	}
	wg.Wait()
	return out
}

// pause stops the reader (at once, leaving unread output in the pty) and
// the writer, and waits for both.
func (t *terminal) pause() {
	t.detaching.Store(true)
	t.cancel()
	t.proc.PauseReading()
	t.writer.Stop()
	t.wg.Wait()
}

// hand describes a paused terminal and collects its descriptors.
func (p *Paused) hand(t *terminal) (HandedTerminal, error) {
	h := HandedTerminal{URI: t.uri, Nonce: t.nonce, Mode: t.sh.Mode(), Integrated: t.integrated,
		TitlePinned: t.titlePinned.Load(), Input: t.takeInput()}
	sh := t.sh.State() // the reader has stopped: nobody else touches t.sh
	h.Shell = &sh
	if !t.detached { // its reader finished: exited, pty released
		h.ExitCode = t.proc.ExitCode()
		return h, nil
	}
	pidfd, err := unix.PidfdOpen(t.proc.Pid(), 0)
	if err != nil {
		return h, fmt.Errorf("pidfd of %s: %w", t.uri, err)
	}
	p.pidfds = append(p.pidfds, pidfd)
	var master int
	if err := t.proc.Control(func(fd uintptr) { master = int(fd) }); err != nil {
		return h, fmt.Errorf("pty of %s: %w", t.uri, err)
	}
	h.Running, h.Pid = true, t.proc.Pid()
	p.FDs = append(p.FDs, master, pidfd)
	return h, nil
}

// takeInput empties the input queue of a stopped writer.
func (t *terminal) takeInput() [][]byte {
	out := t.input.takeAll()
	for _, b := range out {
		t.queued.Add(-int64(len(b)))
	}
	return out
}

// Resume restarts the paused terminals: the hand-over failed, this
// process keeps them.
func (p *Paused) Resume() {
	p.closePidfds()
	handed := map[string][][]byte{}
	for _, h := range p.State.Terminals {
		handed[h.URI] = h.Input
	}
	for _, t := range p.terms {
		if !t.detached {
			continue // exited while pausing: released, state only
		}
		input := append(handed[t.uri], t.takeInput()...)
		for _, b := range input { // counted first: no keystroke overtakes them (writeNow)
			t.queued.Add(int64(len(b)))
		}
		t.detaching.Store(false)
		t.detached = false
		t.proc.ResumeReading()
		t.run(t.proc)
		for _, b := range input {
			t.queue(b) // fits: it came from this channel
		}
	}
	p.m.mu.Lock()
	p.m.paused = false
	p.m.mu.Unlock()
}

// Commit forgets the terminals without ending their shells: another
// manager has adopted them. The manager is closed; Close only waits.
func (p *Paused) Commit() {
	p.closePidfds()
	m := p.m
	for _, t := range p.terms { // the successor continues them (TidyRecordings)
		t.rec.close("recording stopped: the server was upgraded")
		t.scr.close()
	}
	m.mu.Lock()
	m.closed = true
	clear(m.terms)
	m.scripts, m.adoptedScripts = "", nil // the successor removes them
	m.mu.Unlock()
	m.hub.Close()
}

// EndRecordings ends the terminals' recordings with a final marker (the
// successor does not carry them on): their buffers are written before an
// exec discards this process's memory.
func (p *Paused) EndRecordings(final string) {
	for _, t := range p.terms {
		t.rec.close(final)
	}
}

// CheckHandover reports whether a manager could adopt h with n descriptors:
// what a new binary checks before its predecessor re-executes into it. It
// restores the hub into a scratch one and starts nothing.
func CheckHandover(h Handover, n, scrollback int) error {
	running := 0
	for _, ht := range h.Terminals {
		if ht.Running {
			running++
			if ht.Pid <= 0 {
				return fmt.Errorf("terminals: hand-over: %s runs without a pid", ht.URI)
			}
		}
	}
	if n != 2*running {
		return fmt.Errorf("terminals: hand-over: %d descriptors for %d running terminals", n, running)
	}
	return hub.New(0).Restore(h.Hub, scrollback)
}

func (p *Paused) closePidfds() {
	for _, fd := range p.pidfds {
		_ = unix.Close(fd)
	}
	p.pidfds = nil
}

// Adopt takes over the terminals of a predecessor's Handover, with the
// descriptors it passed (fds: per running terminal, pty master then pidfd).
// Call it on a new manager, before serving. On error the caller closes
// the descriptors not yet adopted, as told by the count returned.
func (m *Manager) Adopt(h Handover, fds []int) (adopted int, err error) {
	defer m.graceClaims(h) // after the unlock: holders get a grace to reconnect (presence.go)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.terms) != 0 {
		return 0, errors.New("terminals: adopt into a manager in use")
	}
	if err := m.hub.Restore(h.Hub, m.cfg.Scrollback); err != nil {
		return 0, err
	}
	m.adoptedScripts = h.Scripts
	for _, ht := range h.Terminals {
		t := &terminal{m: m, uri: ht.URI, log: m.log.With("terminal", ht.URI), nonce: ht.Nonce, integrated: ht.Integrated,
			live: true, started: make(chan struct{}), ready: make(chan struct{}), rec: &recordTap{}}
		// Its taps: the screen model where it was, the recorder
		// (TidyRecordings continues its recording).
		switch {
		case m.cfg.NoScreenModel:
			t.noScreen = noScreenFlag
		case ht.Screen != nil:
			t.scr = startScreenTap(screen.Restore(*ht.Screen), m.cfg.Scrollback, m.log)
			if !ht.Running {
				t.scr.close() // as at its exit: it answers from its checkpoint
			}
		default:
			t.noScreen = cmp.Or(ht.NoScreen, noScreenHanded)
		}
		for _, tap := range t.taps() {
			m.hub.AddTap(ht.URI, tap)
		}
		opts := shellint.Options{Nonce: ht.Nonce, Mode: ht.Mode, Clock: m.cfg.Clock, RawData: true}
		if ht.Shell != nil {
			t.sh = shellint.Resume(opts, *ht.Shell)
		} else {
			t.sh = shellint.NewProcessor(opts)
		}
		t.titlePinned.Store(ht.TitlePinned)
		close(t.started)
		close(t.ready) // the shell prompted long ago
		if !ht.Running {
			t.finished(ht.ExitCode)
			m.terms[ht.URI] = t
			continue
		}
		if len(fds) < adopted+2 {
			t.scr.close()
			return adopted, fmt.Errorf("terminals: adopt %s: descriptors missing", ht.URI)
		}
		proc, err := pty.Adopt(fds[adopted], fds[adopted+1], ht.Pid, t.log)
		if err != nil {
			t.scr.close()
			return adopted, fmt.Errorf("terminals: adopt %s: %w", ht.URI, err)
		}
		adopted += 2
		_ = proc.Control(func(fd uintptr) {
			if ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ); err == nil {
				t.resized(int(ws.Col), int(ws.Row))
			}
		})
		t.run(proc)
		for _, b := range ht.Input {
			t.enqueueInput(string(b), 1<<30, inputStall)
		}
		m.terms[ht.URI] = t
		m.log.Info("terminal adopted", "terminal", ht.URI, "pid", ht.Pid)
	}
	return adopted, nil
}

// finished makes t a terminal whose process exited before a hand-over:
// state only, nothing runs.
func (t *terminal) finished(code *int) {
	t.proc = pty.Finished(code)
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.writer = ondemand.New(func() {})
	t.writer.Stop()
}

// removeAdoptedScripts removes a predecessor's shell-integration scripts
// once no shell of it is left (at Close).
func (m *Manager) removeAdoptedScripts() {
	for _, dir := range m.adoptedScripts {
		_ = os.RemoveAll(dir)
	}
}
