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
// that terminal's subscribers only, in the same step as the change: a
// joiner gets it right after the answer carrying its snapshot (Hold), and a
// join costs the same whatever the number of other terminals and of their
// subscribers (issue 22, point 3).
func (h *Hub) unlock() {
	for len(h.dirty) > 0 {
		ch := h.dirty[0]
		h.dirty = h.dirty[1:]
		ch.dirty = false
		h.sendPresenceLocked(ch)
	}
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

func (h *Hub) sendPresenceLocked(ch *channel) {
	joiners := ch.joiners
	ch.joiners = nil
	if ch.removed {
		return
	}
	subs := make([]Subscriber, 0, len(ch.subs))
	for s := range ch.subs {
		subs = append(subs, s)
	}
	b := h.presence(ch.uri, ch.term.Claim, subs)
	changed := string(b) != string(ch.presence)
	ch.presence = b
	if b == nil {
		return
	}
	f := newRawFrame(b)
	for _, s := range subs {
		if _, joined := joiners[s]; !changed && !joined {
			continue
		}
		if !s.Deliver(f) {
			h.dropLocked(s) // marks the channels it leaves: the loop in unlock sends them
		}
	}
}
