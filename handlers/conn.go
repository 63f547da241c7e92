package handlers

import (
	"context"
	"errors"
	"log/slog"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/internal/lockrank"
	"github.com/termhost/termhost/internal/ondemand"
	"github.com/termhost/termhost/terminals"
)

// Close codes of our own (4000–4999).
const (
	closeSlowConsumer = websocket.StatusCode(4001) // queue overflow, or unsent answers over a budget: reconnect to resume
	closeRevoked      = websocket.StatusCode(4003) // the share link was revoked or expired: do not retry
	closeTooMany      = websocket.StatusCode(4029) // too many connections of the participant or address: retry later
	closeRoleLowered  = websocket.StatusCode(4004) // the person's role was lowered or taken away: reconnect
)

// conn is one WebSocket speaking JSON-RPC. One reader (read, a goroutine at
// a time) handles every inbound message in order; a writer, on a goroutine
// only while frames are queued, drains the bounded outbound queue and
// performs every close; a timer pings to keep proxies awake.
type conn struct {
	s   *Server
	ws  *websocket.Conn
	log *slog.Logger

	// ctx ends when the writer has closed the socket (or failed); the
	// reader ends when the socket closes.
	ctx      context.Context
	cancel   context.CancelCauseFunc
	writer   *ondemand.Worker // runs send while frames or a close are queued
	watchdog *time.Timer      // bounds the frame write in flight (writeLoop)
	finish   func(error)      // the reader's, at the end (start)

	mu        lockrank.Mutex[lockrank.Leaf]
	queue     []outFrame
	queued    int                  // bytes counted for the frames in queue and held
	drained   chan struct{}        // see Drained; nil when nobody waits
	closeCode websocket.StatusCode // set once: the writer closes with it
	closeText string
	dropped   bool          // evicted: queued frames were discarded
	holding   bool          // see Hold
	held      []outFrame    // envelopes delivered while holding
	answering int           // bytes of answers queued and not yet sent (budget.go)
	answered  chan struct{} // see awaitAnswers; nil when the reader does not wait
	part      *participant  // whose budgets this connection uses; nil if refused at accept
	// kicksHeld: the reader is dispatching a keystroke, and signal leaves
	// waking the writer to it (kickOwed), so that the keystroke's
	// confirmation can be written on the reader's goroutine (writeHeld).
	kicksHeld, kickOwed bool

	// pacedWaiting: DeliverPaced queued frames the writer was not woken
	// for (joinoutput.go).
	pacedWaiting bool

	// Protocol state: written by the reader before any subscription exists,
	// so the hub's reads under its lock happen after.
	initialized bool
	clientID    string
	version     string
	shape       ahp.Shape
	binary      bool // terminal output as binary data messages (ext.CapabilityBinaryData)

	// Access, fixed at accept.
	role       string // auth.RoleOwner, auth.RoleDriver or auth.RoleViewer
	principal  string // principal.ID(): the clientId is bound to it
	scope      string // the one terminal a share link grants, or ""
	shareID    string
	publicBase string       // for share URLs
	person     string       // the SSO identity, or "" (sso.go)
	name       string       // the SSO display name
	remote     string       // the client's address, for the audit trail
	presence   connPresence // how others see it (presence.go)
	// The connection's audited connect: its time and terminal, written
	// once (recordConnect).
	connectedAt time.Time
	connectedTo string
	connectOnce sync.Once
	// lowered: the person's role was lowered since accept (applyRoles):
	// every request is refused until the writer closes the connection.
	lowered atomic.Bool
	// inputPaused: the reader waits for room for input (awaitInput), as
	// it has inputPauses times; a ping unanswered meanwhile proves nothing
	// (its pong waits, unread, behind the paste).
	inputPaused, inputPauses atomic.Int64
	// drivers holds a driver's input waiting for an approval
	// (approvedrivers.go, --approve-drivers).
	drivers driverGate
}

func newConn(s *Server, ws *websocket.Conn, remote string) *conn {
	c := &conn{s: s, ws: ws, log: s.log.With("remote", remote)}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	c.writer = ondemand.New(c.writeLoop)
	// One timer bounds every frame write: past WriteTimeout it closes the
	// socket, which fails the write. (A context per frame costs a timer and,
	// inside coder/websocket, a callback registration for every frame.)
	c.watchdog = time.AfterFunc(time.Hour, func() { _ = c.ws.CloseNow() })
	c.watchdog.Stop()
	return c
}

