package terminals

import "github.com/termhost/termhost/ahp"

// ring keeps the most recent accepted envelopes, bounded by the bytes of their
// payloads, for reconnect replay. For each channel it remembers the highest
// serverSeq it has evicted, so it can tell exactly whether a channel's history
// after a cursor is still complete.
type ring struct {
	limit   int
	size    int
	items   []ahp.Envelope // oldest first; head index avoids copying on evict
	head    int
	evicted map[string]int64
}

func newRing(limit int) *ring { return &ring{limit: limit, evicted: map[string]int64{}} }

func envelopeSize(e ahp.Envelope) int {
	return 64 + len(e.Action.Data) + len(e.Action.CommandLine) + len(e.Action.Raw) + 96*len(e.Action.Terminals)
}

func (r *ring) add(e ahp.Envelope) {
	r.items = append(r.items, e)
	r.size += envelopeSize(e)
	for r.size > r.limit && r.head < len(r.items) {
		old := r.items[r.head]
		r.items[r.head] = ahp.Envelope{}
		r.head++
		r.size -= envelopeSize(old)
		r.evicted[old.Channel] = old.ServerSeq
	}
	if r.head > 1024 && r.head*2 > len(r.items) { // compact
		r.items = append([]ahp.Envelope(nil), r.items[r.head:]...)
		r.head = 0
	}
}

// complete reports whether every envelope of channel after seq is still held.
func (r *ring) complete(channel string, after int64) bool {
	return r.evicted[channel] <= after
}

// since returns the held envelopes after seq for the given channels, ascending.
func (r *ring) since(after int64, channels map[string]bool) []ahp.Envelope {
	out := []ahp.Envelope{}
	for _, e := range r.items[r.head:] {
		if e.ServerSeq > after && channels[e.Channel] {
			out = append(out, e)
		}
	}
	return out
}

// forget drops the eviction watermark of a disposed channel.
func (r *ring) forget(channel string) { delete(r.evicted, channel) }
