package terminals

import (
	"slices"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/hub"
)

// Subscriber is one connection's view of the channels (see hub.Subscriber).
type Subscriber = hub.Subscriber

// Recovery is the typed answer to a reconnect (see hub.Recovery).
type Recovery = hub.Recovery

// Frame is one encoded envelope on its way to subscribers (see hub.Frame).
type Frame = hub.Frame

// LowWater is the backlog below which a paced terminal may go on (see
// hub.LowWater).
const LowWater = hub.LowWater

// Subscribe atomically takes a snapshot of the channel and registers s, so
// every action after the snapshot's fromSeq reaches s.
// A joiner may get the screen redraw in the content (see applyScreen).
func (m *Manager) Subscribe(s Subscriber, uri string) (snap ahp.Snapshot, err error) {
	marks := m.marked([]string{uri}, func() { snap, err = m.hub.Subscribe(s, uri) })
	if err == nil {
		m.applyScreen(marks, &snap)
	}
	return snap, err
}

// Initialize subscribes s to every known channel of uris in one step and
// returns the snapshots and the current serverSeq. Unknown URIs are skipped.
func (m *Manager) Initialize(s Subscriber, uris []string) (seq int64, snaps []ahp.Snapshot) {
	marks := m.marked(uris, func() { seq, snaps = m.hub.Initialize(s, uris) })
	for i := range snaps {
		m.applyScreen(marks, &snaps[i])
	}
	return seq, snaps
}

// Unsubscribe stops delivering a channel to s. Unknown channels are ignored.
func (m *Manager) Unsubscribe(s Subscriber, uri string) {
	m.hub.Unsubscribe(s, uri)
	m.resizeForLeaver(s, uri)
}

// Leave drops s from every channel (its connection closed).
func (m *Manager) Leave(s Subscriber) {
	m.hub.Leave(s)
	m.resizeForLeaver(s, "")
}

// Reconnect resumes a client's subscriptions on a new connection s: replay
// of the missed actions when the ring still holds them, else snapshots (see
// hub.Hub.Reconnect).
// Snapshots get the screen redraw as in Subscribe; a replay is unchanged.
func (m *Manager) Reconnect(s Subscriber, p ahp.ReconnectParams) (r Recovery) {
	uris := slices.Clone(p.Subscriptions)
	for _, c := range p.Cursors {
		uris = append(uris, c.Channel)
	}
	marks := m.marked(uris, func() { r = m.hub.Reconnect(s, p) })
	switch r.Kind {
	case hub.Snapshots:
		for i := range r.Snapshot.Snapshots {
			m.applyScreen(marks, &r.Snapshot.Snapshots[i])
		}
	case hub.PerChannel:
		for _, c := range r.Channels.Channels {
			if c.Snapshot != nil {
				m.applyScreen(marks, c.Snapshot)
			}
		}
	}
	return r
}