// outFrame is a queued frame: an envelope the hub shares with other
// connections, encoded by the writer, or an answer of our own.
type outFrame struct {
	env  *terminals.Frame
	raw  []byte
	skip *skipAhead // skip.go
	size int
	// answer marks a frame counted in the participant's unsent answers.
	answer bool
}

// Shape, Scope, ClientID, ViewOnly, Hold, Deliver, Backlog and Drained make
// conn a terminals.Subscriber; SkipAhead (skip.go) a hub.Skipper.
func (c *conn) Shape() ahp.Shape { return c.shape }
func (c *conn) Scope() string    { return c.scope }
func (c *conn) ClientID() string { return c.clientID }
func (c *conn) ViewOnly() bool   { return c.role == auth.RoleViewer }
func (c *conn) Backlog() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queued
}

// Drained returns a channel the writer closes once the backlog is below
// terminals.LowWater, or the connection closes: a terminal paused for this
// connection (its claim holder) waits on it instead of polling.
func (c *conn) Drained() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drained == nil {
		c.drained = make(chan struct{})
	}
	ch := c.drained
	c.signalDrainedLocked()
	return ch
}

// signalDrainedLocked wakes the waiters of Drained when the backlog is low
// or the connection is closing.
func (c *conn) signalDrainedLocked() {
	if c.drained != nil && (c.queued < terminals.LowWater || c.closeCode != 0) {
		close(c.drained)
		c.drained = nil
	}
}

// Deliver queues a frame without blocking. Past the queue bound, terminal
// output is refused: the hub then has the connection skip ahead (skip.go).
// Any other frame past the bound evicts the connection: its queue is
// dropped, the writer closes it with 4001 and the client recovers by
// reconnecting (replay or snapshot).
func (c *conn) Deliver(f *terminals.Frame) bool { return c.deliver(f, true) }

// deliver is Deliver; wake false leaves the writer asleep (DeliverPaced).
func (c *conn) deliver(f *terminals.Frame, wake bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := outFrame{env: f, size: f.Size()}
	if c.holding {
		// A subscribe or reconnect answer is being prepared: envelopes after
		// its snapshot wait so that they reach the client after the answer.
		c.held = append(c.held, out)
		return c.enqueueLocked(out, false)
	}
	if c.closeCode == 0 && c.queued+out.size > c.s.cfg.SendQueue && f.Skippable() {
		return false
	}
	if !wake {
		return c.enqueuePacedLocked(out)
	}
	return c.enqueueLocked(out, true)
}

// enqueueLocked accounts for a frame and, if add, appends it to the queue.
func (c *conn) enqueueLocked(f outFrame, add bool) bool {
	if c.closeCode != 0 {
		return false
	}
	if c.queued+f.size > c.s.cfg.SendQueue {
		c.evictLocked()
		return false
	}
	c.queued += f.size
	if add {
		c.queue = append(c.queue, f)
		c.pacedWaiting = false
		c.signal()
	}
	return true
}

// evictLocked closes a connection that fell behind and cannot skip ahead.
func (c *conn) evictLocked() {
	c.s.metrics.evictions.Inc()
	c.log.Info("evicting slow subscriber", "client", ahp.Clip(c.clientID), "queued", c.queued)
	c.closeLocked(closeSlowConsumer, "too slow: reconnect to resume", true)
}

// Hold makes Deliver keep envelopes back until answer queues a response
// ahead of them. The hub calls it, under its lock, when it takes the
// snapshot of a subscribe, initialize or reconnect, so envelopes after the
// snapshot reach the client after the answer that carries it.
func (c *conn) Hold() {
	c.mu.Lock()
	c.holding = true
	c.mu.Unlock()
}

