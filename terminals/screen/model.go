// Package screen keeps a server-side model of a terminal's screen (a
// charmbracelet/x/vt emulator), so that a client joining after the
// scrollback was trimmed, or while a full-screen program runs, can be given
// the exact live screen, and so that previews can show it as text.
//
// The model is fed off the hot path and on demand: Feed only appends to a
// bounded queue, and a goroutine of the model (started by Start, running
// only while there is work and for idleAfter after it) drains it into the
// emulator when someone asks for the screen (a join, a preview) or when
// feedBatch bytes are waiting. Floods thus reach the emulator in big pieces, of which
// fastForward skips what scrolls off, and a terminal with little output
// builds no emulator until someone looks. An idle model keeps a checkpoint
// (its own Snapshot bytes) instead of the emulator, which costs about a
// megabyte at 120×40.
package screen

import (
	"context"
	"sync"
	"time"

	"github.com/termhost/termhost/internal/ondemand"
)

// Bounds of the model.
const (
	// MaxLag is the most output waiting for the emulator. Feed never blocks:
	// while the emulator lags, output is coalesced into the queue; if more
	// than MaxLag bytes would be waiting, the queue is dropped, the emulator
	// restarts blank and the model is marked behind for good (Exact false):
	// joiners then get the plain history, as without a model.
	MaxLag = 8 << 20
	// feedBatch is how much output waits before the model drains it unasked.
	feedBatch = 1 << 20
	// idleAfter: an idle model replaces its emulator with a checkpoint and
	// its goroutine ends. Well before idlemem.Quiet, after which the server
	// gives back what is free: the emulator and the goroutine's stack are
	// then freed already, not kept until a later collection.
	idleAfter = 5 * time.Second
	// maxStarts: command starts queued before the model drains unasked.
	maxStarts = 64
	// tailKeep: the end of the stream kept to find an unfinished escape
	// sequence or character (see carry).
	tailKeep = 4 << 10
)

// Model is the screen of one terminal. Feed, Resize and Mark may be called
// from any goroutine, under another's lock (a hub's): they only queue. The
// model's goroutine (Start) drains them in order.
type Model struct {
	mu     sync.Mutex
	ops    []op  // waiting for the model's goroutine, in order
	lag    int   // data bytes in ops
	starts int   // command starts in ops (see CommandStart)
	fed    int64 // data bytes accepted since New
	behind bool  // output was dropped: the screen is not exact
	// alt: the alternate screen was on after the last drain; draining: drain
	// holds steps taken from ops (see NeedsRedraw).
	alt, draining bool
	// stopped: Close has returned; a request waited for applies the queue
	// to the checkpoint, as the goroutine would, holding caughtUp (an exited terminal's
	// screen still resizes and is read). halted is closed then.
	stopped  bool
	halted   chan struct{}
	caughtUp sync.Mutex
	wake     chan struct{}
	worker   *ondemand.Worker // runs work; nil before Start
	ctx      context.Context  // ends at Close
	cancel   context.CancelFunc

	// The goroutine's own (work's).
	emu        *emulator
	checkpoint []byte
	cols, rows int
	tail       []byte // the last tailKeep bytes of the stream
	// joined: queued output joined for the emulator (one copy, here, instead
	// of one per Feed on the pty's goroutine); kept as long as the emulator.
	joined  []byte
	applied int64 // output bytes applied (or dropped)
	// start: the redraw at the last command start (CommandStart), nil when
	// over budget or resized since; startFed: applied then.
	start    []byte
	startFed int64
	// gaveUp: output took the emulator longer than feedDeadline allows;
	// the model stopped emulating for good (behind, blank screen).
	gaveUp bool
	now    func() time.Time // the clock of the feed deadlines
	// replay: the output applied since New, for a resize to rebuild the
	// screen from (see reflow.go); noReplay: it is not kept (any more).
	// stale: the main screen was resized under the alternate one;
	// unflowed: a change of columns the model could not reflow; cut: the
	// replay starts at a clear, not at New.
	replay                         []byte
	noReplay, stale, unflowed, cut bool
}

// op is one queued step: output, a resize, a snapshot request or a Save.
type op struct {
	data       []string // output, kept as given (the strings are immutable)
	cols, rows int
	reply      chan State
	save       chan Saved // a Save
	text       bool       // with reply: the lines only, no redraw (a preview)
	start      bool       // a command starts here (CommandStart)
	skip       bool       // with start: no request reads it (skipStarts)
	reset      bool       // the queue overflowed: start over blank
	dropped    int64      // with reset: the output bytes dropped
}

