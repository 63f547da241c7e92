package hub

import "github.com/termhost/termhost/ahp"

// Pace returns the send backlog of the terminal's claim holder (the largest
// among its connections subscribed to the channel), and, when that is over
// LowWater, two channels to wait on before asking again: drained is closed
// once that connection's backlog is below LowWater, changed once the
// channel's subscribers or claim change or the channel is removed. A
// terminal's reader pauses on them instead of polling.
func (h *Hub) Pace(uri string) (backlog int, drained, changed <-chan struct{}) {
	h.mu.Lock()
	defer h.unlock()
	ch := h.channels[uri]
	if ch == nil {
		return 0, nil, nil
	}
	backlog, slowest := ch.holderBacklogLocked()
	if backlog < LowWater {
		return backlog, nil, nil
	}
	if ch.changed == nil {
		ch.changed = make(chan struct{})
	}
	return backlog, slowest.Drained(), ch.changed
}

// touch wakes the readers waiting in Pace on this channel.
func (ch *channel) touch() {
	if ch.changed != nil {
		close(ch.changed)
		ch.changed = nil
	}
}

// holderBacklogLocked is the largest backlog among the claim holder's
// connections subscribed to the channel, and that connection.
func (ch *channel) holderBacklogLocked() (int, Subscriber) {
	if ch.term == nil || ch.term.Claim.Kind != ahp.ClaimClient {
		return 0, nil
	}
	most, slowest := 0, Subscriber(nil)
	for s := range ch.subs {
		// The clientId is bound to one principal by the server; a view-only
		// connection never paces the shell.
		if s.ClientID() == ch.term.Claim.ClientID && !s.ViewOnly() {
			if b := s.Backlog(); b > most || slowest == nil {
				most, slowest = b, s
			}
		}
	}
	return most, slowest
}
