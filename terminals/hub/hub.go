// Package hub is the AHP session server's core: the one serverSeq counter
// (a hybrid logical clock, seq.go),
// every channel's state (reduced with ahp's reducers, content in a bounded
// content.Store), the replay ring, and fan-out to subscribers with
// backpressure. It knows nothing of ptys or processes. What follows a
// terminal's output beside its subscribers (a screen model, a recorder)
// plugs into its channel as a Tap (tap.go); presence is the Presence hook.
//
// One mutex makes "assign seq, reduce, enqueue to subscribers" atomic
// across channels, so a connection always receives envelopes in serverSeq
// order and a reconnect watermark never skips one. Nothing is encoded under
// it for terminal/data: subscribers get a shared Frame that their writer
// encodes once per wire shape.
package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/content"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/lockrank"
)

// Errors that callers map to JSON-RPC codes.
var (
	ErrNotFound = errors.New("no such terminal") // -32008
	ErrInvalid  = errors.New("invalid request")  // -32602
)

// Flow control: xterm.js discards what it has not parsed past about 50 MB, so
// a fast program must wait for its reader. A terminal's reader stops reading
// the pty while its claim holder has more than HighWater bytes unsent, until
// it is below LowWater. Other subscribers never slow the shell; they skip
// ahead (skip.go; docs/decisions/0003-holder-paces-the-pty.md).
const (
	HighWater = 2 << 20
	LowWater  = 256 << 10
)

// Subscriber is one connection's view of the channels. The hub calls its
// methods while holding its lock, so they must not block.
type Subscriber interface {
	// Shape is the wire shape negotiated by the connection.
	Shape() ahp.Shape
	// Scope is the only terminal URI the connection may see, or "" for all.
	Scope() string
	// ClientID is the AHP clientId of the connection ("" before initialize).
	ClientID() string
	// ViewOnly reports a connection that may never act on a terminal (a
	// viewer link): it is never treated as a claim holder.
	ViewOnly() bool
	// Hold makes the subscriber keep delivered frames back until it has
	// queued the answer carrying the snapshot being taken, so nothing newer
	// overtakes it. The hub calls it when it takes a subscribe, initialize
	// or reconnect snapshot.
	Hold()
	// Deliver queues one frame. It returns false when the connection's queue
	// is over its bound; the hub then drops the subscriber from every
	// channel and the connection closes itself (the client recovers by
	// reconnecting), unless it is a Skipper given terminal output: it then
	// skips ahead (skip.go).
	Deliver(f *Frame) bool
	// Backlog is the number of bytes queued and not yet written.
	Backlog() int
	// Drained returns a channel closed once the backlog is below LowWater
	// (at once if it is) or the subscriber has closed.
	Drained() <-chan struct{}
}

// Hub holds every channel and the action stream.
type Hub struct {
	mu       lockrank.Mutex[lockrank.Hub]
	seq      int64
	root     ahp.RootState
	order    []string            // terminal channels, catalogue order
	channels map[string]*channel // by URI, the root included
	ring     *ring
	clock    Clock
	// catSeq is, by terminal, the serverSeq of the last catalogue change
	// about it: what a connection scoped to it replays (scopedLocked).
	catSeq map[string]int64
	// presence builds a terminal's presence notification (presence.go);
	// dirty are the channels whose presence unlock must send.
	presence Presence
	dirty    []*channel
	// co holds the presence and catalogue changes that wait (coalesce.go).
	co coalescer
	// pace is the crowds' cadence and tickers (crowd.go).
	pace pacing
}

// channel is a terminal's (or the root's) state and subscribers.
type channel struct {
	uri     string
	subs    map[Subscriber]struct{}
	term    *ahp.TerminalState // nil for the root; Content lives in content
	content *content.Store
	changed chan struct{}  // made by Pace, closed when pacing must be recomputed
	taps    []Tap          // tap.go
	meta    map[string]any // the catalogue entry's _meta (see SetInfoMeta)
	// metaJSON is meta encoded, once per change: every catalogue publish
	// carries every terminal's _meta.
	metaJSON json.RawMessage

	// Presence (presence.go): the last list sent to all, whether unlock
	// must send it again, to whom even if unchanged, whether it waits for
	// the tick (coalesce.go), what the joiners told meanwhile got, and
	// whether the channel is gone.
	presence []byte
	dirty    bool
	joiners  map[Subscriber]struct{}
	held     bool
	told     map[Subscriber][]byte
	removed  bool
	// crowd is the pacing of a crowd's viewers (crowd.go); nil until a
	// viewer that can be paced subscribes.
	crowd *crowd
}

