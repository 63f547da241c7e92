package terminals

import (
	"sync"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/rest"
	"github.com/termhost/termhost/terminals/hub"
	"github.com/termhost/termhost/terminals/shellint"
)

// readBuffers holds pty read buffers, so that a terminal waiting for output
// (most of them, most of the time) holds none.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, readBuffer); return &b }}

// pendBuffers hold output being coalesced, between the first read of a
// batch and its flush.
var pendBuffers = sync.Pool{New: func() any { b := make([]byte, 0, coalesceBytes+readBuffer); return &b }}

// reader is the state of a terminal's reader goroutine: output waiting to
// be coalesced into one terminal/data.
type reader struct {
	t         *terminal
	buf       *[]byte // from readBuffers while reading, nil while waiting
	pend      *[]byte // output to coalesce, from pendBuffers; nil when none
	pendLen   int     // its bytes
	lastFlush time.Time
	backlog   int // the claim holder's, after the last publish
	isReady   bool
}

// read reads the pty, runs shell integration, coalesces output and
// publishes it; at the end it drains what the shell wrote before exiting
// and reports the exit.
func (t *terminal) read() {
	defer t.wg.Done()
	select { // output and the exit are published only once Create is done
	case <-t.started:
	case <-t.ctx.Done():
	}
	r := &reader{t: t}
	r.loop()
	if r.buf != nil {
		readBuffers.Put(r.buf)
		r.buf = nil
	}
	if t.detaching.Load() { // handed over: the shell lives on elsewhere
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
	r.flush()
	t.removeNonceFile() // a shell that never came up
	t.exited()
	t.release()
}

func (r *reader) loop() {
	t := r.t
	var drainFrom, deadline time.Time // deadline: the pty's read deadline as last set
	for {
		if r.backlog > hub.HighWater {
			r.flush()
			r.backlog = t.waitForHolder()
		}
		n, err := t.proc.Read(r.buffer, r.idle)
		if n > 0 {
			if tap := t.m.cfg.Tap; tap != nil {
				tap(t.uri, (*r.buf)[:n])
			}
			t.sh.Write((*r.buf)[:n], r.emit)
			// The first output after a quiet spell goes out at once (echo latency);
			// a busy stream is batched for up to coalesceWindow.
			if r.pendLen > 0 && time.Since(r.lastFlush) >= coalesceWindow {
				r.flush()
			}
		}
		timedOut := isDeadline(err)
		if err != nil && !timedOut {
			return // EOF: every slave fd is closed; or the master was closed
		}
		if timedOut {
			r.flush()
			if t.detaching.Load() {
				return
			}
		}
		stop := false
		t.proc.SetReadDeadline(func(exited bool) (time.Time, bool) {
			switch {
			case exited:
				// Drain what the shell wrote before exiting, but do not wait for a
				// background process that still holds the pty.
				first := drainFrom.IsZero()
				if first {
					drainFrom = time.Now()
				}
				if (!first && timedOut && n == 0) || time.Since(drainFrom) > drainMax {
					stop = true
					return time.Time{}, false
				}
				deadline = time.Now().Add(drainQuiet)
				return deadline, true
			case r.pendLen > 0:
				// Setting a deadline costs a timer update: only when it changes.
				if d := r.lastFlush.Add(coalesceWindow); !d.Equal(deadline) {
					deadline = d
					return d, true
				}
			case !deadline.IsZero():
				deadline = time.Time{}
				return deadline, true
			}
			return time.Time{}, false
		})
		if stop {
			return
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
	r.lastFlush = time.Now()
	rest.Touch() // output is activity: no collection forced in the middle of a flood
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
			*r.pend = append(*r.pend, ev.Raw...)
			r.pendLen += len(ev.Raw)
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
