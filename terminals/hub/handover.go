package hub

import (
	"encoding/json"
	"fmt"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/content"
)

// State is everything a hub holds, for handing it to a new termhost
// process (an upgrade): the serverSeq, every terminal's state with its
// content, and the replay ring, so clients reconnecting to the new process
// get the actions they missed as a replay.
type State struct {
	Seq       int64            `json:"seq"`
	Terminals []TerminalState  `json:"terminals"` // catalogue order
	Ring      []ahp.Envelope   `json:"ring"`      // oldest first
	Evicted   map[string]int64 `json:"evicted"`   // per channel, the highest serverSeq the ring let go
}

// TerminalState is one terminal channel in a State, its content included.
type TerminalState struct {
	URI   string            `json:"uri"`
	State ahp.TerminalState `json:"state"`
	// CommandMeta is the _meta of the commandExecuted of the content's
	// command parts, by commandId (content.Store.CommandMeta).
	CommandMeta map[string]json.RawMessage `json:"commandMeta,omitempty"`
	// InfoMeta is the catalogue entry's _meta (SetInfoMeta): the restored
	// catalogue is the one clients were given, as the replay's last
	// root/terminalsChanged says.
	InfoMeta json.RawMessage `json:"infoMeta,omitempty"`
}

// Export returns the hub's state. Call it once nothing publishes any more
// (the terminals' readers are paused), so that it is final.
func (h *Hub) Export() State {
	h.mu.Lock()
	defer h.unlock()
	h.flushLocked() // a catalogue change that waits is part of the state handed on
	st := State{Seq: h.seq, Evicted: map[string]int64{}}
	for _, uri := range h.order {
		ch := h.channels[uri]
		ts := *ch.term
		ts.Content = ch.content.Snapshot()
		st.Terminals = append(st.Terminals, TerminalState{URI: uri, State: ts, CommandMeta: ch.content.CommandMeta(), InfoMeta: ch.metaJSON})
	}
	st.Ring = h.ring.held()
	for ch, seq := range h.ring.evicted {
		st.Evicted[ch] = seq
	}
	return st
}

// Restore loads a State into a new, empty hub without publishing anything:
// serverSeq continues from st.Seq. Terminal contents are trimmed to
// scrollback.
func (h *Hub) Restore(st State, scrollback int) error {
	h.mu.Lock()
	defer h.unlock()
	if h.seq != 0 || len(h.order) != 0 {
		return fmt.Errorf("hub: restore into a hub in use")
	}
	for _, t := range st.Terminals {
		if h.channels[t.URI] != nil {
			return fmt.Errorf("hub: restore: channel %s twice", t.URI)
		}
		ts := t.State
		store := content.FromParts(ts.Content, scrollback)
		store.SetCommandMeta(t.CommandMeta)
		ts.Content = nil
		ch := &channel{uri: t.URI, subs: map[Subscriber]struct{}{}, term: &ts, content: store}
		if len(t.InfoMeta) > 0 {
			if err := json.Unmarshal(t.InfoMeta, &ch.meta); err != nil {
				return fmt.Errorf("hub: restore: %s catalogue _meta: %w", t.URI, err)
			}
			ch.metaJSON = encodeMeta(ch.meta)
		}
		h.channels[t.URI] = ch
		h.order = append(h.order, t.URI)
	}
	for _, env := range st.Ring {
		h.ring.add(env, newFrame(env).size)
	}
	for ch, seq := range st.Evicted {
		h.ring.evicted[ch] = max(h.ring.evicted[ch], seq)
	}
	h.seq = st.Seq
	// The ring keeps only the newest catalogue change; which terminals it
	// was about is not handed over, so scoped replays take it as about
	// every terminal, at its own serverSeq (never another action's).
	if r := h.ring; r.catalogue >= r.head {
		for _, uri := range h.order {
			h.catSeq[uri] = r.items[r.catalogue].env.ServerSeq
		}
	}
	h.root.Terminals = h.catalogueLocked()
	return nil
}