// New returns a hub whose replay ring keeps about replayBytes of envelopes.
func New(replayBytes int) *Hub {
	return &Hub{
		root:     ahp.RootState{Agents: nil, Terminals: []ahp.TerminalInfo{}},
		channels: map[string]*channel{ahp.RootURI: {subs: map[Subscriber]struct{}{}}},
		ring:     newRing(replayBytes),
		clock:    SystemClock(),
		catSeq:   map[string]int64{},
	}
}

// AddTerminal creates a terminal channel with its initial state (content
// ignored), a scrollback budget and its taps (see Tap), and publishes the
// catalogue.
func (h *Hub) AddTerminal(uri string, st ahp.TerminalState, scrollback int, taps ...Tap) error {
	return h.AddTerminalMeta(uri, st, nil, scrollback, taps...)
}

// AddTerminalMeta is AddTerminal with the catalogue entry's _meta (see
// SetInfoMeta) in the catalogue that announces it.
func (h *Hub) AddTerminalMeta(uri string, st ahp.TerminalState, meta map[string]any, scrollback int, taps ...Tap) error {
	h.mu.Lock()
	defer h.unlock()
	if h.channels[uri] != nil {
		return fmt.Errorf("hub: channel %s exists", uri)
	}
	st.Content = nil
	ch := &channel{uri: uri, subs: map[Subscriber]struct{}{}, term: &st, content: content.New(scrollback), taps: taps}
	if len(meta) > 0 {
		ch.meta = maps.Clone(meta)
		ch.metaJSON = encodeMeta(ch.meta)
	}
	h.channels[uri] = ch
	h.order = append(h.order, uri)
	h.publishCatalogueLocked(uri)
	return nil
}

// RemoveTerminal drops a terminal channel, its subscribers and its replay
// history, and publishes the catalogue. It reports whether it existed.
func (h *Hub) RemoveTerminal(uri string) bool {
	h.mu.Lock()
	defer h.unlock()
	ch := h.channels[uri]
	if ch == nil || ch.term == nil {
		return false
	}
	ch.touch()
	ch.removed = true
	h.paceLocked(ch) // the crowd is woken: nothing waits for a ticker that stops
	delete(h.channels, uri)
	h.order = slices.DeleteFunc(h.order, func(u string) bool { return u == uri })
	h.ring.forget(uri)
	h.publishCatalogueLocked(uri)
	delete(h.catSeq, uri)
	return true
}

// Publish reduces an action produced by the server (shell output, exit) on a
// channel and delivers it. It returns the claim holder's backlog after it
// (see Pace), and false when the channel is gone.
func (h *Hub) Publish(uri string, a ahp.Action) (backlog int, ok bool) {
	h.mu.Lock()
	defer h.unlock()
	ch := h.channels[uri]
	if ch == nil {
		return 0, false
	}
	h.publishLocked(uri, a, nil)
	b, _ := ch.holderBacklogLocked()
	return b, true
}

// Do runs fn with the hub locked, for a check and a publish that must be
// atomic (a dispatch). fn must not block.
func (h *Hub) Do(fn func(tx Tx)) {
	h.mu.Lock()
	defer h.unlock()
	fn(Tx{h})
}

// Tx is the hub inside Do.
type Tx struct{ h *Hub }

// Terminal returns a terminal channel's state without its content.
func (tx Tx) Terminal(uri string) (ahp.TerminalState, bool) {
	if ch := tx.h.channels[uri]; ch != nil && ch.term != nil {
		return *ch.term, true
	}
	return ahp.TerminalState{}, false
}

// Content returns a terminal channel's content (its scrollback).
func (tx Tx) Content(uri string) []ahp.Part {
	if ch := tx.h.channels[uri]; ch != nil && ch.term != nil {
		return ch.content.Snapshot()
	}
	return nil
}

// Publish reduces an accepted action and delivers it with its origin.
func (tx Tx) Publish(uri string, a ahp.Action, origin *ahp.Origin) {
	if tx.h.channels[uri] != nil {
		tx.h.publishLocked(uri, a, origin)
	}
}

// SendTo gives env the next serverSeq and delivers it to s alone, without
// reducing or replaying it: a rejection, or the echo of an accepted
// terminal/input to its dispatcher. AHP broadcasts every accepted action,
// but input is a reducer no-op: only the dispatcher's
// write-ahead reconciliation needs the echo, while any other connection (a
// viewer link) would receive the keystrokes, passwords typed at a no-echo
// prompt included.
func (tx Tx) SendTo(s Subscriber, env ahp.Envelope) { tx.h.sendToLocked(s, env) }

// Visible reports whether s may see the channel uri and it exists.
func (tx Tx) Visible(s Subscriber, uri string) bool { return tx.h.visibleLocked(s, uri) }

