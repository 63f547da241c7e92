package audit

import (
	"fmt"
	"sync"
	"time"
)

// The volume budget. Events a participant can repeat at will (Coalesced:
// connections, disconnections, control requests, refused sign-ins, input)
// are written one a line up to PerWindow of them per participant in a
// Window; past that, each kind's further events of that participant are
// counted and written as one summary line when the window ends (Count,
// Until, the bytes summed). The window starts at a participant's first such
// event; a participant is Who, or Remote when Who is empty. Every other
// event (sign-ins, terminals created or disposed, control taken or
// granted, share links created, revoked or used, downloads, upgrades)
// stays one line each. So the trail grows by at most PerWindow + len(Coalesced)
// lines a participant per Window, however fast it connects or types. The
// window is short so that a summary comes soon after what it counts (a
// person's typing shows in the trail within seconds).
const (
	Window    = 10 * time.Second
	PerWindow = 10
	// maxParticipants bounds the participants tracked in one window; past
	// it, new ones share one budget (and summary) with Who and Remote "*".
	maxParticipants = 4096
)

// Coalesced are the kinds the budget applies to.
var Coalesced = []string{Connect, Disconnect, ControlRequested, SignInRefused, Input}

func coalesced(kind string) bool {
	for _, k := range Coalesced {
		if k == kind {
			return true
		}
	}
	return false
}

// budget tracks the participants' windows.
type budget struct {
	window time.Duration

	mu     sync.Mutex
	closed bool
	parts  map[string]*participant
	timers sync.WaitGroup // the window-end callbacks scheduled and not stopped
}

// participant is one participant's window.
type participant struct {
	start   time.Time
	written int
	over    map[string]*Event // kind → its summary so far
	order   []string          // kinds in the order they went over
	timer   *time.Timer       // writes the summaries at the window's end
}

// admit decides e's fate: true to write it now; false when it was counted
// into its participant's summary instead. flush writes summaries (called
// with none of b's locks held).
func (b *budget) admit(e Event, now time.Time, flush func([]Event)) bool {
	if !coalesced(e.Event) {
		return true
	}
	key := e.Who
	if key == "" {
		key = "remote:" + e.Remote
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return true
	}
	if b.parts == nil {
		b.parts = map[string]*participant{}
	}
	p := b.parts[key]
	if p != nil && now.Sub(p.start) >= b.window && p.over == nil {
		delete(b.parts, key) // a window that ended without a summary
		p = nil
	}
	if p == nil {
		if len(b.parts) >= maxParticipants {
			b.sweepLocked(now)
		}
		if len(b.parts) >= maxParticipants {
			key, e.Who, e.Name, e.Remote, e.Share = "*", "*", "", "*", ""
			p = b.parts[key]
		}
	}
	if p == nil {
		p = &participant{start: now}
		b.parts[key] = p
	}
	if p.over == nil && p.written < PerWindow {
		p.written++
		return true
	}
	if p.over == nil {
		p.over = map[string]*Event{}
		b.timers.Add(1)
		at := p.start.Add(b.window).Sub(now)
		p.timer = time.AfterFunc(at, func() {
			defer b.timers.Done()
			if sum := b.end(key, p); len(sum) > 0 {
				flush(sum)
			}
		})
	}
	s := p.over[e.Event]
	if s == nil {
		c := e
		c.Count, c.Bytes, c.Until = 0, 0, e.Time
		s = &c
		p.over[e.Event] = s
		p.order = append(p.order, e.Event)
	}
	s.Count++
	s.Bytes += e.Bytes
	s.Until = e.Time
	if s.Terminal != e.Terminal {
		s.Terminal, s.Title = "", ""
	}
	if s.Remote != e.Remote {
		s.Remote = ""
	}
	return false
}

// sweepLocked forgets the participants whose window ended without a summary.
func (b *budget) sweepLocked(now time.Time) {
	for k, p := range b.parts {
		if p.over == nil && now.Sub(p.start) >= b.window {
			delete(b.parts, k)
		}
	}
}

// end closes p's window (if it is still key's): its summaries, in order.
func (b *budget) end(key string, p *participant) []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.parts[key] != p {
		return nil
	}
	delete(b.parts, key)
	return summaries(p)
}

// close ends every window now and returns their summaries; later events
// are written as they come (the log is closing).
func (b *budget) close() []Event {
	b.mu.Lock()
	b.closed = true
	var out []Event
	for _, p := range b.parts {
		if p.timer != nil && p.timer.Stop() {
			b.timers.Done()
		}
		out = append(out, summaries(p)...)
	}
	b.parts = nil
	b.mu.Unlock()
	b.timers.Wait()
	return out
}

func summaries(p *participant) []Event {
	out := make([]Event, 0, len(p.order))
	for _, kind := range p.order {
		s := p.over[kind]
		s.Detail = fmt.Sprintf("%d more %s events of this participant in the %v from %s (over the audit budget of %d lines per %v)",
			s.Count, kind, Window, p.start.UTC().Format(time.TimeOnly), PerWindow, Window)
		out = append(out, *s)
	}
	p.over, p.order = nil, nil
	return out
}
