package terminals

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/idlemem"
	"github.com/termhost/termhost/internal/ondemand"
	"github.com/termhost/termhost/terminals/csibound"
	"github.com/termhost/termhost/terminals/hub"
	"github.com/termhost/termhost/terminals/pty"
	"github.com/termhost/termhost/terminals/shellint"
)

// Coalescing bounds for terminal/data: output is joined for at most 5 ms
// (the window VS Code's pty host batches with) or 64 KiB.
const (
	coalesceWindow = 5 * time.Millisecond
	coalesceBytes  = 64 << 10
	readBuffer     = 32 << 10
	// Keystroke echo: when the pty has nothing more to read and a keystroke
	// (an input of at most keystrokeBytes) was written in the last
	// echoWindow, pending output up to echoBytes (its echo) is sent at once
	// instead of waiting out the coalescing window. Once per keystroke, so
	// what a command prints after Enter is batched as before.
	keystrokeBytes = 8
	echoWindow     = 50 * time.Millisecond
	echoBytes      = 1 << 10
	// inputChunk: small inputs queued behind others are joined into
	// chunks of up to this many bytes, so that the queue's memory is its
	// bytes (Config.InputQueue), not one allocation per keystroke.
	inputChunk = 64 << 10
	// inputStall bounds how long input waits for a program that takes
	// nothing from a full input queue (Config.InputStall): a paste into a
	// program that reads, however slowly, never meets it; one that has
	// stopped reading (stopped, blocked elsewhere) has its input refused.
	inputStall = 30 * time.Second
	drainQuiet = 50 * time.Millisecond // after exit: stop when the pty is quiet this long
	drainMax   = time.Second
	// inputHold bounds how long input typed into a new shell with
	// integration waits for its first prompt (Config.InputHold). A shell
	// prompts within milliseconds unless its start-up files are slow, and
	// then keys typed at once would be echoed by the terminal out of place
	// (or dropped by the shell): held, they wait for the prompt, while the
	// browser says the shell is starting. Past it the input goes in
	// anyway, so a start-up file that asks a question gets its answer.
	inputHold = 5 * time.Second
)

// terminal is one shell on a pty publishing to its hub channel. Its reader
// (read.go) is the only reader of the pty: one goroutine at a time, none
// while the pty is quiet (the shared watcher waits for its output); a
// writer goroutine, running only while input is queued, feeds keyboard
// input so a shell that does not read never blocks a client.
type terminal struct {
	m    *Manager
	uri  string
	log  *slog.Logger
	proc *pty.Process
	sh   *shellint.Processor // the reader only
	// bound rewrites the counts of costly escape sequences in the output
	// (the reader only), by size: the terminal's size and the one before
	// its last resize (see sizes).
	bound csibound.Rewriter
	size  atomic.Uint64

	input   inputQueue
	queued  atomic.Int64     // bytes of input waiting for the writer
	writer  *ondemand.Worker // runs write while input is queued
	readyBy time.Time        // input waits for ready until then at most (Config.InputHold)
	ctx     context.Context
	cancel  context.CancelFunc // stops the writer (exit or dispose) and the reader (dispose)
	wg      sync.WaitGroup     // the reader

	// ready is closed once the shell is reading input: by the reader at its
	// first prompt when shell integration was injected (shells may discard
	// typeahead while they set up the terminal), at once for anything else.
	// Input typed before then waits for it, until readyBy at most. Without
	// integration no sign tells when a program reads: a command such as cat
	// may print nothing until it is given input, so its input never waits.
	ready      chan struct{}
	integrated bool

	started     chan struct{} // closed by Create once the channel exists
	keystroke   atomic.Int64  // unix ns of the last keystroke-sized input written, 0 once echoed
	titlePinned atomic.Bool   // a client renamed the terminal: ignore the shell's titles

	live bool // guarded by Manager.mu: created and not disposed

	inputs lastInputs // presence.go

	// Taps on the terminal's hub channel (hub.Tap), fed by the hub.
	rec *recordTap // recordtap.go
	scr *screenTap // screentap.go; nil: no model, for the reason in noScreen
	// noScreen says why t has no screen model (Screen's error).
	noScreen string

	agent agentSlot // agent.go

	secret atomic.Bool // the program waits for a secret (secret.go)

	nonce     string      // shell integration's, for a hand-over
	detaching atomic.Bool // a hand-over: the reader stops at its next deadline
	detached  bool        // the reader stopped for a hand-over (read after wg.Wait)

	// nonceFile handed the nonce to the shell, whose script empties it; the
	// reader deletes it once the shell is up or has ended.
	nonceFile string
}

