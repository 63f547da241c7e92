package handlers

import (
	"sync"
	"time"
	"unicode/utf8"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/internal/approval"
	"github.com/termhost/termhost/terminals"
)

// Drivers' Enter (termhost serve --approve-drivers, README "Approvals"):
// the server follows the line a driver types at a shell prompt (shell
// integration says the shell runs no command), and when an Enter would
// run a line the rules do not allow, it holds that input, and every input
// of the driver on the terminal after it, and asks the owner or the
// terminal's holder. Approved, the held input goes in (the rest checked
// again); denied or timed out, it is dropped: the line stays typed in the
// shell, unsubmitted.

// maxHeldInput bounds the bytes a driver's held input may reach; past it
// further input is refused.
const maxHeldInput = 64 << 10

// driverApprovalTimeout is how long a driver's Enter waits for an answer.
const driverApprovalTimeout = 5 * time.Minute

// driverGate is a driver connection's state per terminal.
type driverGate struct {
	mu     sync.Mutex
	lines  map[string]*driverLine
	closed bool           // the connection ended: nothing more is released
	bg     sync.WaitGroup // releases of approved input under way
}

// close ends the gate and waits for releases under way (they end with
// the connection's context).
func (g *driverGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.bg.Wait()
}

type driverLine struct {
	typed   []rune // the line typed since the last Enter
	unknown bool   // edited with keys whose effect is not followed (arrows, Tab, Ctrl-R…)
	held    []heldInput
	bytes   int
	waiting bool // an approval is pending, or approved input is being released
}

type heldInput struct {
	origin ahp.Origin
	action ahp.Action
	from   int // the byte of Data where checking resumes (after an approved Enter)
}

// gate follows data from byte from, and returns the index of the first
// Enter the rules do not allow (and the line it submits and the rules'
// verdict), or -1.
func (l *driverLine) gate(rules *approval.File, data string, from int) (at int, line string, res approval.Result) {
	for i := from; i < len(data); {
		r, n := utf8.DecodeRuneInString(data[i:])
		switch {
		case r == '\r' || r == '\n':
			line = string(l.typed)
			switch {
			case l.unknown:
				res = approval.Result{Decision: approval.Ask, Rule: "edited line", Reason: "the line was edited with keys termhost does not follow (history, completion, cursor keys)"}
			case len(l.typed) == 0:
				res = approval.Result{Decision: approval.Run}
			default:
				res = rules.Evaluate(line)
			}
			if res.Decision == approval.Ask {
				return i, line, res
			}
			l.typed, l.unknown = l.typed[:0], false
		case r == 0x7f || r == 0x08:
			if len(l.typed) > 0 {
				l.typed = l.typed[:len(l.typed)-1]
			}
		case r == 0x15 || r == 0x03: // Ctrl-U, Ctrl-C: the line is gone
			l.typed, l.unknown = l.typed[:0], false
		case r < 0x20 || r == 0x1b:
			l.unknown = true
		default:
			if len(l.typed) < 4096 {
				l.typed = append(l.typed, r)
			}
		}
		i += n
	}
	return -1, "", approval.Result{}
}

// gateDriverInput decides on a driver's terminal/input under
// --approve-drivers: false lets the caller dispatch it now; true means it
// is held (or refused) here.
func (c *conn) gateDriverInput(origin ahp.Origin, uri string, a ahp.Action) bool {
	rules := c.s.cfg.ApproveDrivers
	if rules == nil || c.role != auth.RoleDriver || a.Type != ahp.TerminalInput {
		return false
	}
	g := &c.drivers
	g.mu.Lock()
	if g.lines == nil {
		g.lines = map[string]*driverLine{}
	}
	l := g.lines[uri]
	if l == nil {
		l = &driverLine{}
		g.lines[uri] = l
	}
	if l.waiting {
		if l.bytes+len(a.Data) > maxHeldInput {
			g.mu.Unlock()
			c.s.m.Reject(c, origin, uri, a, "too much input waits for an approval: wait for the answer")
			return true
		}
		l.held = append(l.held, heldInput{origin: origin, action: a})
		l.bytes += len(a.Data)
		g.mu.Unlock()
		return true
	}
	if !c.s.m.AtPrompt(uri) {
		// A program reads the input, not the shell: it is not followed.
		l.typed, l.unknown = l.typed[:0], false
		g.mu.Unlock()
		return false
	}
	at, line, res := l.gate(rules, a.Data, 0)
	if at < 0 {
		g.mu.Unlock()
		return false
	}
	l.held = []heldInput{{origin: origin, action: a, from: at}}
	l.bytes, l.waiting = len(a.Data), true
	g.mu.Unlock()
	c.askForDriver(uri, line, res)
	return true
}