// answer queues a response or notification of our own, then the envelopes
// held since Hold.
func (c *conn) answer(frame []byte) {
	c.mu.Lock()
	ok := c.enqueueLocked(outFrame{raw: frame, size: len(frame), answer: true}, true)
	if over := ""; ok {
		// Still under c.mu: the writer cannot have sent it yet.
		if over = c.holdAnswer(len(frame)); over != "" {
			c.s.metrics.overBudget.WithLabelValues("answers").Inc()
			c.log.Info("closing: "+over, "client", ahp.Clip(c.clientID), "who", c.who())
			c.closeLocked(closeSlowConsumer, over, true)
			ok = false
		}
	}
	if c.holding {
		c.holding = false
		if ok && c.closeCode == 0 {
			c.queue = append(c.queue, c.held...)
			c.signal()
		}
		c.held = nil
	}
	c.mu.Unlock()
	if !ok {
		// Evicted: stop delivering to it (the reader calls this, never under
		// the hub lock, and c.mu is released: Deliver takes them in that order).
		c.s.m.UnsubscribeAll(c)
	}
}

// loggedClient is the clientId for a log line of the writer, which runs
// beside the reader that sets it (begin).
func (c *conn) loggedClient() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ahp.Clip(c.clientID)
}

// signal has the writer send what is queued; c.mu held.
func (c *conn) signal() {
	if c.kicksHeld {
		c.kickOwed = true
		return
	}
	c.writer.Kick()
}

// Inline writes (writeHeld): at most this much, all of it queued while the
// reader dispatched a keystroke.
const (
	inlineFrames = 4
	inlineBytes  = 4 << 10
)

// holdKicks makes signal leave the writer's wake-up to writeHeld, which
// the reader calls right after a dispatch of terminal/input that does not
// block (the hub's Deliver never does).
func (c *conn) holdKicks() {
	c.mu.Lock()
	c.kicksHeld = true
	c.mu.Unlock()
}

// writeHeld ends holdKicks. What was queued meanwhile (the confirmation of
// the keystroke to its dispatcher, which docs/protocol.md requires) is
// written here, on the reader's goroutine, when no writer goroutine runs
// and it is small: waking a writer goroutine for it cost a goroutine start,
// a thread's wake-up and a core taken from the program that echoes the
// keystroke (docs/BENCHMARKS.md, "Where a keystroke's echo goes"). Order
// holds: the frames leave the queue in order, and while the reader holds
// the writer's claim no writer goroutine runs; what is queued meanwhile is
// written by one started when the claim ends. Otherwise the writer is woken
// as signal would have.
func (c *conn) writeHeld() {
	c.mu.Lock()
	c.kicksHeld = false
	owed := c.kickOwed
	c.kickOwed = false
	n := len(c.queue)
	inline := n > 0 && n <= inlineFrames && c.queued <= inlineBytes && c.closeCode == 0
	c.mu.Unlock()
	switch {
	case !owed:
		return
	case !inline || !c.writer.TryClaim():
		c.writer.Kick()
		return
	}
	mark("writer inline")
	for ; n > 0 && c.ctx.Err() == nil; n-- {
		c.mu.Lock()
		if len(c.queue) == 0 || c.closeCode != 0 {
			c.mu.Unlock()
			break
		}
		f := c.popLocked()
		c.mu.Unlock()
		if !c.send(f) {
			break
		}
	}
	c.mu.Lock()
	if len(c.queue) > 0 || c.closeCode != 0 {
		c.writer.Kick() // runs once the claim ends
	}
	c.mu.Unlock()
	c.writer.Release()
}

// closeWith asks the writer to send what is queued and close the socket with
// code; the first request wins.
func (c *conn) closeWith(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked(code, reason, false)
}

// closeLocked records the close; drop discards the queue (eviction), so only
// the frame in flight is finished before the close frame.
func (c *conn) closeLocked(code websocket.StatusCode, reason string, drop bool) {
	if c.closeCode == 0 {
		c.closeCode, c.closeText = code, reason
	}
	if drop {
		c.queue, c.queued, c.dropped = nil, 0, true
		c.releaseAnswersLocked(c.answering)
	}
	c.signalDrainedLocked() // a closing connection paces nobody
	c.signalAnsweredLocked()
	c.signal()
}

