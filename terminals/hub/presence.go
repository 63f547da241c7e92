package hub

import "github.com/termhost/termhost/ahp"

// Presence builds the notification frame telling a terminal's subscribers
// who is on it (its subscribers and its claim), or nil for none. The hub
// calls it under its lock: it must not block.
type Presence func(uri string, claim ahp.Claim, subs []Subscriber) []byte

// SetPresence installs the presence hook (nil: no presence).
func (h *Hub) SetPresence(p Presence) {
	h.mu.Lock()
	defer h.unlock()
	h.presence = p
}

// unlock sends the presence of every channel whose subscribers or claim
// changed during the locked step, then releases the lock. Presence goes to
// that terminal's subscribers only: a joiner gets it in the same step as
// its arrival, right after the answer carrying its snapshot (Hold); the
// others get it in the same step too, or, when the last send was less than
// CoalesceInterval ago, at the next tick with the state of then
// (coalesce.go). A join costs the same whatever the number of other
// terminals and of their subscribers.
func (h *Hub) unlock() {
	for len(h.dirty) > 0 {
		ch := h.dirty[0]
		h.dirty = h.dirty[1:]
		ch.dirty = false
		h.sendPresenceLocked(ch)
	}
	h.co.open = false
	h.mu.Unlock()
}

// markLocked notes that a terminal channel's subscribers or claim changed;
// joiner, if set, is a new subscriber that needs the list even if it did not
// change (another connection of the same client was there).
func (h *Hub) markLocked(ch *channel, joiner Subscriber) {
	ch.touch()
	if h.presence == nil || ch.term == nil {
		return
	}
	if joiner != nil {
		if ch.joiners == nil {
			ch.joiners = map[Subscriber]struct{}{}
		}
		ch.joiners[joiner] = struct{}{}
	}
	if !ch.dirty {
		ch.dirty = true
		h.dirty = append(h.dirty, ch)
	}
}

// sendPresenceLocked sends a changed presence to the channel's subscribers
// now, or holds it for the tick and tells only the joiners now.
func (h *Hub) sendPresenceLocked(ch *channel) {
	joiners := ch.joiners
	ch.joiners = nil
	if ch.removed {
		return
	}
	if !ch.held && h.holdLocked() {
		ch.held = true
		h.co.presence = append(h.co.presence, ch)
	}
	if ch.held {
		h.tellJoinersLocked(ch, joiners)
		return
	}
	h.broadcastPresenceLocked(ch, joiners)
}

// subsLocked lists the channel's subscribers.
func (ch *channel) subsLocked() []Subscriber {
	subs := make([]Subscriber, 0, len(ch.subs))
	for s := range ch.subs {
		subs = append(subs, s)
	}
	return subs
}

// tellJoinersLocked gives the joiners the presence as it is now, while the
// others' waits for the tick; the tick then skips those that have it.
func (h *Hub) tellJoinersLocked(ch *channel, joiners map[Subscriber]struct{}) {
	if len(joiners) == 0 {
		return
	}
	b := h.presence(ch.uri, ch.term.Claim, ch.subsLocked())
	if b == nil {
		return
	}
	f := newRawFrame(b)
	for s := range joiners {
		if _, ok := ch.subs[s]; !ok {
			continue
		}
		if ch.told == nil {
			ch.told = map[Subscriber][]byte{}
		}
		ch.told[s] = b
		if !s.Deliver(f) {
			h.dropLocked(s) // marks the channels it leaves: the loop in unlock sends them
		}
	}
}

// broadcastPresenceLocked sends the presence to every subscriber whose
// last one differs, and to the joiners even if not.
func (h *Hub) broadcastPresenceLocked(ch *channel, joiners map[Subscriber]struct{}) {
	told := ch.told
	ch.told = nil
	subs := ch.subsLocked()
	b := h.presence(ch.uri, ch.term.Claim, subs)
	prev := ch.presence
	ch.presence = b
	if b == nil {
		return
	}
	var f *Frame
	for _, s := range subs {
		had, ok := told[s]
		if !ok {
			had = prev
		}
		if _, joined := joiners[s]; !joined && string(had) == string(b) {
			continue
		}
		if f == nil {
			f = newRawFrame(b)
		}
		if !s.Deliver(f) {
			h.dropLocked(s) // marks the channels it leaves: the loop in unlock sends them
		}
	}
}
