package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/content"
	"github.com/termhost/termhost/ahp/ext"
)

// EventKind says what an Event reports.
type EventKind int

const (
	// EventAction is an action envelope on a subscribed channel. State has it
	// applied, unless Envelope.RejectionReason says the server refused it
	// (rejections reach only the client that dispatched the action).
	EventAction EventKind = iota + 1
	// EventResync replaces a channel's state with a snapshot after a
	// reconnect that could not replay what was missed. State is the snapshot
	// state as received (with all of its content).
	EventResync
	// EventGone: the channel no longer exists (disposed while the connection
	// was down); the subscription has ended.
	EventGone
	// EventDisconnected: the transport dropped (Err says why); the client is
	// reconnecting. Calls and dispatches wait until it is back.
	EventDisconnected
	// EventReconnected: the connection is back and every surviving
	// subscription is current again.
	EventReconnected
	// EventNotification: a server notification other than action (a
	// server extension such as ext.NotifyControlRequest): Method and Params.
	EventNotification
)

func (k EventKind) String() string {
	switch k {
	case EventAction:
		return "action"
	case EventResync:
		return "resync"
	case EventGone:
		return "gone"
	case EventDisconnected:
		return "disconnected"
	case EventReconnected:
		return "reconnected"
	case EventNotification:
		return "notification"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one change seen by the client, in the server's order.
type Event struct {
	Kind     EventKind
	Channel  string       // "" for connection events
	Envelope ahp.Envelope // EventAction
	// State is an ahp.TerminalState or ahp.RootState (EventAction,
	// EventResync). An EventAction's terminal state has no Content (nil),
	// so that a frame costs O(len(data)) whatever the mirror holds: take the
	// mirrored content with Client.Terminal, which copies it out in O(parts).
	State any
	Err   error // EventDisconnected
	// Replayed marks an EventAction from a reconnect replay: history the
	// server sent again, not output happening now (an EventResync is
	// history too).
	Replayed bool
	// Method and Params of an EventNotification.
	Method string
	Params json.RawMessage
}

type queued struct {
	ev   Event
	size int
}

// mirror is the local copy of a subscribed channel's state. While pending
// (subscribe or resync in flight) envelopes wait in buf, so that those the
// server sent before its answer are applied after the snapshot they follow.
type mirror struct {
	channel string
	state   any
	content *content.Store // a terminal's content, bounded by MirrorBytes (nil: none kept)
	seq     int64          // serverSeq of the last applied action, or the snapshot's fromSeq
	pending bool
	buf     []ahp.Envelope
}

// Subscribe subscribes to a channel and returns its snapshot; the channel's
// later actions arrive through Next. Subscribing again returns the mirrored
// state.
func (c *Client) Subscribe(ctx context.Context, channel string) (ahp.Snapshot, error) {
	c.mu.Lock()
	if m := c.mirrors[channel]; m != nil && !m.pending {
		snap := ahp.Snapshot{Resource: channel, State: m.current(), FromSeq: m.seq}
		c.mu.Unlock()
		return snap, nil
	}
	m := &mirror{channel: channel, pending: true}
	c.mirrors[channel] = m
	c.mu.Unlock()
	cl, err := c.call(ctx, ahp.MethodSubscribe, ahp.SubscribeParams{Channel: channel}, func(raw json.RawMessage, err error) (any, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.mirrors[channel] != m {
			if err == nil {
				err = fmt.Errorf("subscribe %s: unsubscribed meanwhile", channel)
			}
			return nil, err
		}
		var r struct {
			Snapshot *ahp.Snapshot `json:"snapshot"`
		}
		if err == nil {
			if derr := json.Unmarshal(raw, &r); derr != nil || r.Snapshot == nil {
				err = fmt.Errorf("subscribe %s: the result has no snapshot (%v)", channel, derr)
			}
		}
		if err != nil {
			delete(c.mirrors, channel)
			return nil, err
		}
		c.installLocked(m, *r.Snapshot)
		return *r.Snapshot, nil
	})
	if err != nil {
		c.mu.Lock()
		if c.mirrors[channel] == m && m.pending {
			delete(c.mirrors, channel)
		}
		c.mu.Unlock()
		return ahp.Snapshot{}, err
	}
	return cl.value.(ahp.Snapshot), nil
}

// Unsubscribe ends a subscription. Events already queued stay queued.
func (c *Client) Unsubscribe(ctx context.Context, channel string) error {
	c.mu.Lock()
	delete(c.mirrors, channel)
	c.mu.Unlock()
	return c.Notify(ctx, ahp.MethodUnsubscribe, ahp.ChannelParams{Channel: channel})
}

// State returns the mirrored state of a subscribed channel: an
// ahp.TerminalState or ahp.RootState. It may be ahead of the events not yet
// taken with Next.
func (c *Client) State(channel string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.mirrors[channel]
	if m == nil || m.pending && m.state == nil {
		return nil, false
	}
	return m.current(), true
}

// Root returns the mirrored root state (subscribe to ahp.RootURI first).
func (c *Client) Root() (ahp.RootState, bool) {
	st, ok := c.State(ahp.RootURI)
	root, isRoot := st.(ahp.RootState)
	return root, ok && isRoot
}

// Terminal returns the mirrored state of a subscribed terminal channel.
func (c *Client) Terminal(channel string) (ahp.TerminalState, bool) {
	st, ok := c.State(channel)
	ts, isTerm := st.(ahp.TerminalState)
	return ts, ok && isTerm
}

// CommandMeta returns, by commandId, the _meta of the
// terminal/commandExecuted of each command part a subscribed terminal's
// mirrored content holds that had one (termhost's "termhost/runBy"): from
// the actions, and for the commands of a snapshot from the snapshot's
// _meta. AHP's reducer keeps no _meta in a command part.
func (c *Client) CommandMeta(channel string) map[string]json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.mirrors[channel]; m != nil && m.content != nil {
		return m.content.CommandMeta()
	}
	return nil
}

// snapshotCommandMeta reads a terminal snapshot's ext.MetaCommandMeta.
func snapshotCommandMeta(meta json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	var out map[string]json.RawMessage
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil || json.Unmarshal(m[ext.MetaCommandMeta], &out) != nil {
		return nil
	}
	return out
}

// Next returns the next event. After the client has finished, it returns the
// queued events and then the reason (ErrClosed after Close). One goroutine
// should drain it; while the queue is over Options.QueueBytes the client stops
// reading the socket, so do not wait on a Call from that goroutine then.
func (c *Client) Next(ctx context.Context) (Event, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			q := c.queue[0]
			c.queue[0] = queued{}
			c.queue = c.queue[1:]
			before := c.queuedSize
			c.queuedSize -= q.size
			if before > c.opts.QueueBytes && c.queuedSize <= c.opts.QueueBytes {
				c.wakeLocked() // the reader may go on
			}
			c.mu.Unlock()
			return q.ev, nil
		}
		if c.finished {
			err := c.err
			c.mu.Unlock()
			return Event{}, err
		}
		wake := c.wake
		c.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// waitSpace holds the reader while the event queue is over its bound.
func (c *Client) waitSpace() error {
	for {
		c.mu.Lock()
		if c.queuedSize <= c.opts.QueueBytes || c.closed {
			c.mu.Unlock()
			return nil
		}
		wake := c.wake
		c.mu.Unlock()
		c.progress.Add(1)
		c.holding.Store(true) // no pongs are read meanwhile: the watchdog waits
		select {
		case <-wake:
		case <-c.ctx.Done():
			c.holding.Store(false)
			return ErrClosed
		}
		c.holding.Store(false)
	}
}

func (c *Client) pushLocked(ev Event, size int) {
	c.queue = append(c.queue, queued{ev, size + 64})
	c.queuedSize += size + 64
	c.wakeLocked()
}

func (c *Client) wakeLocked() {
	close(c.wake)
	c.wake = make(chan struct{})
}

// envelopeLocked takes one live action envelope.
func (c *Client) envelopeLocked(env ahp.Envelope) {
	m := c.mirrors[env.Channel]
	switch {
	case m == nil:
	case m.pending:
		m.buf = append(m.buf, env)
	default:
		c.applyLocked(m, env, false)
	}
}

// applyLocked reduces an envelope into a mirror (once: replays may overlap
// what was already applied) and queues its event.
func (c *Client) applyLocked(m *mirror, env ahp.Envelope, replayed bool) {
	if env.ServerSeq <= m.seq {
		return
	}
	// The reconnect watermark only moves past what was applied: envelopes
	// still buffered when a socket drops are asked for again.
	c.lastSeq = max(c.lastSeq, env.ServerSeq)
	m.seq = env.ServerSeq
	if env.RejectionReason == "" {
		m.state = m.reduce(env.Action)
	}
	size := 0
	if env.Action.Type == ahp.TerminalData {
		size = len(env.Action.Data)
	}
	c.pushLocked(Event{Kind: EventAction, Channel: m.channel, Envelope: env, State: m.state, Replayed: replayed}, size)
}

// installLocked sets a mirror from a snapshot and applies what waited for it.
func (c *Client) installLocked(m *mirror, snap ahp.Snapshot) {
	m.install(snap.State, c.opts.MirrorBytes)
	if m.content != nil {
		m.content.SetCommandMeta(snapshotCommandMeta(snap.Meta))
	}
	m.seq = snap.FromSeq
	m.pending = false
	c.lastSeq = max(c.lastSeq, snap.FromSeq)
	buf := m.buf
	m.buf = nil
	for _, env := range buf {
		c.applyLocked(m, env, false)
	}
}

// resyncLocked installs the snapshots of an initialize or a snapshot
// reconnect. Requested channels without a snapshot are gone. With emit (not
// the first connection) the changes are queued as events.
func (c *Client) resyncLocked(snaps []ahp.Snapshot, requested []string, emit bool) {
	got := map[string]bool{}
	for _, snap := range snaps {
		m := c.mirrors[snap.Resource]
		if m == nil {
			continue
		}
		got[snap.Resource] = true
		if emit {
			c.pushLocked(Event{Kind: EventResync, Channel: snap.Resource, State: snap.State}, contentSize(snap.State))
		}
		c.installLocked(m, snap)
	}
	c.goneLocked(requested, got, emit)
}

// goneLocked drops the requested mirrors not in keep.
func (c *Client) goneLocked(requested []string, keep map[string]bool, emit bool) {
	for _, ch := range requested {
		if keep[ch] || c.mirrors[ch] == nil {
			continue
		}
		delete(c.mirrors, ch)
		if emit {
			c.pushLocked(Event{Kind: EventGone, Channel: ch}, 0)
		}
	}
}

// install sets the mirrored state from a snapshot: a terminal's content
// goes into a store bounded by budget (negative: none is kept).
func (m *mirror) install(state any, budget int) {
	st, ok := state.(ahp.TerminalState)
	if !ok {
		m.state, m.content = state, nil
		return
	}
	m.content = nil
	if budget >= 0 {
		m.content = content.FromParts(st.Content, budget)
		st.Content = nil // kept in the store
	} else {
		st.Content = []ahp.Part{}
	}
	m.state = st
}

// reduce applies an action to the mirrored state. A terminal's content
// goes to its store in O(len(data)); the state returned has none (current
// adds it).
func (m *mirror) reduce(a ahp.Action) any {
	switch s := m.state.(type) {
	case ahp.TerminalState:
		if m.content == nil {
			s = ahp.ReduceTerminal(s, a)
			s.Content = []ahp.Part{}
			return s
		}
		return m.content.Reduce(s, a)
	case ahp.RootState:
		return ahp.ReduceRoot(s, a)
	}
	return m.state
}

// current is the mirrored state with a terminal's content copied out of
// its store, in O(parts).
func (m *mirror) current() any {
	st, ok := m.state.(ahp.TerminalState)
	if !ok || m.content == nil {
		return m.state
	}
	st.Content = m.content.Snapshot()
	return st
}

func contentSize(state any) int {
	s, ok := state.(ahp.TerminalState)
	if !ok {
		return 0
	}
	n := 0
	for _, p := range s.Content {
		n += len(p.Text())
	}
	return n
}

// TrimContent drops the oldest content so that at most limit bytes of text
// remain: whole parts first, then the head of the oldest remaining part, cut
// as the server cuts its scrollback (content.Trim: after a newline when one
// is near, never inside a UTF-8 character or an escape sequence). parts is
// not modified.
func TrimContent(parts []ahp.Part, limit int) []ahp.Part { return content.Trim(parts, limit) }

// IsNotFound reports whether err is the server's -32008 (no such terminal).
func IsNotFound(err error) bool {
	var e *ahp.Error
	return errors.As(err, &e) && e.Code == ahp.CodeNotFound
}