// start runs the connection: the server's shutdown and the pings as
// callbacks, the reader on a goroutine, none while frames are not queued
// for the writer; end runs, last to first, once it has ended.
func (c *conn) start(end []func()) {
	shutdownDone := make(chan struct{})
	stopShutdown := context.AfterFunc(c.s.ctx, func() {
		defer close(shutdownDone)
		if c.s.restarting.Load() {
			c.closeWith(websocket.StatusServiceRestart, "service restart")
		} else {
			c.closeWith(websocket.StatusGoingAway, "server shutting down")
		}
	})
	stopPings := c.startPings()
	c.finish = func(err error) {
		switch {
		case errors.Is(err, errUnsupportedVersion):
			c.closeWith(websocket.StatusPolicyViolation, "unsupported protocol version")
		case errors.Is(err, websocket.ErrMessageTooBig):
			c.log.Warn("closed: inbound message over the limit", "limit", c.s.cfg.MaxFrame, "client", ahp.Clip(c.clientID))
		case errors.Is(err, errBinaryFrame):
			c.log.Info("closed: binary frame", "client", ahp.Clip(c.clientID))
			c.closeWith(websocket.StatusUnsupportedData, "binary frames are not supported: send JSON-RPC as text")
		default:
			c.log.Debug("connection closed", "client", ahp.Clip(c.clientID), "err", err)
		}
		c.closeWith(websocket.StatusNormalClosure, "")
		<-c.ctx.Done()       // the writer has closed the socket
		if !stopShutdown() { // the server is shutting down: wait for the callback
			<-shutdownDone
		}
		stopPings()
		c.writer.Stop()
		c.watchdog.Stop()
		c.mu.Lock()
		c.releaseAnswersLocked(c.answering) // what a failed write left queued
		c.mu.Unlock()
		c.s.m.UnsubscribeAll(c)
		if c.initialized {
			// 1000 from the client: it left on purpose (attach detached, a tab signed out).
			c.s.forget(c.clientID, websocket.CloseStatus(err) == websocket.StatusNormalClosure)
			c.s.controlLeft(c.clientID)
		}
		c.drivers.close() // approved input being fed ends with c.ctx
		c.s.approvalsLeft(c)
		c.s.hostsLeft(c)
		for i := len(end) - 1; i >= 0; i-- {
			end[i]()
		}
	}
	go c.read()
}

// errBinaryFrame ends a connection that sent a binary message: AHP is JSON
// text, so it is refused (1003) rather than parsed.
var errBinaryFrame = errors.New("binary frame")

// read handles the next inbound message, then goes on on a new goroutine,
// in order: handling one grows the stack (dispatch, encoding, the hub) to
// 8 KiB or more, which the runtime keeps while the reader waits for the
// next message deep in coder/websocket; a fresh goroutine waits with 4 KiB,
// an idle tab's largest part. One goroutine start per message.
func (c *conn) read() {
	if err := c.readOne(); err != nil {
		c.finish(err)
		return
	}
	c.awaitAnswers()
	go c.read()
}

func (c *conn) readOne() error {
	// Not c.ctx: cancelling a Read closes the socket without a close code.
	typ, data, err := c.ws.Read(context.Background())
	if err != nil {
		return err
	}
	if typ != websocket.MessageText {
		return errBinaryFrame
	}
	c.s.metrics.bytesIn.Add(float64(len(data)))
	mark("message read")
	return c.handle(data)
}

// writeLoop writes the queued frames in order and returns once the queue is
// empty (the writer's work); once asked to close, it sends what is queued,
// closes the socket and ends c.ctx, as it does when a write fails.
func (c *conn) writeLoop() {
	if c.ctx.Err() != nil {
		return // closed
	}
	mark("writer running")
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.queue = nil
			code, reason := c.closeCode, c.closeText
			c.mu.Unlock()
			if code != 0 {
				_ = c.ws.Close(code, reason)
				c.cancel(errors.New("closed"))
			}
			return
		}
		f := c.popLocked()
		c.mu.Unlock()
		if !c.send(f) {
			return
		}
	}
}

// popLocked takes the first queued frame; c.mu held, the queue not empty.
func (c *conn) popLocked() outFrame {
	f := c.queue[0]
	c.queue[0] = outFrame{} // the array may outlive the frame
	c.queue = c.queue[1:]
	return f
}

