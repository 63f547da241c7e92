package terminals

import (
	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/hub"
)

// Subscriber is one connection's view of the channels (see hub.Subscriber).
type Subscriber = hub.Subscriber

// Recovery is the typed answer to a reconnect (see hub.Recovery).
type Recovery = hub.Recovery

// Frame is one encoded envelope on its way to subscribers (see hub.Frame).
type Frame = hub.Frame

// Redraw is the screen a subscriber that fell behind skips ahead to (see
// hub.Skipper).
type Redraw = hub.Redraw

// LowWater is the backlog below which a paced terminal may go on (see
// hub.LowWater).
const LowWater = hub.LowWater

// Subscribe atomically takes a snapshot of the channel and registers s, so
// every action after the snapshot's fromSeq reaches s.
// A joiner may get the screen redraw in the content (see screenTap).
func (m *Manager) Subscribe(s Subscriber, uri string) (ahp.Snapshot, error) {
	return m.hub.Join().Subscribe(s, uri)
}

// Initialize subscribes s to every known channel of uris in one step and
// returns the snapshots and the current serverSeq. Unknown URIs are skipped.
func (m *Manager) Initialize(s Subscriber, uris []string) (int64, []ahp.Snapshot) {
	return m.hub.Join().Initialize(s, uris)
}

// Unsubscribe stops delivering a channel to s. Unknown channels are ignored.
func (m *Manager) Unsubscribe(s Subscriber, uri string) {
	m.hub.Unsubscribe(s, uri)
	m.resizeForLeaver(s, uri)
}

// UnsubscribeAll drops s from every channel (its connection closed).
func (m *Manager) UnsubscribeAll(s Subscriber) {
	m.hub.Leave(s)
	m.resizeForLeaver(s, "")
}

// Reconnect resumes a client's subscriptions on a new connection s: replay
// of the missed actions when the ring still holds them, else snapshots (see
// hub.Hub.Reconnect).
// Snapshots get the screen redraw as in Subscribe; a replay is unchanged.
func (m *Manager) Reconnect(s Subscriber, p ahp.ReconnectParams) Recovery {
	return m.hub.Join().Reconnect(s, p)
}