// SendTo is Tx.SendTo on its own.
func (h *Hub) SendTo(s Subscriber, env ahp.Envelope) {
	h.mu.Lock()
	defer h.unlock()
	h.sendToLocked(s, env)
}

// Visible is Tx.Visible on its own.
func (h *Hub) Visible(s Subscriber, uri string) bool {
	h.mu.Lock()
	defer h.unlock()
	return h.visibleLocked(s, uri)
}

func (h *Hub) visibleLocked(s Subscriber, uri string) bool {
	if uri == ahp.RootURI {
		return true
	}
	ch := h.channels[uri]
	return ch != nil && (s.Scope() == "" || s.Scope() == uri)
}

// publishLocked assigns the next serverSeq, reduces the action into the
// channel's state, records it for replay, shows it to the channel's taps and
// delivers it to every subscriber of the channel. A change of what the
// catalogue lists publishes the catalogue after it: at once for an exit,
// coalesced for a title or a claim (catalogueChangedLocked).
func (h *Hub) publishLocked(uri string, a ahp.Action, origin *ahp.Origin) {
	h.publishAboutLocked(uri, a, origin, nil)
}

// publishAboutLocked is publishLocked for a catalogue change about the
// terminals in about (see fanOutLocked).
func (h *Hub) publishAboutLocked(uri string, a ahp.Action, origin *ahp.Origin, about map[string]bool) {
	ch := h.channels[uri]
	h.reduceLocked(ch, a)
	f := newFrame(ahp.Envelope{Channel: uri, Action: a, ServerSeq: h.nextLocked(), Origin: origin})
	// The ring counts the frame: every byte the envelope holds (titles,
	// claims, cwd, origin…), not just its payload.
	h.ring.add(f.env, f.size)
	for _, t := range ch.taps {
		t.Action(a)
	}
	h.fanOutLocked(ch, f, about)
	if ch.term != nil {
		switch a.Type {
		case ahp.TerminalClaimed:
			h.markLocked(ch, nil) // the holder that paces the shell, and presence's control, may have changed
			// A new holder is here: the old one's absence is moot.
			if _, ok := ch.meta[ext.MetaHolderAway]; ok {
				delete(ch.meta, ext.MetaHolderAway)
				ch.metaJSON = encodeMeta(ch.meta)
			}
			h.catalogueChangedLocked(uri)
		case ahp.TerminalTitleChanged:
			h.catalogueChangedLocked(uri)
		case ahp.TerminalExited:
			h.publishCatalogueLocked(uri)
		}
	}
}

// reduceLocked applies an action to a channel's state; terminal content
// goes to its store.
func (h *Hub) reduceLocked(ch *channel, a ahp.Action) {
	if ch.term == nil {
		h.root = ahp.ReduceRoot(h.root, a)
		return
	}
	*ch.term = ch.content.Reduce(*ch.term, a)
}

// fanOutLocked delivers f to the channel's subscribers. A scoped subscriber
// sees only its own terminal in the catalogue: it gets a filtered copy,
// made once per scope, and only of a change about its terminal (in about):
// nothing it receives tells what happens on the others.
//
// The claim holder's connections get it first: each delivery wakes the
// connection's writer, and the writers woken first write first, so the
// holder's echo does not wait behind a thousand viewers' writes. A crowd's
// viewers get output without waking their writers: the crowd's ticker
// wakes them a slice at a time (crowd.go).
func (h *Hub) fanOutLocked(ch *channel, f *Frame, about map[string]bool) {
	var scoped map[string]*Frame
	var redraw Redraw // skip.go
	redrawn := false
	holder := ""
	if ch.term != nil && ch.term.Claim.Kind == ahp.ClaimClient {
		holder = ch.term.Claim.ClientID
	}
	isHolder := func(s Subscriber) bool { return holder != "" && s.ClientID() == holder && !s.ViewOnly() }
	deliver := func(s Subscriber) {
		g := f
		if scope := s.Scope(); scope != "" && f.env.Action.Type == ahp.RootTerminalsChanged {
			if !about[scope] {
				return
			}
			if g = scoped[scope]; g == nil {
				env := f.env
				env.Action.Terminals = filterInfos(env.Action.Terminals, scope)
				g = newFrame(env)
				if scoped == nil {
					scoped = map[string]*Frame{}
				}
				scoped[scope] = g
			}
		}
		if p, ok := h.pacedLocked(ch, s, g); ok {
			if p.DeliverPaced(g) {
				return
			}
		} else if s.Deliver(g) {
			return
		}
		if sk, ok := s.(Skipper); ok && g.Skippable() {
			if !redrawn { // one mark of the stream for every subscriber that skips here
				redraw, redrawn = ch.redrawLocked(), true
			}
			if sk.SkipAhead(g, redraw) {
				return
			}
		}
		h.dropLocked(s)
	}
	if holder != "" {
		for s := range ch.subs {
			if isHolder(s) {
				deliver(s)
			}
		}
	}
	for s := range ch.subs {
		if !isHolder(s) {
			deliver(s)
		}
	}
}