// askForDriver files the approval of a driver's line.
func (c *conn) askForDriver(uri, line string, res approval.Result) {
	p := ext.ApprovalRequestParams{Terminal: uri, CommandLine: clipLine(line), Rule: clipTo(res.Rule, ext.ApprovalMaxRule),
		Reason: clipTo(res.Reason, ext.ApprovalMaxRule), TimeoutMs: driverApprovalTimeout.Milliseconds()}
	if p.CommandLine == "" {
		p.CommandLine = "(an edited line)"
	}
	by := ext.Requester{Kind: ext.RequesterDriver, Name: c.PresenceMember().Name}
	if _, err := c.s.fileApproval(c, p, by, func(r ext.ApprovalResult) { c.releaseDriver(uri, r.State == ext.ApprovalApproved) }); err != nil {
		c.log.Info("driver's line not approved: cannot ask", "terminal", uri, "err", err.Message)
		c.releaseDriver(uri, false)
	}
}

// releaseDriver ends the wait of a driver's held input: approved, it goes
// in (on a goroutine of the connection's: the answer comes on another's);
// else it is dropped.
func (c *conn) releaseDriver(uri string, approved bool) {
	g := &c.drivers
	g.mu.Lock()
	l := g.lines[uri]
	if l == nil || !l.waiting || g.closed {
		g.mu.Unlock()
		return
	}
	if !approved {
		for _, h := range l.held {
			c.s.m.Reject(c, h.origin, uri, h.action, "the command line was not approved: it was not run")
		}
		l.held, l.bytes, l.waiting = nil, 0, false
		g.mu.Unlock()
		return
	}
	g.bg.Add(1)
	g.mu.Unlock()
	go func() {
		defer g.bg.Done()
		c.feedApproved(uri, l)
	}()
}

// feedApproved dispatches a driver's held input after an approval,
// checking what follows the approved Enter, until it is all in or another
// line asks.
func (c *conn) feedApproved(uri string, l *driverLine) {
	rules := c.s.cfg.ApproveDrivers
	g := &c.drivers
	first := true
	for {
		g.mu.Lock()
		if first {
			l.typed, l.unknown = l.typed[:0], false
		}
		var out []heldInput
		var line string
		var res approval.Result
		asked := false
		for len(l.held) > 0 {
			h := l.held[0]
			start := 0
			if first {
				start = h.from + 1
				first = false
			}
			at, ln, r := l.gate(rules, h.action.Data, start)
			if at >= 0 {
				l.held[0].from = at
				line, res, asked = ln, r, true
				break
			}
			out = append(out, h)
			l.bytes -= len(h.action.Data)
			l.held = l.held[1:]
		}
		if !asked && len(out) == 0 {
			l.held, l.bytes, l.waiting = nil, 0, false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		for _, h := range out {
			if !c.dispatchInput(h.origin, uri, h.action) {
				return // closing
			}
		}
		if asked {
			c.askForDriver(uri, line, res)
			return
		}
	}
}

// dispatchInput dispatches an input, waiting for room in the terminal's
// input queue; false when the connection is closing.
func (c *conn) dispatchInput(origin ahp.Origin, uri string, a ahp.Action) bool {
	out := c.s.m.Dispatch(c, origin, uri, a, c.policy())
	for out == terminals.Full {
		if !c.awaitInput(uri, len(a.Data)) {
			return false
		}
		out = c.s.m.Dispatch(c, origin, uri, a, c.policy())
	}
	if out == terminals.Accepted {
		c.recordAction(uri, a)
	}
	return true
}

// clipLine cuts a command line to what an approval holds.
func clipLine(s string) string { return clipTo(s, ext.ApprovalMaxCommandLine) }

// clipTo cuts s to at most n bytes of valid UTF-8.
func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
