package terminals

import (
	"errors"
	"sync"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/idlemem"
	"github.com/termhost/termhost/terminals/hub"
	"github.com/termhost/termhost/terminals/pty"
	"github.com/termhost/termhost/terminals/shellint"
)

// readBuffers holds pty read buffers, so that a terminal waiting for output
// (most of them, most of the time) holds none.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, readBuffer); return &b }}

// pendBuffers hold output being coalesced, between the first read of a
// batch and its flush.
var pendBuffers = sync.Pool{New: func() any { b := make([]byte, 0, coalesceBytes+readBuffer); return &b }}

// parkAfter: once the pty has given nothing for this long and nothing is
// pending, the reader's goroutine ends and the shared watcher waits for
// the next output instead (pty.Read with wake): an idle terminal holds no
// goroutine, and no stack, for its output. Long enough that typing and
// running commands never pay the extra wake-up.
var parkAfter = 2 * time.Second

// reader is the state of a terminal's reader, which runs on one goroutine
// at a time: the first is started by run, each later one by the watcher
// when output comes after the reader parked.
type reader struct {
	t         *terminal
	buf       *[]byte // from readBuffers while reading, nil while waiting
	pend      *[]byte // output to coalesce, from pendBuffers; nil when none
	pendLen   int     // its bytes
	lastFlush time.Time
	lastRead  time.Time // of the last output read (or the start)
	backlog   int       // the claim holder's, after the last publish
	isReady   bool
	deadline  time.Time // the pty's read deadline as last set
	drainFrom time.Time // the first drain read after the exit
	quiet     bool      // quiet for parkAfter with nothing pending: park when drained
}

// read starts the terminal's reader, once Create is done (output and the
// exit are published only then).
func (t *terminal) read() {
	select {
	case <-t.started:
	case <-t.ctx.Done():
	}
	r := &reader{t: t, lastRead: time.Now()}
	r.run()
}

// run reads the pty, runs shell integration, coalesces output and
// publishes it, until the pty is quiet (the reader parks: its goroutine
// ends and wake starts the next) or the shell has ended; then it drains
// what the shell wrote before exiting and reports the exit.
func (r *reader) run() {
	if !r.loop() {
		return // parked: t.wg still counts the reader
	}
	t := r.t
	defer t.wg.Done()
	if r.buf != nil {
		readBuffers.Put(r.buf)
		r.buf = nil
	}
	if t.detaching.Load() { // handed over: the shell lives on elsewhere
		r.releaseHeld()
		r.flush()
		t.detached = true
		return
	}
	select {
	case <-t.proc.Done():
	case <-t.ctx.Done(): // disposed: the killer waits for the child itself
		<-t.proc.Done()
	}
	t.sh.Close(r.emit)
	r.releaseHeld()
	r.flush()
	t.removeNonceFile() // a shell that never came up
	t.exited()
	t.release()
}

// wake continues a parked reader on a new goroutine (pty.Read's wake: it
// must not block).
func (r *reader) wake() { go r.run() }

// loop reads until the reader ends (true) or parks (false; from then on
// another goroutine may run it: r is not touched after pty.ErrParked).
func (r *reader) loop() bool {
	t := r.t
	for {
		if r.backlog > hub.HighWater {
			r.flush()
			r.backlog = t.waitForHolder()
		}
		var wake func()
		if r.quiet {
			wake = r.wake
		}
		n, err := t.proc.Read(r.buffer, r.idle, wake)
		if errors.Is(err, pty.ErrParked) {
			return false
		}
		if n > 0 {
			mark("pty read")
			r.quiet = false
			r.lastRead = time.Now()
			if tap := t.m.cfg.Tap; tap != nil {
				tap(t.uri, (*r.buf)[:n])
			}
			t.sh.Write((*r.buf)[:n], r.emit)
			// The first output after a quiet spell goes out at once (echo latency);
			// a busy stream is batched for up to coalesceWindow.
			if r.pendLen > 0 && r.lastRead.Sub(r.lastFlush) >= coalesceWindow {
				r.flush()
			}
		}
		timedOut := isDeadline(err)
		if err != nil && !timedOut {
			return true // EOF: every slave fd is closed; or the master was closed
		}
		if timedOut {
			r.flush()
			if t.detaching.Load() {
				return true
			}
		}
		stop := false
		t.proc.SetReadDeadline(func(exited bool) (time.Time, bool) {
			switch {
			case exited:
				// Drain what the shell wrote before exiting, but do not wait for a
				// background process that still holds the pty.
				first := r.drainFrom.IsZero()
				if first {
					r.drainFrom = time.Now()
				}
				if (!first && timedOut && n == 0) || time.Since(r.drainFrom) > drainMax {
					stop = true
					return time.Time{}, false
				}
				r.deadline = time.Now().Add(drainQuiet)
				return r.deadline, true
			case r.pendLen > 0:
				// Setting a deadline costs a timer update: only when it changes.
				if d := r.lastFlush.Add(coalesceWindow); !d.Equal(r.deadline) {
					r.deadline = d
					return d, true
				}
			default:
				// Nothing pending: a deadline at the end of the quiet spell that
				// lets the reader park, unless one is still to come (it is
				// earlier: the spell is then checked again).
				now := time.Now()
				if quietAt := r.lastRead.Add(parkAfter); now.Before(quietAt) {
					if !r.deadline.After(now) {
						r.deadline = quietAt
						return quietAt, true
					}
				} else {
					r.quiet = true
					if !r.deadline.IsZero() {
						r.deadline = time.Time{}
						return r.deadline, true
					}
				}
			}
			return time.Time{}, false
		})
		if stop {
			return true
		}
	}
}