// start spawns the shell and its goroutines.
func (t *terminal) start(spec pty.Spec) error {
	spec.Logger = t.log
	proc, err := pty.Start(spec)
	if err != nil {
		return err
	}
	t.started = make(chan struct{})
	t.ready = make(chan struct{})
	if !t.integrated {
		close(t.ready)
	}
	t.run(proc)
	return nil
}

// run starts the reader of the process (t.wg counts it until its end,
// parked or not) and readies the writer.
func (t *terminal) run(proc *pty.Process) {
	t.proc = proc
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.writer = ondemand.New(t.write)
	t.readyBy = time.Now().Add(t.m.cfg.InputHold)
	t.wg.Add(1)
	go t.read()
}

// queue puts b, counted in queued already, on the input queue for the
// writer, whatever its length.
func (t *terminal) queue(b []byte) {
	t.input.push(string(b))
	t.writer.Kick()
}

// inputResult is what enqueueInput did with an input.
type inputResult int

const (
	inputAccepted inputResult = iota
	// inputFull: no room; the dispatcher waits (awaitRoom) and tries again.
	inputFull
	// inputStalled: no room, and the program has taken nothing from the
	// full queue for Config.InputStall: the input is refused.
	inputStalled
)

// enqueueInput hands input to the writer without blocking, if the queue
// has room for it: its bytes stay within limit, unless it is empty (one
// input larger than the bound still goes in alone).
func (t *terminal) enqueueInput(data string, limit int, stall time.Duration) inputResult {
	if len(data) <= keystrokeBytes && t.writeNow(data) {
		return inputAccepted
	}
	if q := t.queued.Load(); q > 0 && q+int64(len(data)) > int64(limit) {
		if t.input.stalled(time.Now(), stall) {
			return inputStalled
		}
		return inputFull
	}
	t.queued.Add(int64(len(data))) // before the writer can take it
	t.input.push(data)
	t.writer.Kick()
	return inputAccepted
}

// awaitRoom waits until the input queue has room for n more bytes (and,
// for a small input, until it is half empty: a paste then goes on in
// batches, not one wake-up per chunk written), until the program has
// taken nothing from it for stall, until the program ends, or ctx ends.
// The caller then dispatches again.
func (t *terminal) awaitRoom(ctx context.Context, n, limit int, stall time.Duration) {
	below := max(min(int64(limit/2), int64(limit-n)), 0)
	room, deadline := t.input.waitRoom(&t.queued, below, stall)
	if room == nil {
		return
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-room:
	case <-timer.C:
	case <-ctx.Done():
	case <-t.proc.Done():
	}
}

