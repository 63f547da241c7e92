package hub

import "github.com/termhost/termhost/ahp"

// Tap is an extension of one terminal channel: something that follows the
// channel's actions (a screen model, a recorder) and may add to what a
// joiner is given. A terminal's publish path is then pty → hub →
// subscribers, with its taps beside the subscribers instead of in front of
// the hub. The hub calls a tap's methods while holding its lock, so they
// must not block.
type Tap interface {
	// Action sees each action of the channel, whoever published it (the
	// terminal, a dispatch), in serverSeq order and before any subscriber
	// is given it.
	Action(a ahp.Action)
	// Snapshot is called as a joiner's snapshot of the channel is taken
	// (Join), at exactly its point of the action stream. It may return an
	// Amend, which the hub runs once its lock is released and before the
	// join returns: work that may wait (a screen model catching up) goes
	// there. nil: nothing to amend.
	Snapshot() Amend
}

// Amend changes a joiner's snapshot of a channel (the screen model adds the
// redraw of the screen to its content). It runs outside the hub lock and
// may wait; it may be run twice, for a join that names a channel twice.
type Amend func(snap *ahp.Snapshot)

// AddTap attaches t to a terminal channel, after its other taps (see also
// AddTerminal, which attaches taps as it creates the channel). It reports
// whether the channel exists.
func (h *Hub) AddTap(uri string, t Tap) bool {
	h.mu.Lock()
	defer h.unlock()
	ch := h.channels[uri]
	if ch == nil || ch.term == nil {
		return false
	}
	ch.taps = append(ch.taps, t)
	return true
}

// Join is the hub as a joiner sees it: Subscribe, Initialize and Reconnect
// as the Hub's own, with each snapshot amended by its channel's taps
// (Tap.Snapshot). The Hub's own give the channels' state alone.
type Join struct{ h *Hub }

// Join returns the hub as joiners see it.
func (h *Hub) Join() Join { return Join{h} }

// Subscribe is Hub.Subscribe with the snapshot amended by the taps.
func (j Join) Subscribe(s Subscriber, uri string) (ahp.Snapshot, error) {
	am := &amends{}
	snap, err := j.h.subscribe(s, uri, am)
	if err == nil {
		am.apply(&snap)
	}
	return snap, err
}

// Initialize is Hub.Initialize with the snapshots amended by the taps.
func (j Join) Initialize(s Subscriber, uris []string) (int64, []ahp.Snapshot) {
	am := &amends{}
	seq, snaps := j.h.initialize(s, uris, am)
	for i := range snaps {
		am.apply(&snaps[i])
	}
	return seq, snaps
}

// Reconnect is Hub.Reconnect with the snapshots amended by the taps; a
// replay is as it is.
func (j Join) Reconnect(s Subscriber, p ahp.ReconnectParams) Recovery {
	am := &amends{}
	r := j.h.reconnect(s, p, am)
	switch r.Kind {
	case Snapshots:
		for i := range r.Snapshot.Snapshots {
			am.apply(&r.Snapshot.Snapshots[i])
		}
	case PerChannel:
		for _, c := range r.Channels.Channels {
			if c.Snapshot != nil {
				am.apply(c.Snapshot)
			}
		}
	}
	return r
}

// amends are the taps' amendments of the snapshots one join takes, by
// channel. A nil *amends (the Hub's own joins) asks no tap.
type amends struct{ by map[string]Amend }

// tapLocked asks ch's taps for their amendments of the snapshot being
// taken: once per channel and join (every snapshot of a join is taken at
// the same point).
func (am *amends) tapLocked(ch *channel) {
	if am == nil || ch == nil || ch.term == nil {
		return
	}
	if _, asked := am.by[ch.uri]; asked {
		return
	}
	var fns []Amend
	for _, t := range ch.taps {
		if fn := t.Snapshot(); fn != nil {
			fns = append(fns, fn)
		}
	}
	if am.by == nil {
		am.by = map[string]Amend{}
	}
	am.by[ch.uri] = nil
	switch len(fns) {
	case 0:
	case 1:
		am.by[ch.uri] = fns[0]
	default:
		am.by[ch.uri] = func(snap *ahp.Snapshot) {
			for _, fn := range fns {
				fn(snap)
			}
		}
	}
}

// apply runs the amendment of snap's channel, if any.
func (am *amends) apply(snap *ahp.Snapshot) {
	if fn := am.by[snap.Resource]; fn != nil {
		fn(snap)
	}
}
