package hub

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/content"
	"github.com/termhost/termhost/ahp/ext"
)

// CrowdScrollback is the history a viewer joining a terminal with
// ext.CrowdThreshold subscribers or more gets in its snapshot (the screen
// model's redraw, when the terminal has one, still draws the screen).
const CrowdScrollback = 64 << 10

// snapshotLocked returns the state of a channel as s may see it.
func (h *Hub) snapshotLocked(uri string, s Subscriber) (ahp.Snapshot, error) {
	if uri == ahp.RootURI {
		root := h.root
		if scope := s.Scope(); scope != "" {
			root.Terminals = filterInfos(root.Terminals, scope)
		}
		return ahp.Snapshot{Resource: uri, State: root, FromSeq: h.seq}, nil
	}
	if err := ahp.CheckTerminalURI(uri); err != nil {
		return ahp.Snapshot{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if !h.visibleLocked(s, uri) {
		return ahp.Snapshot{}, fmt.Errorf("%w: %s", ErrNotFound, uri)
	}
	ch := h.channels[uri]
	st := *ch.term
	st.Content = ch.content.Snapshot()
	if s.ViewOnly() && len(ch.subs) >= ext.CrowdThreshold {
		// A viewer joining a crowd gets the end of the history (a
		// trim, as AHP lets a server do): a thousand joiners of a
		// terminal with a full scrollback would otherwise cost a GiB
		// of snapshots, in the server's memory and on its cores.
		st.Content = content.Trim(st.Content, CrowdScrollback)
	}
	return ahp.Snapshot{Resource: uri, State: st, FromSeq: h.seq, Meta: commandMetaJSON(ch.content.CommandMeta())}, nil
}

// commandMetaJSON is a terminal snapshot's _meta: the _meta of its command
// parts' terminal/commandExecuted (ext.MetaCommandMeta), nil when none had
// one. It goes beside the state, not into its parts: a client reducing
// with AHP's reducer alone keeps no _meta in a command part, and the
// snapshot's state must equal what it makes of the actions.
func commandMetaJSON(meta map[string]json.RawMessage) json.RawMessage {
	if len(meta) == 0 {
		return nil
	}
	b, err := json.Marshal(map[string]map[string]json.RawMessage{ext.MetaCommandMeta: meta})
	if err != nil {
		panic("hub: command _meta: " + err.Error()) // it was decoded or made as JSON
	}
	return b
}

func (h *Hub) subscribeLocked(uri string, s Subscriber) {
	ch := h.channels[uri]
	ch.subs[s] = struct{}{}
	h.markLocked(ch, s)
	h.joinCrowdLocked(ch, s)
}

// Subscribe atomically takes a snapshot of the channel and registers s, so
// every action after the snapshot's fromSeq reaches s.
func (h *Hub) Subscribe(s Subscriber, uri string) (ahp.Snapshot, error) {
	return h.subscribe(s, uri, nil)
}

// subscribe is Subscribe; am, if set, collects the taps' amendments.
func (h *Hub) subscribe(s Subscriber, uri string, am *amends) (ahp.Snapshot, error) {
	h.mu.Lock()
	defer h.unlock()
	h.nextLocked() // fromSeq is a fresh value: it tells nothing of what the server did last
	snap, err := h.snapshotLocked(uri, s)
	if err != nil {
		return snap, err
	}
	s.Hold()
	h.subscribeLocked(uri, s)
	am.tapLocked(h.channels[uri])
	return snap, nil
}

// Initialize subscribes s to every known channel of uris in one step and
// returns the snapshots and the current serverSeq. Unknown URIs are skipped.
func (h *Hub) Initialize(s Subscriber, uris []string) (int64, []ahp.Snapshot) {
	return h.initialize(s, uris, nil)
}

// initialize is Initialize; am, if set, collects the taps' amendments.
func (h *Hub) initialize(s Subscriber, uris []string, am *amends) (int64, []ahp.Snapshot) {
	h.mu.Lock()
	defer h.unlock()
	h.nextLocked() // see Subscribe
	s.Hold()
	snaps := []ahp.Snapshot{}
	for _, uri := range uris {
		snap, err := h.snapshotLocked(uri, s)
		if err != nil {
			continue
		}
		h.subscribeLocked(uri, s)
		am.tapLocked(h.channels[uri])
		snaps = append(snaps, snap)
	}
	return h.seq, snaps
}

// Unsubscribe stops delivering a channel to s. Unknown channels are ignored.
func (h *Hub) Unsubscribe(s Subscriber, uri string) {
	h.mu.Lock()
	defer h.unlock()
	if ch := h.channels[uri]; ch != nil {
		delete(ch.subs, s)
		h.markLocked(ch, nil)
		h.leaveCrowdLocked(ch, s)
	}
}

// Leave drops s from every channel (its connection closed).
func (h *Hub) Leave(s Subscriber) {
	h.mu.Lock()
	defer h.unlock()
	h.dropLocked(s)
}

func (h *Hub) dropLocked(s Subscriber) {
	for _, ch := range h.channels {
		if _, ok := ch.subs[s]; ok {
			delete(ch.subs, s)
			h.markLocked(ch, nil)
			h.leaveCrowdLocked(ch, s)
		}
	}
}

// Recovery is the answer to a reconnect: exactly one of its results is set,
// matching the form of the request.
type Recovery struct {
	Kind     RecoveryKind
	Replay   ahp.ReplayResult   // Kind == Replayed
	Snapshot ahp.SnapshotResult // Kind == Snapshots
	Channels ahp.ChannelsResult // Kind == PerChannel
}

// RecoveryKind says which result a Recovery holds.
type RecoveryKind int

// The three forms of a reconnect result.
const (
	Replayed RecoveryKind = iota + 1
	Snapshots
	PerChannel
)

func (k RecoveryKind) String() string {
	switch k {
	case Replayed:
		return "replay"
	case Snapshots:
		return "snapshot"
	case PerChannel:
		return "channels"
	}
	return fmt.Sprintf("RecoveryKind(%d)", int(k))
}

// Result is the JSON-RPC result to send.
func (r Recovery) Result() any {
	switch r.Kind {
	case Replayed:
		return r.Replay
	case Snapshots:
		return r.Snapshot
	}
	return r.Channels
}

// Reconnect resumes a client's subscriptions on a new connection s: replay
// of the missed actions when the ring still holds them, else snapshots;
// channels that no longer exist (or that s may not see) are reported
// missing. s is subscribed to every surviving channel in the same step.
func (h *Hub) Reconnect(s Subscriber, p ahp.ReconnectParams) Recovery {
	return h.reconnect(s, p, nil)
}

// reconnect is Reconnect; am, if set, collects the taps' amendments of the
// snapshots (a replay has none).
func (h *Hub) reconnect(s Subscriber, p ahp.ReconnectParams, am *amends) Recovery {
	h.mu.Lock()
	defer h.unlock()
	h.nextLocked() // see Subscribe
	s.Hold()
	if p.PerChannel {
		return Recovery{Kind: PerChannel, Channels: h.reconnectChannelsLocked(s, p.Cursors, am)}
	}
	last := *p.LastSeenServerSeq
	live := map[string]bool{}
	var missing []string
	replayable := last <= h.seq
	for _, uri := range p.Subscriptions {
		if _, err := h.snapshotLocked(uri, s); err != nil {
			missing = append(missing, uri)
			continue
		}
		live[uri] = true
		if !h.ring.complete(uri, last) {
			replayable = false
		}
	}
	if replayable {
		for uri := range live {
			h.subscribeLocked(uri, s)
		}
		return Recovery{Kind: Replayed, Replay: ahp.ReplayResult{Actions: h.scopedLocked(h.ring.since(last, live), s, last), Missing: missing}}
	}
	snaps := []ahp.Snapshot{}
	for _, uri := range p.Subscriptions {
		if live[uri] {
			snap, _ := h.snapshotLocked(uri, s)
			h.subscribeLocked(uri, s)
			am.tapLocked(h.channels[uri])
			snaps = append(snaps, snap)
		}
	}
	return Recovery{Kind: Snapshots, Snapshot: ahp.SnapshotResult{Snapshots: snaps}}
}

func (h *Hub) reconnectChannelsLocked(s Subscriber, cursors []ahp.ChannelCursor, am *amends) ahp.ChannelsResult {
	out := ahp.ChannelsResult{Channels: []ahp.ChannelRecovery{}}
	for _, c := range cursors {
		snap, err := h.snapshotLocked(c.Channel, s)
		switch {
		case err != nil:
			out.Channels = append(out.Channels, ahp.ChannelRecovery{Kind: ahp.RecoveryMissing, Channel: c.Channel})
			continue
		case c.LastSeenServerSeq > 0 && c.LastSeenServerSeq <= h.seq && h.ring.complete(c.Channel, c.LastSeenServerSeq):
			actions := h.scopedLocked(h.ring.since(c.LastSeenServerSeq, map[string]bool{c.Channel: true}), s, c.LastSeenServerSeq)
			out.Channels = append(out.Channels, ahp.ChannelRecovery{Kind: ahp.RecoveryReplay, Channel: c.Channel, Actions: actions})
		default:
			am.tapLocked(h.channels[c.Channel])
			out.Channels = append(out.Channels, ahp.ChannelRecovery{Kind: ahp.RecoverySnapshot, Channel: c.Channel, Snapshot: &snap})
		}
		h.subscribeLocked(c.Channel, s)
	}
	return out
}

// scopedLocked filters a replay down to what a scoped subscriber sees, as
// live delivery does (fanOutLocked): catalogue changes about its terminal
// only. The ring keeps only the newest catalogue, which may be about
// another terminal; the replay then carries the catalogue filtered to the
// scope at the serverSeq of the last change about it (the filtered
// catalogue has not changed since), when that is after the cursor.
func (h *Hub) scopedLocked(envs []ahp.Envelope, s Subscriber, after int64) []ahp.Envelope {
	scope := s.Scope()
	if scope == "" {
		return envs
	}
	var newest *ahp.Envelope
	out := envs[:0]
	for _, e := range envs {
		if e.Action.Type == ahp.RootTerminalsChanged {
			newest = &e
			continue
		}
		out = append(out, e)
	}
	if newest == nil {
		return out
	}
	at, ok := h.catSeq[scope]
	if !ok { // the terminal is gone: its removal is the newest news
		at = newest.ServerSeq
	}
	if at <= after {
		return out
	}
	cat := *newest
	cat.ServerSeq = at
	cat.Action.Terminals = filterInfos(cat.Action.Terminals, scope)
	i, _ := slices.BinarySearchFunc(out, at, func(e ahp.Envelope, seq int64) int { return cmp.Compare(e.ServerSeq, seq) })
	return slices.Insert(out, i, cat)
}
