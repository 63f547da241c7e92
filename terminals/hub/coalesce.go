package hub

import (
	"sync"
	"time"
)

// CoalesceInterval is the shortest time between two sends of the changes
// that may come in bursts from anyone: a terminal's presence (connections
// coming and going, claims) and the catalogue's renames, claims and _meta.
// So each connection gets at most 4 a second of each channel's, whatever
// the number of changes and of their sources, the latest state winning and
// the last one never lost: a change that comes too soon waits for a timer
// the hub owns (Close stops it), at most this long. A creation, a
// disposal or an exit is published at once, with everything that waited.
// (docs/protocol.md, "Presence and the catalogue are coalesced".)
const CoalesceInterval = 250 * time.Millisecond

// coalescer holds the changes that came less than CoalesceInterval after
// the last send, for one timer to send them all. The window is the hub's,
// not each channel's: a send of any terminal's presence or of the
// catalogue opens it, and what comes during it goes out together at its
// end, presence first. The hub's lock guards it.
type coalescer struct {
	last     time.Time       // when changes were last sent, at once or by the tick
	open     bool            // the locked step under way sends at once (it began a window)
	presence []*channel      // terminals whose presence waits (channel.held)
	cat      bool            // a catalogue change waits
	about    map[string]bool // the terminals the catalogue change to send is about
	timer    *time.Timer
	armed    bool // the timer will run tick (or is running it)
	closed   bool
	ticking  sync.WaitGroup // the armed or running tick
}

// holdLocked reports whether a change must wait for the timer: when the
// last send was less than CoalesceInterval ago, or changes already wait (it
// then arms the timer). Otherwise the change goes now, and so does every
// other one of the same locked step.
func (h *Hub) holdLocked() bool {
	c := &h.co
	switch {
	case c.open || c.closed:
		return false
	case c.armed:
		return true
	}
	now := time.Now()
	if wait := c.last.Add(CoalesceInterval).Sub(now); wait > 0 {
		c.armed = true
		c.ticking.Add(1)
		if c.timer == nil {
			c.timer = time.AfterFunc(wait, h.tick)
		} else {
			c.timer.Reset(wait)
		}
		return true
	}
	c.last, c.open = now, true
	return false
}

// tick sends what waited.
func (h *Hub) tick() {
	defer h.co.ticking.Done()
	h.mu.Lock()
	h.co.armed = false
	if !h.co.closed {
		h.flushLocked()
	}
	h.unlock()
}

// flushLocked sends every held change now, presence before the catalogue
// (so a catalogue never overtakes a presence change made before it), and
// begins a window: other changes of this locked step go at once too.
func (h *Hub) flushLocked() {
	c := &h.co
	c.last, c.open = time.Now(), true
	if c.armed && c.timer.Stop() {
		c.armed = false
		c.ticking.Done()
	}
	held := c.presence
	c.presence = nil
	for _, ch := range held {
		ch.held = false
		if !ch.removed {
			h.broadcastPresenceLocked(ch, nil)
		}
	}
	if c.cat {
		h.sendCatalogueLocked()
	}
}

// Close sends what waits and stops the timer, waiting for a tick under
// way, and stops the crowds' tickers (crowd.go). Changes after it go at
// once, and crowds are not paced.
func (h *Hub) Close() {
	h.mu.Lock()
	if !h.co.closed {
		h.flushLocked()
		h.co.closed = true
	}
	h.unlock()
	h.co.ticking.Wait()
	h.closePacing()
}
