package hub

import (
	"unsafe"

	"github.com/termhost/termhost/ahp"
)

// ring keeps the most recent accepted envelopes, bounded by their encoded
// size plus the memory of the envelope itself, for reconnect replay. For each
// channel it remembers the highest serverSeq it has evicted, so it can tell
// exactly whether a channel's history after a cursor is still complete.
type ring struct {
	limit   int
	size    int
	items   []held // oldest first; head index avoids copying on evict
	head    int
	evicted map[string]int64
	// catalogue is the index in items of the newest root/terminalsChanged,
	// -1 if none is held. A newer one supersedes it: the action replaces the
	// whole catalogue, so replaying only the newest gives the same state,
	// and the ring does not fill with a full catalogue per terminal created.
	catalogue int
}

// held is an envelope in the ring and the bytes it counts for.
type held struct {
	env  ahp.Envelope
	size int
}

func newRing(limit int) *ring { return &ring{limit: limit, evicted: map[string]int64{}, catalogue: -1} }

// envelopeOverhead is what a held envelope costs beyond its strings' bytes:
// the structs themselves (an Action has many fields) and the origin.
const envelopeOverhead = int(unsafe.Sizeof(held{}) + unsafe.Sizeof(ahp.Origin{}))

// add keeps e, whose encoded frame is frameLen bytes (every string it holds
// is in the frame), and evicts the oldest envelopes past the budget.
func (r *ring) add(e ahp.Envelope, frameLen int) {
	h := held{env: e, size: envelopeOverhead + frameLen}
	if e.Channel == ahp.RootURI && e.Action.Type == ahp.RootTerminalsChanged {
		if r.catalogue >= r.head {
			r.size -= r.items[r.catalogue].size
			r.items[r.catalogue] = held{} // superseded: skipped by since and eviction
		}
		r.catalogue = len(r.items)
	}
	r.items = append(r.items, h)
	r.size += h.size
	for r.size > r.limit && r.head < len(r.items) {
		old := r.items[r.head]
		r.items[r.head] = held{}
		r.head++
		r.size -= old.size
		if old.env.Channel != "" {
			r.evicted[old.env.Channel] = old.env.ServerSeq
		}
	}
	if r.head > 1024 && r.head*2 > len(r.items) { // compact
		r.items = append([]held(nil), r.items[r.head:]...)
		r.catalogue -= r.head
		r.head = 0
	}
}

// held returns the envelopes held, oldest first.
func (r *ring) held() []ahp.Envelope {
	var out []ahp.Envelope
	for _, h := range r.items[r.head:] {
		if h.env.Channel != "" {
			out = append(out, h.env)
		}
	}
	return out
}

// complete reports whether every envelope of channel after seq is still held.
func (r *ring) complete(channel string, after int64) bool {
	return r.evicted[channel] <= after
}

// since returns the held envelopes after seq for the given channels, ascending.
func (r *ring) since(after int64, channels map[string]bool) []ahp.Envelope {
	out := []ahp.Envelope{}
	for _, h := range r.items[r.head:] {
		if h.env.ServerSeq > after && channels[h.env.Channel] {
			out = append(out, h.env)
		}
	}
	return out
}

// forget drops the eviction watermark of a disposed channel.
func (r *ring) forget(channel string) { delete(r.evicted, channel) }