// writeNow writes a keystroke to the pty from the dispatching goroutine,
// so that its echo does not wait for the writer goroutine to be scheduled:
// only when the shell is ready and nothing is queued or being written
// before it. Dispatches are serialised (the hub lock), so nothing is queued
// between the check and the write. A partial write queues the rest.
func (t *terminal) writeNow(data string) bool {
	if t.queued.Load() != 0 || t.detaching.Load() || !isClosed(t.ready) {
		return false
	}
	b := []byte(data)
	now := time.Now()
	t.keystroke.Store(now.UnixNano()) // before the write: the echo can come at once
	t.proc.Typed(now)
	n, err := t.proc.TryWrite(b)
	if err != nil || n == 0 {
		return false
	}
	mark("pty written")
	if rest := b[n:]; len(rest) > 0 {
		t.queued.Add(int64(len(rest)))
		t.queue(rest) // the queue is empty: it fits
	}
	return true
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// write copies queued input to the pty until the queue is empty (the
// writer's work: it runs only while input is queued). Input dispatched
// before the shell is ready waits for it here.
func (t *terminal) write() {
	if !isClosed(t.ready) {
		timer := time.NewTimer(time.Until(t.readyBy))
		defer timer.Stop()
		select {
		case <-t.ready:
		case <-timer.C: // a shell that never prompts still gets its input
		case <-t.proc.Done():
		case <-t.ctx.Done():
			return
		}
	}
	for t.ctx.Err() == nil {
		b, ok := t.input.pop()
		if !ok || !t.writeInput(b) {
			return
		}
	}
}

// inputQueue is the input waiting for the writer: what was typed while the
// pty's own buffer was full or before the shell was ready. Empty, it holds
// no memory (most terminals, most of the time). Its bytes are counted in
// terminal.queued.
type inputQueue struct {
	mu     sync.Mutex
	chunks [][]byte
	// room is closed, and reset, once the bytes queued drop to below (the
	// largest any waiter asked for); nil when nobody waits.
	room  chan struct{}
	below int64
	// taken is when the writer last wrote input to the pty (the program
	// read some); fullSince when a dispatch last found the queue full after
	// that, zero once it is empty. Input waits for a program that takes
	// nothing from its full queue for Config.InputStall, no longer.
	taken, fullSince time.Time
}

// push appends data, joined to the last chunk when both fit in one.
func (q *inputQueue) push(data string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n := len(q.chunks); n > 0 && len(q.chunks[n-1])+len(data) <= inputChunk {
		q.chunks[n-1] = append(q.chunks[n-1], data...)
		return
	}
	q.chunks = append(q.chunks, []byte(data))
}

// pop takes the first chunk; false when there is none.
func (q *inputQueue) pop() ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.chunks) == 0 {
		q.fullSince = time.Time{} // the program took everything
		return nil, false
	}
	b := q.chunks[0]
	q.chunks[0] = nil
	q.chunks = q.chunks[1:]
	if len(q.chunks) == 0 {
		q.chunks = nil // the array goes with the last chunk
	}
	return b, true
}

// takeAll empties the queue.
func (q *inputQueue) takeAll() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	all := q.chunks
	q.chunks = nil
	return all
}

// stalled reports, for a dispatch that found the queue full at now,
// whether the program has taken nothing from it for stall.
func (q *inputQueue) stalled(now time.Time, stall time.Duration) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fullSince.IsZero() {
		q.fullSince = now
	}
	return now.Sub(q.since()) >= stall
}

// since is when the queue was last found full or last taken from, the
// later of the two; q.mu is held.
func (q *inputQueue) since() time.Time {
	if q.taken.After(q.fullSince) {
		return q.taken
	}
	return q.fullSince
}

// waitRoom returns a channel closed once queued drops to below, and when
// the input stalls (see stalled); nil when it is there already.
func (q *inputQueue) waitRoom(queued *atomic.Int64, below int64, stall time.Duration) (<-chan struct{}, time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if queued.Load() <= below {
		return nil, time.Time{}
	}
	if q.room == nil {
		q.room, q.below = make(chan struct{}), below
	}
	q.below = max(q.below, below)
	since := q.since()
	if since.IsZero() {
		since = time.Now()
	}
	return q.room, since.Add(stall)
}

// took notes that the writer gave the program some input, queued being
// the bytes still waiting, and wakes the waiters there is room for.
func (q *inputQueue) took(queued int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.taken = time.Now()
	if q.room != nil && queued <= q.below {
		close(q.room)
		q.room = nil
	}
}

// writeInput writes a chunk to the pty, counting each part the program
// takes out of the queue as it goes: a program that reads slowly is still
// reading (inputQueue.stalled), and waiters get room as soon as there is.
func (t *terminal) writeInput(b []byte) bool {
	if len(b) <= keystrokeBytes {
		t.keystroke.Store(time.Now().UnixNano())
	}
	for len(b) > 0 {
		n, err := t.proc.WriteSome(b)
		b = b[n:]
		if err != nil {
			t.queued.Add(-int64(n + len(b))) // what is left is dropped
			t.log.Debug("pty write", "err", err)
			return false
		}
		t.input.took(t.queued.Add(-int64(n)))
	}
	mark("pty written by the writer")
	return true
}

// mark notes a step of output or input in an execution trace, when one is
// being written (`termhost serve --debug-trace`; docs/BENCHMARKS.md).
func mark(step string) {
	if trace.IsEnabled() {
		trace.Log(context.Background(), "termhost", step)
	}
}

// echoDue reports, once, whether a keystroke was written recently (its echo
// is what the pty just gave).
func (t *terminal) echoDue() bool {
	k := t.keystroke.Load()
	return k != 0 && time.Now().UnixNano()-k < int64(echoWindow) && t.keystroke.CompareAndSwap(k, 0)
}