// State is the screen at one point of the stream.
type State struct {
	Cols, Rows int
	AltScreen  bool
	// Exact is false once output was dropped (see MaxLag).
	Exact bool
	// Fed is the number of output bytes the screen reflects.
	Fed int64
	// Redraw reproduces the screen when written after the stream so far
	// (see Snapshot); nil for a preview (Peek) and when OverBudget.
	Redraw []byte
	// OverBudget: the redraw would be larger than RedrawBudget, so none
	// was built; a joiner gets the history alone.
	OverBudget bool
	// Start is the redraw of the screen where the last command started
	// (CommandStart), nil if none, over budget or resized since; SinceStart
	// the output bytes since then. Written before what the command printed,
	// it draws the screen too. Nil for a preview.
	Start      []byte
	SinceStart int64
	// Lines is the screen as text, one string per row, trailing blanks trimmed.
	Lines []string
}

// New returns a model of a cols×rows screen. Start must be called for it
// to make progress. A screen over MaxCells is clamped and the model is behind.
func New(cols, rows int) *Model {
	c, r, ok := fit(cols, rows)
	return &Model{wake: make(chan struct{}, 1), halted: make(chan struct{}), cols: c, rows: r, behind: !ok, now: time.Now}
}

// Feed queues output. It never blocks.
func (m *Model) Feed(data string) {
	if m == nil || data == "" {
		return
	}
	m.mu.Lock()
	m.fed += int64(len(data))
	if m.lag+len(data) > MaxLag {
		m.overflowLocked(data)
	} else {
		if n := len(m.ops); n > 0 && m.ops[n-1].data != nil {
			m.ops[n-1].data = append(m.ops[n-1].data, data)
		} else {
			m.ops = append(m.ops, op{data: []string{data}})
		}
		m.lag += len(data)
	}
	full := m.lag >= feedBatch && !m.stopped
	m.mu.Unlock()
	if full {
		m.signal()
	}
}

// overflowLocked drops the queued output (requests stay, in order).
func (m *Model) overflowLocked(data string) {
	kept, dropped := m.ops[:0], int64(m.lag)+int64(len(data))
	for _, o := range m.ops {
		if o.data == nil {
			kept = append(kept, o)
		}
	}
	m.ops = append(kept, op{reset: true, dropped: dropped})
	m.lag = 0
	m.behind = true
}

// Resize queues a change of the screen's size. It waits, like output, for
// the next drain; a resize right after another replaces it. A size over
// MaxCells is clamped and marks the model behind for good: its work and
// memory stay bounded, and joiners get the history alone.
func (m *Model) Resize(cols, rows int) {
	if m == nil || cols < 1 || rows < 1 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cols, rows, ok := fit(cols, rows)
	m.behind = m.behind || !ok
	o := op{cols: cols, rows: rows}
	switch n := len(m.ops); {
	case n > 0 && m.ops[n-1].isResize():
		m.ops[n-1] = o
	default:
		m.ops = append(m.ops, o)
	}
}

// Fed is the number of output bytes accepted so far.
func (m *Model) Fed() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fed
}

// NeedsRedraw reports whether a client given the newest scrollback bytes
// of the output so far may not see the screen from them alone: more than
// that was output, or the alternate screen is (or may be) on. It looks at
// the waiting output instead of emulating it, so that a client joining a
// quiet terminal builds no emulator.
func (m *Model) NeedsRedraw(scrollback int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.behind {
		return false // no exact screen to give
	}
	if m.fed > scrollback || m.alt || m.draining {
		return true
	}
	for _, o := range m.ops {
		for _, d := range o.data {
			if mayToggleAltScreen(d) {
				return true
			}
		}
	}
	return false
}

// Mark queues a snapshot request behind everything fed so far: its State
// is the screen at exactly that point of the stream, with its Redraw. It
// only queues, whatever the model's state: the work is the model's
// goroutine's, or, once the model is closed, the waiter's (Pending.Wait).
func (m *Model) Mark() *Pending { return m.mark(false) }

// Peek is Mark without the redraw: the screen as text, for previews.
func (m *Model) Peek() *Pending { return m.mark(true) }