// send writes a frame taken from the queue and counts it as sent; false:
// the write failed, the socket is closed and c.ctx ended. Only the writer's
// claim holder calls it (writeLoop, writeHeld).
func (c *conn) send(f outFrame) bool {
	writeTimeout := c.s.cfg.WriteTimeout
	writeAs := func(typ websocket.MessageType, frames ...[]byte) bool {
		for _, frame := range frames {
			c.watchdog.Reset(writeTimeout)
			err := c.ws.Write(context.Background(), typ, frame)
			c.watchdog.Stop()
			if err != nil {
				c.log.Debug("write failed", "client", c.loggedClient(), "err", err)
				_ = c.ws.CloseNow()
				return false
			}
			c.s.metrics.bytesOut.Add(float64(len(frame)))
			mark("frame written")
		}
		return true
	}
	write := func(frames ...[]byte) bool { return writeAs(websocket.MessageText, frames...) }
	var ok bool
	switch {
	case f.skip != nil:
		ok = write(c.skipFrames(f.skip)...) // may wait for the screen model
	case f.env != nil:
		// Shared envelopes are encoded here, outside the hub lock (only
		// delivered after initialize has set the shape).
		if bin := c.binaryOf(f.env); bin != nil {
			// Output queued behind it goes in the same message (joinoutput.go).
			if more, size := c.joinOutput(f.env, bin); len(more) > 0 {
				msg, put := joinedMessage(bin, more)
				ok = writeAs(websocket.MessageBinary, msg)
				put()
				f.size += size
			} else {
				ok = writeAs(websocket.MessageBinary, bin)
			}
		} else {
			ok = write(f.env.Bytes(c.shape))
		}
	default:
		ok = write(f.raw)
	}
	if !ok {
		c.cancel(errors.New("write failed"))
		return false
	}
	c.mu.Lock()
	if !c.dropped {
		c.queued -= f.size
		c.signalDrainedLocked()
		if f.answer {
			c.releaseAnswersLocked(f.size)
		}
	}
	c.mu.Unlock()
	return true
}

// mark notes a step of a message's way in an execution trace, when one is
// being written (`termhost serve --debug-trace`; docs/BENCHMARKS.md).
func mark(step string) {
	if trace.IsEnabled() {
		trace.Log(context.Background(), "termhost", step)
	}
}

// binaryOf is f as a binary data message when this client asked for them
// and f is terminal output, else nil.
func (c *conn) binaryOf(f *terminals.Frame) []byte {
	if !c.binary {
		return nil
	}
	return f.Binary()
}

// startPings pings the peer every PingInterval from a timer callback (a
// goroutine only while a ping waits for its pong); a ping unanswered within
// the interval closes the socket. The returned stop, called once after c.ctx
// has ended, waits for a ping in flight.
func (c *conn) startPings() (stop func()) {
	interval := c.s.cfg.PingInterval
	var (
		mu       lockrank.Mutex[lockrank.Leaf] // orders re-arming against stop
		inFlight sync.WaitGroup
		timer    *time.Timer
	)
	inFlight.Add(1)
	timer = time.AfterFunc(interval, func() {
		defer inFlight.Done()
		pauses, paused := c.inputPauses.Load(), c.inputPaused.Load() > 0
		ctx, cancel := context.WithTimeout(c.ctx, interval)
		err := c.ws.Ping(ctx)
		cancel()
		// Only the reader takes a pong in: while it waits for room for
		// input, a live peer's pong is not read either.
		if err != nil && (paused || c.inputPaused.Load() > 0 || c.inputPauses.Load() != pauses) {
			err = nil
		}
		if err != nil {
			if c.ctx.Err() == nil {
				// No clientID here: the read loop sets it while pings run.
				c.log.Info("websocket ping failed", "err", err)
				_ = c.ws.CloseNow()
			}
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if c.ctx.Err() == nil {
			inFlight.Add(1)
			timer.Reset(interval)
		}
	})
	return func() {
		mu.Lock()
		if timer.Stop() { // armed, not fired: its Done is ours to call
			inFlight.Done()
		}
		mu.Unlock()
		inFlight.Wait()
	}
}
