package terminals

import (
	"fmt"
	"strings"

	"github.com/termhost/termhost/ahp"
)

// snapshotLocked returns the state of a channel as the subscriber may see it.
func (m *Manager) snapshotLocked(uri string, s Subscriber) (ahp.Snapshot, error) {
	if uri == ahp.RootURI {
		root := m.hub.root
		if scope := s.Scope(); scope != "" {
			root.Terminals = filterInfos(root.Terminals, scope)
		}
		return ahp.Snapshot{Resource: uri, State: root, FromSeq: m.hub.seq}, nil
	}
	if _, err := ahp.TerminalID(uri); err != nil {
		return ahp.Snapshot{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	t := m.terms[uri]
	if t == nil || t.disposed || (s.Scope() != "" && s.Scope() != uri) {
		return ahp.Snapshot{}, fmt.Errorf("%w: %s", ErrNotFound, uri)
	}
	st := t.state
	st.Content = t.content.snapshot()
	return ahp.Snapshot{Resource: uri, State: st, FromSeq: m.hub.seq}, nil
}

// Subscribe atomically takes a snapshot of the channel and registers s, so every
// action after the snapshot's fromSeq reaches s.
func (m *Manager) Subscribe(s Subscriber, uri string) (ahp.Snapshot, error) {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	snap, err := m.snapshotLocked(uri, s)
	if err != nil {
		return snap, err
	}
	holdLocked(s)
	m.hub.subscribeLocked(uri, s)
	return snap, nil
}

// Initialize subscribes s to every known channel of uris in one step and returns
// the snapshots and the current serverSeq. Unknown URIs are skipped.
func (m *Manager) Initialize(s Subscriber, uris []string) (int64, []ahp.Snapshot) {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	holdLocked(s)
	snaps := []ahp.Snapshot{}
	for _, uri := range uris {
		snap, err := m.snapshotLocked(uri, s)
		if err != nil {
			continue
		}
		m.hub.subscribeLocked(uri, s)
		snaps = append(snaps, snap)
	}
	return m.hub.seq, snaps
}

// Unsubscribe stops delivering a channel to s. Unknown channels are ignored.
func (m *Manager) Unsubscribe(s Subscriber, uri string) {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	if ch := m.hub.channels[uri]; ch != nil {
		delete(ch.subs, s)
	}
}

// Leave drops s from every channel (its connection closed).
func (m *Manager) Leave(s Subscriber) {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	m.hub.dropLocked(s)
}

// Reconnect resumes a client's subscriptions on a new connection s: replay of
// the missed actions when the ring still holds them, else snapshots; channels
// that no longer exist (or that s may not see) are reported missing. The
// result is an ahp.ReplayResult, ahp.SnapshotResult or ahp.ChannelsResult,
// matching the form of p, and s is subscribed to every surviving channel in
// the same step.
func (m *Manager) Reconnect(s Subscriber, p ahp.ReconnectParams) any {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	holdLocked(s)
	if p.PerChannel {
		return m.reconnectChannelsLocked(s, p.Cursors)
	}
	last := *p.LastSeenServerSeq
	live := map[string]bool{}
	var missing []string
	replayable := last <= m.hub.seq
	for _, uri := range p.Subscriptions {
		if _, err := m.snapshotLocked(uri, s); err != nil {
			missing = append(missing, uri)
			continue
		}
		live[uri] = true
		if !m.hub.ring.complete(uri, last) {
			replayable = false
		}
	}
	if replayable {
		for uri := range live {
			m.hub.subscribeLocked(uri, s)
		}
		return ahp.ReplayResult{Actions: m.scopedLocked(m.hub.ring.since(last, live), s), Missing: missing}
	}
	snaps := []ahp.Snapshot{}
	for _, uri := range p.Subscriptions {
		if live[uri] {
			snap, _ := m.snapshotLocked(uri, s)
			m.hub.subscribeLocked(uri, s)
			snaps = append(snaps, snap)
		}
	}
	return ahp.SnapshotResult{Snapshots: snaps}
}

func (m *Manager) reconnectChannelsLocked(s Subscriber, cursors []ahp.ChannelCursor) ahp.ChannelsResult {
	out := ahp.ChannelsResult{Channels: []ahp.ChannelRecovery{}}
	for _, c := range cursors {
		snap, err := m.snapshotLocked(c.Channel, s)
		switch {
		case err != nil:
			out.Channels = append(out.Channels, ahp.ChannelRecovery{Kind: ahp.RecoveryMissing, Channel: c.Channel})
			continue
		case c.LastSeenServerSeq > 0 && c.LastSeenServerSeq <= m.hub.seq && m.hub.ring.complete(c.Channel, c.LastSeenServerSeq):
			actions := m.scopedLocked(m.hub.ring.since(c.LastSeenServerSeq, map[string]bool{c.Channel: true}), s)
			out.Channels = append(out.Channels, ahp.ChannelRecovery{Kind: ahp.RecoveryReplay, Channel: c.Channel, Actions: actions})
		default:
			out.Channels = append(out.Channels, ahp.ChannelRecovery{Kind: ahp.RecoverySnapshot, Channel: c.Channel, Snapshot: &snap})
		}
		m.hub.subscribeLocked(c.Channel, s)
	}
	return out
}

// scopedLocked filters catalogue actions down to what a scoped subscriber sees.
func (m *Manager) scopedLocked(envs []ahp.Envelope, s Subscriber) []ahp.Envelope {
	scope := s.Scope()
	if scope == "" {
		return envs
	}
	for i, e := range envs {
		if e.Action.Type == ahp.RootTerminalsChanged {
			envs[i].Action.Terminals = filterInfos(e.Action.Terminals, scope)
		}
	}
	return envs
}

// IsTerminalURI reports whether uri uses the terminal scheme.
func IsTerminalURI(uri string) bool { return strings.HasPrefix(uri, ahp.TerminalScheme) }