// buffer is the read buffer, taken from the pool when a read is attempted.
func (r *reader) buffer() []byte {
	if r.buf == nil {
		r.buf = readBuffers.Get().(*[]byte)
	}
	return *r.buf
}

// idle runs when the pty is drained, before the goroutine parks: small
// pending output goes at once (keystroke echo) and the buffer goes back.
func (r *reader) idle() {
	if r.pendLen > 0 && r.pendLen <= echoBytes && r.t.echoDue() {
		r.flush()
	}
	// Quiet: a program may be waiting for a secret now.
	r.t.checkSecret()
	readBuffers.Put(r.buf)
	r.buf = nil
}

func (r *reader) markReady() {
	if !r.isReady {
		r.isReady = true
		r.t.removeNonceFile() // the shell has its nonce: its script ran
		select {
		case <-r.t.ready: // an adopted or resumed shell was ready already
		default:
			close(r.t.ready)
		}
	}
}

// flush publishes the pending output. lastFlush is when output was last
// sent: a command or prompt boundary with nothing pending is not output,
// so the first prompt after the integration's markers still goes at once.
func (r *reader) flush() {
	if r.pendLen == 0 {
		return
	}
	data := string(*r.pend) // the one copy of the batch that outlives it
	*r.pend = (*r.pend)[:0]
	pendBuffers.Put(r.pend)
	r.pend, r.pendLen = nil, 0
	r.backlog = r.t.publish(ahp.Action{Type: ahp.TerminalData, Data: data})
	mark("published")
	r.lastFlush = time.Now()
	idlemem.Touch() // output is activity: no collection forced in the middle of a flood
}

// releaseHeld adds to the pending output what the bounds held back of an
// unfinished escape sequence: the program ended, or the stream is handed
// over, in the middle of it.
func (r *reader) releaseHeld() {
	if !r.t.bound.Held() {
		return
	}
	if r.pend == nil {
		r.pend = pendBuffers.Get().(*[]byte)
	}
	*r.pend = r.t.bound.Flush(*r.pend)
	r.pendLen = len(*r.pend)
}

// emit takes one event of the shell-integration processor.
func (r *reader) emit(ev shellint.Event) {
	if ev.Kind == shellint.DetectionAvailable || (ev.Kind == shellint.Data && !r.t.integrated) {
		r.markReady()
	}
	if ev.Kind == shellint.Data {
		if len(ev.Raw) > 0 {
			if r.pend == nil {
				r.pend = pendBuffers.Get().(*[]byte)
			}
			// Costly counts bounded before anyone sees them (csibound); a
			// sequence that may need it is held back until it ends.
			cur, prev := r.t.sizes()
			*r.pend = r.t.bound.Append(*r.pend, ev.Raw, cur, prev)
			r.pendLen = len(*r.pend)
			if r.pendLen == 0 { // all held back: no buffer while there is nothing to send
				pendBuffers.Put(r.pend)
				r.pend = nil
			}
		}
		if r.pendLen >= coalesceBytes {
			r.flush()
		}
		return
	}
	r.flush() // never merge data across a command, cwd or title boundary
	if ev.Kind == shellint.PromptEnd {
		return // the shell waits for input: its prompt went out just now
	}
	a := eventAction(ev)
	if a.Type == ahp.TerminalCommandExecuted {
		a.Meta = r.t.runByMeta()
	}
	r.backlog = r.t.publish(a)
}

func eventAction(ev shellint.Event) ahp.Action {
	switch ev.Kind {
	case shellint.DetectionAvailable:
		return ahp.Action{Type: ahp.TerminalCommandDetectionAvailable}
	case shellint.CommandExecuted:
		return ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: ev.ID, CommandLine: ev.CommandLine, Timestamp: ev.Timestamp}
	case shellint.CommandFinished:
		d := ev.DurationMs
		return ahp.Action{Type: ahp.TerminalCommandFinished, CommandID: ev.ID, ExitCode: ev.ExitCode, DurationMs: &d}
	case shellint.CwdChanged:
		return ahp.Action{Type: ahp.TerminalCwdChanged, Cwd: ev.Cwd}
	case shellint.TitleChanged:
		return ahp.Action{Type: ahp.TerminalTitleChanged, Title: ev.Title}
	}
	return ahp.Action{Type: ahp.TerminalData, Data: ev.Text}
}