func (m *Model) mark(text bool) *Pending {
	reply := make(chan State, 1)
	m.enqueue(op{reply: reply, text: text})
	return &Pending{m: m, reply: reply}
}

func (o op) isResize() bool { return o.cols > 0 }

// CommandStart notes that a command starts at this point of the stream:
// the model keeps the redraw of the screen there (State.Start), so that a
// joiner can be given the screen before the command's whole output instead
// of after it. It wakes the model only when many are queued (each queued
// one is a step to keep; a drain builds the last one's redraw only).
func (m *Model) CommandStart() {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return
	}
	m.ops = append(m.ops, op{start: true})
	m.starts++
	full := m.starts >= maxStarts
	m.mu.Unlock()
	if full {
		m.signal()
	}
}

// skipStarts marks the command starts no request will read: those followed
// by another before any request. Each kept one costs a redraw.
func skipStarts(ops []op) {
	later := false
	for i := len(ops) - 1; i >= 0; i-- {
		switch {
		case ops[i].reply != nil || ops[i].save != nil:
			later = false
		case ops[i].start:
			ops[i].skip, later = later, true
		}
	}
}

// Pending is a queued snapshot request.
type Pending struct {
	m     *Model
	reply chan State
}

// Wait returns the State once the model has reached the request, or false
// when ctx ends first (the model is too slow, or was never started). Once
// the model is closed, Wait applies what is queued itself.
func (p *Pending) Wait(ctx context.Context) (State, bool) {
	select {
	case s := <-p.reply:
		return s, true
	case <-p.m.halted:
		// The goroutine answered every request it took before Close: the rest,
		// this one included, is still queued.
		p.m.catchUp()
		return <-p.reply, true
	case <-ctx.Done():
		return State{}, false
	}
}

func (m *Model) enqueue(o op) {
	m.mu.Lock()
	m.ops = append(m.ops, o)
	m.mu.Unlock()
	m.signal()
}

// catchUp applies what a stopped model has queued, as work would (not
// under mu: a Feed, Resize or Mark never waits for the emulator), and keeps
// only the checkpoint.
func (m *Model) catchUp() {
	m.caughtUp.Lock()
	defer m.caughtUp.Unlock()
	m.drain()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropEmulator()
}

// noteAlt keeps whether the emulator is on the alternate screen (mu held).
func (m *Model) noteAlt() {
	if m.emu != nil {
		m.alt = m.emu.vt.IsAltScreen()
	}
}

func (m *Model) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
	if m.worker != nil {
		m.worker.Kick()
	}
}

// Start lets the model make progress: from now on a goroutine of its own
// applies queued steps when signalled, and ends when idleAfter has passed
// without a signal (the emulator then gives way to a checkpoint), so an
// idle terminal's model holds no goroutine. Call it once, before the model
// is shared; Close ends it.
func (m *Model) Start() {
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.worker = ondemand.New(m.work)
	if len(m.wake) > 0 { // signalled before Start
		m.worker.Kick()
	}
}

// work applies queued steps until idleAfter passes without a signal. A
// run kicked by a signal that an earlier run took returns at once, so the
// goroutine ends idleAfter after the last step, not twice that.
func (m *Model) work() {
	select {
	case <-m.wake:
		m.drain()
	default:
		return
	}
	idle := time.NewTimer(idleAfter)
	defer idle.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-idle.C:
			m.dropEmulator()
			return
		case <-m.wake:
			m.drain()
			idle.Reset(idleAfter)
		}
	}
}

// Close ends the model's goroutine, waits for it and then hands the model
// over to its callers (see stop).
func (m *Model) Close() {
	m.cancel()
	m.worker.Stop()
	m.stop()
}

// stop hands the model over to its callers: what is queued stays queued
// until someone asks for the screen (a disposed terminal's never is).
func (m *Model) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopped = true
	m.dropEmulator()
	close(m.halted)
}

