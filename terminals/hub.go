package terminals

import (
	"bytes"
	"sync"

	"github.com/termhost/termhost/ahp"
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
	// Backlog is the number of bytes queued and not yet written.
	Backlog() int
	// Deliver queues one encoded frame. It returns false when the connection's
	// queue is over its bound; the hub then drops the subscriber from every
	// channel and the connection closes itself (the client recovers by reconnect).
	Deliver(frame []byte) bool
}

// hub owns the one serverSeq counter, every channel's state and subscribers, and
// the replay ring. One mutex keeps "assign seq, reduce, enqueue to subscribers"
// atomic across channels, so a connection always receives envelopes in serverSeq
// order and a legacy reconnect watermark never skips one.
type hub struct {
	mu       sync.Mutex
	seq      int64
	root     ahp.RootState
	channels map[string]*channel // by URI, the root included
	ring     *ring
	scratch  []byte // encoding buffer, reused under mu
}

// channel is a terminal's (or the root's) subscribers.
type channel struct {
	subs map[Subscriber]struct{}
}

func newHub(replayBytes int) *hub {
	h := &hub{
		root:     ahp.RootState{Agents: nil, Terminals: []ahp.TerminalInfo{}},
		channels: map[string]*channel{ahp.RootURI: {subs: map[Subscriber]struct{}{}}},
		ring:     newRing(replayBytes),
	}
	return h
}

// frames encodes one envelope lazily, once per (shape, scope) combination that a
// subscriber needs, so the same bytes go to every subscriber with that view.
type frames struct {
	h       *hub
	env     ahp.Envelope
	byShape [2][]byte
	scoped  map[scopeKey][]byte
}

type scopeKey struct {
	shape ahp.Shape
	scope string
}

func (f *frames) get(s Subscriber) []byte {
	shape, scope := s.Shape(), s.Scope()
	if scope == "" || f.env.Action.Type != ahp.RootTerminalsChanged {
		return f.unscoped(shape)
	}
	k := scopeKey{shape, scope}
	if b, ok := f.scoped[k]; ok {
		return b
	}
	env := f.env
	env.Action.Terminals = filterInfos(env.Action.Terminals, scope)
	b := f.h.encode(env, shape)
	if f.scoped == nil {
		f.scoped = map[scopeKey][]byte{}
	}
	f.scoped[k] = b
	return b
}

// unscoped is the frame of the envelope in a wire shape, for every
// subscriber that sees the whole catalogue (or any other action).
func (f *frames) unscoped(shape ahp.Shape) []byte {
	if b := f.byShape[shape]; b != nil {
		return b
	}
	b := f.h.encode(f.env, shape)
	f.byShape[shape] = b
	if !shapeDependent(f.env.Action.Type) {
		f.byShape[1-shape] = b
	}
	return b
}

func shapeDependent(actionType string) bool {
	return actionType == ahp.RootTerminalsChanged || actionType == ahp.TerminalClaimed || actionType == ""
}

// encode writes one envelope frame: into the reused scratch buffer, then
// copied out at its exact size (queued frames hold no slack, and the escaper
// never regrows a guessed buffer). h.mu must be held.
func (h *hub) encode(env ahp.Envelope, shape ahp.Shape) []byte {
	b, err := ahp.AppendEnvelope(h.scratch[:0], env, shape)
	if err != nil {
		panic("terminals: encode envelope: " + err.Error()) // our own types always encode
	}
	if cap(b) <= maxScratch {
		h.scratch = b
	} else {
		h.scratch = nil
	}
	return bytes.Clone(b)
}

// maxScratch bounds the encoding buffer kept between frames.
const maxScratch = 512 << 10

func filterInfos(list []ahp.TerminalInfo, scope string) []ahp.TerminalInfo {
	out := []ahp.TerminalInfo{}
	for _, t := range list {
		if t.Resource == scope {
			out = append(out, t)
		}
	}
	return out
}

// publishLocked assigns the next serverSeq to an accepted action, records it for
// replay and queues it to every subscriber of the channel. The caller has
// already applied the action to the channel's state. h.mu must be held.
func (h *hub) publishLocked(uri string, a ahp.Action, origin *ahp.Origin) int64 {
	h.seq++
	f := &frames{h: h, env: ahp.Envelope{Channel: uri, Action: a, ServerSeq: h.seq, Origin: origin}}
	// The ring counts the encoded frame: every byte the envelope holds
	// (titles, claims, cwd, origin…), not just its payload.
	h.ring.add(f.env, len(f.unscoped(ahp.Current)))
	if ch := h.channels[uri]; ch != nil {
		for s := range ch.subs {
			if !s.Deliver(f.get(s)) {
				h.dropLocked(s)
			}
		}
	}
	return h.seq
}

// rejectLocked sends a rejection envelope to the dispatcher only; it takes a
// serverSeq but is not replayed (§8.4).
func (h *hub) rejectLocked(s Subscriber, uri string, a ahp.Action, origin ahp.Origin, reason string) {
	h.sendOnlyLocked(s, ahp.Envelope{Channel: uri, Action: a, Origin: &origin, RejectionReason: reason})
}

// echoInputLocked confirms an accepted terminal/input to its dispatcher only,
// exactly once, with its origin and a serverSeq, and keeps it out of the
// replay ring (so out of every replay and snapshot). §8.3 says to broadcast
// every accepted action, but input is a reducer no-op (§8.5): only the
// dispatcher's write-ahead reconciliation needs the echo, while any other
// connection (a viewer link) would receive the keystrokes, passwords typed
// at a no-echo prompt included.
func (h *hub) echoInputLocked(s Subscriber, uri string, a ahp.Action, origin ahp.Origin) {
	h.sendOnlyLocked(s, ahp.Envelope{Channel: uri, Action: a, Origin: &origin})
}

// sendOnlyLocked gives env the next serverSeq and queues it to s alone.
func (h *hub) sendOnlyLocked(s Subscriber, env ahp.Envelope) {
	h.seq++
	env.ServerSeq = h.seq
	if !s.Deliver(h.encode(env, s.Shape())) {
		h.dropLocked(s)
	}
}

func (h *hub) dropLocked(s Subscriber) {
	for _, ch := range h.channels {
		delete(ch.subs, s)
	}
}

func (h *hub) subscribeLocked(uri string, s Subscriber) {
	h.channels[uri].subs[s] = struct{}{}
}

// holder is implemented by subscribers that answer requests on the same
// stream as envelopes: from Hold on they keep envelopes back until the answer
// carrying the snapshot is queued, so nothing newer overtakes it.
type holder interface{ Hold() }

func holdLocked(s Subscriber) {
	if h, ok := s.(holder); ok {
		h.Hold()
	}
}
