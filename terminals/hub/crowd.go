package hub

import (
	"sync"
	"time"

	"github.com/termhost/termhost/ahp/ext"
)

// Crowd pacing. A terminal with ext.CrowdThreshold subscribers or more is
// watched by a crowd: each of its output frames would wake the writer of
// every viewer at once, a thousand goroutines made runnable by one pty read,
// and the holder's input (its socket reader, woken by the poller) and the
// next pty read would wait behind a thousand socket writes. So the output
// for a crowd's viewer-link connections (Paced, ViewOnly; never the claim
// holder's, an owner's or a driver's) waits in the connection's queue, and a
// ticker of the terminal's wakes 1/CrowdPhases of them each tick, each
// connection at its own phase: every viewer is woken once a cycle
// (DefaultCrowdCycle) and writes what it got meanwhile in one message
// (output queued back to back is joined), and at most about
// subscribers/CrowdPhases writers become runnable at once.
//
// Nothing is dropped, reordered or duplicated: the frame is queued as
// Deliver queues it (with the same bound, and the same skip ahead when a
// viewer falls behind); only the writer's wake-up waits. Any other frame
// delivered to the connection (presence, the catalogue, an answer) wakes the
// writer at once, which then sends what waited before it, in order. A
// connection that leaves the crowd (it unsubscribes, or the terminal goes
// below the threshold or away, or the hub closes) is woken at once.

// Paced is a Subscriber whose terminal output the hub may leave queued for
// a crowd's cadence.
type Paced interface {
	// DeliverPaced queues f as Deliver does, with the same result, but does
	// not wake the connection's writer: it waits for Flush (or for any
	// frame that Deliver queues after it, which wakes the writer).
	DeliverPaced(f *Frame) bool
	// Flush wakes the writer when DeliverPaced left frames waiting. It must
	// not block (the hub may call it under its lock).
	Flush()
}

// DefaultCrowdCycle is how long a crowd's viewer waits at most for its
// writer's turn: its output reaches it within this much of the holder's.
const DefaultCrowdCycle = 50 * time.Millisecond

// CrowdPhases is how many slices a crowd is woken in over a cycle: a
// thousand viewers, 20 writers a tick, a tick every millisecond (the bench's
// holder echoed faster with 50 slices than with 25; docs/BENCHMARKS.md).
const CrowdPhases = 50

// crowd is a terminal channel's pacing state: every Paced view-only
// subscriber's phase, whether the channel has a crowd, and its ticker's
// goroutine, which runs only while output waits: it starts with the first
// paced frame and ends after a cycle without one. The hub's lock guards it.
type crowd struct {
	phase  map[Subscriber]int
	slices [CrowdPhases]map[Subscriber]struct{}
	next   int           // the phase the next member gets
	active bool          // the channel has a crowd: its members' output is paced
	busy   bool          // a frame was paced since the ticker's cycle began
	stop   chan struct{} // closed to end the ticker; nil when it does not run
}

// pacing is the hub's part: the cycle and the tickers it owns.
type pacing struct {
	cycle   time.Duration // 0: DefaultCrowdCycle
	closed  bool
	tickers sync.WaitGroup
}

// SetCrowdCycle sets how often a crowd's viewers are woken (0: the default,
// DefaultCrowdCycle). Tickers started before keep their cycle.
func (h *Hub) SetCrowdCycle(d time.Duration) {
	h.mu.Lock()
	defer h.unlock()
	h.pace.cycle = d
}

// pacedLocked reports whether f, given to s on ch, waits for the crowd's
// cadence (terminal output, to a member of a crowd), and then makes sure
// the ticker runs.
func (h *Hub) pacedLocked(ch *channel, s Subscriber, f *Frame) (Paced, bool) {
	c := ch.crowd
	if c == nil || !c.active || !f.Skippable() {
		return nil, false
	}
	if _, ok := c.phase[s]; !ok {
		return nil, false
	}
	c.busy = true
	if c.stop == nil {
		c.stop = make(chan struct{})
		cycle := h.pace.cycle
		if cycle <= 0 {
			cycle = DefaultCrowdCycle
		}
		h.pace.tickers.Add(1)
		go h.paceCrowd(c, c.stop, cycle)
	}
	return s.(Paced), true
}

// joinCrowdLocked gives s a phase of ch's crowd when it is a Paced view-only
// connection, and notes whether ch now has a crowd.
func (h *Hub) joinCrowdLocked(ch *channel, s Subscriber) {
	if ch.term == nil {
		return
	}
	if _, ok := s.(Paced); ok && s.ViewOnly() {
		c := ch.crowd
		if c == nil {
			c = &crowd{phase: map[Subscriber]int{}}
			ch.crowd = c
		}
		if _, in := c.phase[s]; !in {
			p := c.next
			c.next = (c.next + 1) % CrowdPhases
			c.phase[s] = p
			if c.slices[p] == nil {
				c.slices[p] = map[Subscriber]struct{}{}
			}
			c.slices[p][s] = struct{}{}
		}
	}
	h.paceLocked(ch)
}

// leaveCrowdLocked takes s out of ch's crowd (it left the channel) and
// wakes its writer for what waited.
func (h *Hub) leaveCrowdLocked(ch *channel, s Subscriber) {
	if c := ch.crowd; c != nil {
		if p, ok := c.phase[s]; ok {
			delete(c.phase, s)
			delete(c.slices[p], s)
			s.(Paced).Flush()
		}
	}
	h.paceLocked(ch)
}

// paceLocked notes whether ch has a crowd; when it no longer has one, the
// ticker stops and every member is woken for what waited.
func (h *Hub) paceLocked(ch *channel) {
	c := ch.crowd
	if c == nil {
		return
	}
	c.active = !ch.removed && !h.pace.closed && len(ch.subs) >= ext.CrowdThreshold && len(c.phase) > 0
	if c.active || c.stop == nil {
		return
	}
	close(c.stop)
	c.stop = nil
	for s := range c.phase {
		s.(Paced).Flush()
	}
}

// paceCrowd wakes one slice of c every cycle/CrowdPhases until stop, or
// until a whole cycle has begun and ended with nothing paced: every frame
// paced before it began has had its member woken since.
func (h *Hub) paceCrowd(c *crowd, stop chan struct{}, cycle time.Duration) {
	defer h.pace.tickers.Done()
	t := time.NewTicker(max(cycle/CrowdPhases, time.Millisecond))
	defer t.Stop()
	var batch []Paced
	for p := 0; ; p = (p + 1) % CrowdPhases {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		h.mu.Lock()
		if c.stop != stop { // stopped meanwhile: its flush woke everyone
			h.unlock()
			return
		}
		if p == 0 {
			if !c.busy {
				c.stop = nil
				h.unlock()
				return
			}
			c.busy = false
		}
		for s := range c.slices[p] {
			batch = append(batch, s.(Paced))
		}
		h.unlock()
		for _, s := range batch {
			s.Flush()
		}
		clear(batch)
		batch = batch[:0]
	}
}

// closePacing stops every ticker (their crowds woken) and waits for them;
// crowds are not paced after it.
func (h *Hub) closePacing() {
	h.mu.Lock()
	h.pace.closed = true
	for _, ch := range h.channels {
		h.paceLocked(ch)
	}
	h.unlock()
	h.pace.tickers.Wait()
}