// drain applies the steps queued now (not those queued meanwhile: they
// wait for their own signal, so that output reaches the emulator in
// batches).
func (m *Model) drain() {
	m.mu.Lock()
	ops := m.ops
	m.ops, m.lag, m.starts = nil, 0, 0
	behind := m.behind
	m.draining = len(ops) > 0
	m.mu.Unlock()
	if len(ops) == 0 {
		return
	}
	// Answers go out once the drain is over, so that whoever got one sees
	// the model as it left it (NeedsRedraw).
	var answers []func()
	skipStarts(ops)
	for _, o := range ops {
		if o.reply != nil {
			st, reply := m.state(behind, o.text), o.reply
			answers = append(answers, func() { reply <- st })
			continue
		}
		if o.save != nil {
			s, reply := m.save(behind), o.save
			answers = append(answers, func() { reply <- s })
			continue
		}
		m.apply(o, behind)
	}
	m.mu.Lock()
	m.noteAlt()
	m.draining = false
	m.behind = m.behind || m.gaveUp
	m.mu.Unlock()
	for _, answer := range answers {
		answer()
	}
}

func (m *Model) apply(o op, behind bool) {
	switch {
	case o.reset:
		if m.emu != nil {
			m.emu.close()
		}
		m.emu, m.joined, m.checkpoint, m.tail, m.start = nil, nil, nil, nil, nil
		m.dropReplay()
		m.applied += o.dropped
	case o.data != nil && m.gaveUp:
		for _, d := range o.data {
			m.applied += int64(len(d))
		}
	case o.data != nil:
		b := m.joined[:0]
		for _, d := range o.data {
			b = append(b, d...)
		}
		e := m.emulator()
		e.deadline = feedDeadline(m.now(), len(b))
		e.feed(b)
		e.deadline = time.Time{}
		m.applied += int64(len(b))
		if e.overrun {
			m.giveUp()
			break
		}
		m.keepTail(b)
		m.keepReplay(b)
		m.joined = b
		m.afterOutput()
	case o.reply != nil:
		o.reply <- m.state(behind, o.text)
	case o.start:
		if !o.skip {
			m.start, _ = m.emulator().snapshot(carry(m.tail))
			m.startFed = m.applied
		}
	default:
		if o.cols != m.cols || o.rows != m.rows {
			// The output since the command start was printed at two sizes: no
			// redraw of the start, written at the new size, leads to the screen.
			m.start = nil
		}
		m.resize(o.cols, o.rows)
	}
}

// giveUp stops emulating for good: output costs the emulator too much.
func (m *Model) giveUp() {
	m.emu.close()
	m.emu, m.joined, m.checkpoint, m.tail, m.start = nil, nil, nil, nil, nil
	m.dropReplay()
	m.gaveUp = true
}

// state is the screen at this point of the stream; text: no redraw.
func (m *Model) state(behind, text bool) State {
	e := m.emulator()
	alt := e.vt.IsAltScreen()
	// unflowed: the main screen is not what xterm.js shows; the alternate
	// one, which xterm.js does not reflow, is.
	st := State{Cols: m.cols, Rows: m.rows, AltScreen: alt, Exact: !behind && !m.gaveUp && (alt || !m.unflowed),
		Fed: m.applied, Lines: e.lines()}
	if !text {
		redraw, ok := e.snapshot(carry(m.tail))
		st.Redraw, st.OverBudget = redraw, !ok
		st.Start, st.SinceStart = m.start, m.applied-m.startFed
	}
	return st
}

// keepTail keeps the end of the stream for carry.
func (m *Model) keepTail(b []byte) {
	if len(b) >= tailKeep {
		m.tail = append(m.tail[:0], b[len(b)-tailKeep:]...)
		return
	}
	if over := len(m.tail) + len(b) - tailKeep; over > 0 {
		m.tail = append(m.tail[:0], m.tail[over:]...)
	}
	m.tail = append(m.tail, b...)
}

// emulator returns the live emulator, restoring it from the checkpoint.
func (m *Model) emulator() *emulator {
	if m.emu == nil {
		m.emu = newEmulator(m.cols, m.rows)
		m.emu.now = m.now
		if m.checkpoint != nil {
			m.emu.write(m.checkpoint)
			m.checkpoint = nil
		}
	}
	return m.emu
}

// dropEmulator keeps a checkpoint of the screen and frees the emulator.
// The checkpoint restores what Snapshot reproduces (see there for what it
// does not). A screen whose redraw is over budget keeps its emulator (its
// memory is bounded by MaxCells).
func (m *Model) dropEmulator() {
	if m.emu == nil {
		return
	}
	checkpoint, ok := m.emu.snapshot(nil)
	if !ok {
		return
	}
	m.checkpoint = checkpoint
	m.emu.close()
	m.emu, m.joined = nil, nil
}