// publish sends an action produced by the shell to the channel: the hub
// shows it to the channel's taps (the recorder, the screen model), then to
// its subscribers. It returns the claim holder's backlog so the reader can
// pause while the driver falls behind.
func (t *terminal) publish(a ahp.Action) int {
	if a.Type == ahp.TerminalTitleChanged && t.titlePinned.Load() {
		return 0
	}
	backlog, _ := t.m.hub.Publish(t.uri, a) // a disposed terminal's channel is gone
	return backlog
}

// waitForHolder pauses until the claim holder's backlog drops below
// hub.LowWater (the kernel buffer fills and the program blocks on write, so
// Ctrl-C stays responsive), or the terminal ends. The hub signals every
// change that matters; nothing polls.
func (t *terminal) waitForHolder() int {
	for {
		b, drained, changed := t.m.hub.Pace(t.uri)
		if b < hub.LowWater {
			return b
		}
		select {
		case <-drained:
		case <-changed:
		case <-t.proc.Done():
			return 0
		case <-t.ctx.Done():
			return 0
		}
	}
}

// removeNonceFile deletes the file that handed the shell its nonce (empty
// by now unless the script never ran). Reader goroutine, or Create before
// there is one.
func (t *terminal) removeNonceFile() {
	if t.nonceFile == "" {
		return
	}
	if err := os.Remove(t.nonceFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.log.Debug("nonce file", "err", err)
	}
	t.nonceFile = ""
}

// exited reports the process exit.
func (t *terminal) exited() {
	code := t.proc.ExitCode()
	t.endRecording(code) // complete before anyone sees the exit
	if _, ok := t.m.hub.Publish(t.uri, ahp.Action{Type: ahp.TerminalExited, ExitCode: code}); ok {
		t.log.Info("terminal exited", "exitCode", fmtCode(code))
	}
}

// release frees what only a running shell needs as soon as it has exited
// and its output is drained: the writer goroutine and the pty master (a
// terminal left exited for hours would otherwise hold both). The channel,
// its content and lifecycle stay until Dispose. Called by the reader at its
// end; kill's later Close is then a no-op.
func (t *terminal) release() {
	defer idlemem.Touch()
	t.cancel()
	t.proc.Interrupt() // a writer parked in write(2) on a full pty
	t.writer.Stop()
	t.scr.close() // after the last output: the model answers from its checkpoint
	if err := t.proc.Close(); err != nil {
		t.log.Debug("close", "err", err)
	}
}

// kill ends the shell (SIGHUP, SIGKILL after the grace period), then stops
// the goroutines and closes the pty.
func (t *terminal) kill(grace time.Duration) {
	t.proc.Kill(grace)
	t.cancel()
	// The writer may be parked in write(2) on a full pty (a program that
	// does not read its input): the deadline wakes it, it does not retry.
	t.proc.Interrupt()
	t.writer.Stop()
	t.wg.Wait()
	t.scr.close()
	if err := t.proc.Close(); err != nil {
		t.log.Debug("close", "err", err)
	}
}

// isDeadline reports a read that ended at the read deadline.
func isDeadline(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// resized records a new size for the output's bounds (csibound), before the
// program can learn it; the size it replaces still counts until the next
// resize, for the output written for it that is still on its way.
func (t *terminal) resized(cols, rows int) {
	c, r := uint64(min(max(cols, 0), 0xffff)), uint64(min(max(rows, 0), 0xffff))
	for {
		v := t.size.Load()
		prev := v >> 32 // the size until now
		if v == 0 {     // the first size
			prev = c<<16 | r
		}
		if t.size.CompareAndSwap(v, c<<48|r<<32|prev) {
			return
		}
	}
}

// sizes are the current size and the one before it, for csibound.
func (t *terminal) sizes() (cur, prev csibound.Size) {
	v := t.size.Load()
	if v == 0 { // not known: as large as a terminal may be
		big := csibound.Size{Cols: ahp.MaxDimension, Rows: ahp.MaxDimension}
		return big, big
	}
	cur = csibound.Size{Cols: int(v >> 48), Rows: int(v >> 32 & 0xffff)}
	prev = csibound.Size{Cols: int(v >> 16 & 0xffff), Rows: int(v & 0xffff)}
	return cur, prev
}
