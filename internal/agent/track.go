package agent

import (
	"time"

	"github.com/termhost/termhost/ahp"
)

// Bounds of what is kept per terminal and per command, whatever they print.
const (
	ringBytes = 256 << 10       // recent output of a terminal, for read and wait
	headBytes = maxMaxBytes / 2 // first bytes of a command's output
	tailBytes = maxMaxBytes / 2 // last bytes of a command's output (at least)
)

// term follows one subscribed terminal from its events: its output counted
// in bytes (the cursor of read and wait), the recent output, and the last
// command shell integration reported. The session's lock guards it.
type term struct {
	uri     string
	total   int64  // output bytes seen since the subscription: the cursor
	ring    []byte // the last ≤ 2×ringBytes of output, ending at total
	cmd     *command
	lastOut time.Time // when output or input last came
	gone    bool      // disposed
	busy    bool      // a run of this session is in flight
	// typed is what send_input typed since its last Enter: the start of
	// the line the next Enter submits (approve.go).
	typed string
}

// command is one command shell integration reported, with its output cut
// to a head and a tail.
type command struct {
	id, line   string
	start      int64 // the terminal's cursor when it began
	head, tail []byte
	bytes      int64
	started    time.Time
	done       bool
	exitCode   *int
	durationMs *int64
}

// newTerm starts following a terminal from its snapshot.
func newTerm(uri string, st ahp.TerminalState, now time.Time) *term {
	t := &term{uri: uri, lastOut: now}
	for _, p := range st.Content {
		if p.Type == ahp.PartCommand {
			t.cmd = &command{id: p.CommandID, line: p.CommandLine, start: t.total, started: now,
				done: p.IsComplete, exitCode: p.ExitCode, durationMs: p.DurationMs}
			if p.Timestamp > 0 {
				t.cmd.started = time.UnixMilli(p.Timestamp)
			}
		}
		t.output(p.Text(), now)
	}
	return t
}

// apply follows one accepted action.
func (t *term) apply(a ahp.Action, now time.Time) {
	switch a.Type {
	case ahp.TerminalData:
		t.output(a.Data, now)
	case ahp.TerminalInput:
		t.lastOut = now // an answer to a prompt: quiet counts from here
	case ahp.TerminalCleared:
		t.ring = t.ring[:0]
	case ahp.TerminalCommandExecuted:
		t.cmd = &command{id: a.CommandID, line: a.CommandLine, start: t.total, started: now}
	case ahp.TerminalCommandFinished:
		if t.cmd != nil && t.cmd.id == a.CommandID {
			t.cmd.done, t.cmd.exitCode, t.cmd.durationMs = true, a.ExitCode, a.DurationMs
		}
	}
}

func (t *term) output(data string, now time.Time) {
	if data == "" {
		return
	}
	t.total += int64(len(data))
	t.lastOut = now
	t.ring = keepTail(append(t.ring, data...), ringBytes)
	if c := t.cmd; c != nil && !c.done {
		c.bytes += int64(len(data))
		if room := headBytes - len(c.head); room > 0 {
			c.head = append(c.head, data[:min(room, len(data))]...)
		}
		c.tail = keepTail(append(c.tail, data...), tailBytes)
	}
}

// since is the output from cursor on (what the ring still holds) and how
// many bytes before it were dropped.
func (t *term) since(cursor int64) (out []byte, dropped int64) {
	start := t.total - int64(len(t.ring))
	if cursor < start {
		return t.ring, start - max(cursor, 0)
	}
	if cursor > t.total {
		return nil, 0
	}
	return t.ring[cursor-start:], 0
}

// running is the command shell integration reports as running, or nil.
func (t *term) running() *command {
	if t.cmd != nil && !t.cmd.done {
		return t.cmd
	}
	return nil
}

// keepTail trims b to its last n bytes once it holds twice that, so that
// appending stays amortised O(1).
func keepTail(b []byte, n int) []byte {
	if len(b) <= 2*n {
		return b
	}
	out := make([]byte, n, 2*n)
	copy(out, b[len(b)-n:])
	return out
}

// tailOf is the last n bytes of b.
func tailOf(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