func (h *Hub) sendToLocked(s Subscriber, env ahp.Envelope) {
	env.ServerSeq = h.nextLocked()
	if !s.Deliver(newFrame(env)) {
		h.dropLocked(s)
	}
}

func (h *Hub) catalogueLocked() []ahp.TerminalInfo {
	list := make([]ahp.TerminalInfo, 0, len(h.order))
	for _, uri := range h.order {
		t := h.channels[uri].term
		list = append(list, ahp.TerminalInfo{Resource: uri, Title: t.Title, Claim: t.Claim, Lifecycle: t.Lifecycle,
			Meta: h.channels[uri].infoMetaLocked()})
	}
	return list
}

// SetInfoMeta sets (nil: removes) one key of a terminal's catalogue _meta, a
// server extension clients that do not know it ignore, and publishes the
// catalogue (coalesced) when it changed. It reports whether the terminal
// exists.
func (h *Hub) SetInfoMeta(uri, key string, value any) bool {
	h.mu.Lock()
	defer h.unlock()
	ch := h.channels[uri]
	if ch == nil || ch.term == nil {
		return false
	}
	if old, ok := ch.meta[key]; ok == (value != nil) && reflect.DeepEqual(old, value) {
		return true
	}
	if value == nil {
		delete(ch.meta, key)
	} else {
		if ch.meta == nil {
			ch.meta = map[string]any{}
		}
		ch.meta[key] = value
	}
	ch.metaJSON = encodeMeta(ch.meta)
	h.catalogueChangedLocked(uri)
	return true
}

func (ch *channel) infoMetaLocked() json.RawMessage { return ch.metaJSON }

// encodeMeta is a catalogue entry's _meta as JSON, nil when empty.
func encodeMeta(meta map[string]any) json.RawMessage {
	if len(meta) == 0 {
		return nil
	}
	b, err := json.Marshal(meta)
	if err != nil {
		panic("hub: catalogue _meta: " + err.Error()) // values are plain JSON
	}
	return b
}

// publishCatalogueLocked publishes the full catalogue as
// root/terminalsChanged now, after a change about the terminal uri that
// matters at once (a creation, a disposal, an exit), with whatever waited
// (coalesce.go).
func (h *Hub) publishCatalogueLocked(about string) {
	h.co.noteAbout(about)
	h.co.cat = true
	h.flushLocked()
}

// catalogueChangedLocked publishes the catalogue after a change about the
// terminal uri that may come in bursts (a title, a claim, _meta): now, or
// at the next tick when the last send was less than CoalesceInterval ago.
// The action replaces the whole catalogue, so the one sent carries every
// change held back, and serverSeq goes to it alone: a client's catalogue
// is its snapshot plus the actions it got, as ever.
func (h *Hub) catalogueChangedLocked(about string) {
	h.co.noteAbout(about)
	if h.holdLocked() {
		h.co.cat = true
		return
	}
	h.sendCatalogueLocked()
}

func (c *coalescer) noteAbout(uri string) {
	if c.about == nil {
		c.about = map[string]bool{}
	}
	c.about[uri] = true
}

// sendCatalogueLocked publishes the catalogue about the terminals noted.
func (h *Hub) sendCatalogueLocked() {
	about := h.co.about
	h.co.about, h.co.cat = nil, false
	h.publishAboutLocked(ahp.RootURI, ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: h.catalogueLocked()}, nil, about)
	for uri := range about {
		h.catSeq[uri] = h.seq
	}
}

// Terminals returns the catalogue.
func (h *Hub) Terminals() []ahp.TerminalInfo {
	h.mu.Lock()
	defer h.unlock()
	return h.catalogueLocked()
}

// Seq is the current value of the action sequence counter.
func (h *Hub) Seq() int64 {
	h.mu.Lock()
	defer h.unlock()
	return h.seq
}

// ClaimedClients returns the clientIds that terminals' client claims name.
func (h *Hub) ClaimedClients() map[string]bool {
	h.mu.Lock()
	defer h.unlock()
	out := map[string]bool{}
	for _, uri := range h.order {
		if c := h.channels[uri].term.Claim; c.Kind == ahp.ClaimClient {
			out[c.ClientID] = true
		}
	}
	return out
}

func filterInfos(list []ahp.TerminalInfo, scope string) []ahp.TerminalInfo {
	out := []ahp.TerminalInfo{}
	for _, t := range list {
		if t.Resource == scope {
			out = append(out, t)
		}
	}
	return out
}
