package hub

import (
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/termhost/termhost/ahp"
)

// TestSeqTellsNothingOfOtherTerminals: what a link
// scoped to term1 can read of serverSeq (the seq of a rejection of its own
// dispatch, a fresh subscribe's fromSeq, the gap between two envelopes of
// its terminal) moves with time only, not with the keystroke echoes and
// output of term2. With a counter, the owner's 40 keys showed as +40.
func TestSeqTellsNothingOfOtherTerminals(t *testing.T) {
	for _, typing := range []int{0, 40} {
		h := newHub(t, 1<<20, term1, term2)
		viewer, owner := newSub("viewer"), newSub("me")
		viewer.scope, viewer.viewOnly = term1, true
		h.Initialize(viewer, []string{ahp.RootURI, term1})
		h.Initialize(owner, []string{ahp.RootURI, term1, term2})
		var now atomic.Int64
		now.Store(1_000_000)
		h.SetClock(func() int64 { return now.Load() })

		// What the viewer observes at one instant.
		observe := func() (rejection, fromSeq, output int64) {
			h.SendTo(viewer, ahp.Envelope{Channel: term1, Action: ahp.Action{Type: ahp.TerminalInput, Data: "x"}, RejectionReason: "view only"})
			snap, err := h.Subscribe(viewer, term1)
			if err != nil {
				t.Fatal(err)
			}
			h.Publish(term1, data("tick"))
			envs := viewer.envelopes()
			return envs[len(envs)-2].ServerSeq, snap.FromSeq, envs[len(envs)-1].ServerSeq
		}
		r1, f1, d1 := observe()
		for i := range typing { // the owner types at a password prompt on term2, 1 ms apart
			now.Add(1000)
			key := ahp.Action{Type: ahp.TerminalInput, Data: "k"}
			h.SendTo(owner, ahp.Envelope{Channel: term2, Action: key, Origin: &ahp.Origin{ClientID: "me", ClientSeq: int64(i)}})
			if i%10 == 9 {
				h.Publish(term2, data("\r\n"))
			}
		}
		now.Store(2_000_000)
		r2, f2, d2 := observe()
		for _, c := range []struct {
			what   string
			before int64
			after  int64
		}{{"rejection serverSeq", r1, r2}, {"subscribe fromSeq", f1, f2}, {"terminal/data serverSeq", d1, d2}} {
			if got := c.after - c.before; got != 1_000_000 {
				t.Errorf("with %d keys typed on %s: %s moved by %d between two observations 1 s apart, want 1000000 (the clock)",
					typing, term2, c.what, got)
			}
		}
		for _, e := range viewer.envelopes() {
			if e.Channel == ahp.RootURI {
				t.Errorf("viewer got a catalogue at seq %d: nothing about its terminal changed", e.ServerSeq)
			}
		}
	}
}

// TestSeqAhead: serverSeq never goes back and never repeats, whether the
// clock stands still or steps back.
func TestSeqAhead(t *testing.T) {
	h := newHub(t, 1<<20, term1)
	var now atomic.Int64
	h.SetClock(func() int64 { return now.Load() })
	last := h.Seq()
	for _, at := range []int64{5_000, 5_000, 4_000, 9_000, 0} {
		now.Store(at)
		h.Publish(term1, data("x"))
		if got := h.Seq(); got <= last || got < at {
			t.Fatalf("clock at %d after seq %d: serverSeq %d, want > %d and ≥ %d", at, last, got, last, at)
		}
		last = h.Seq()
	}
}

// TestScopedReplayCatalogue: a scoped subscriber's replay has no catalogue
// change about other terminals, and the change about its own terminal
// even when the ring kept only a newer catalogue (about another one).
func TestScopedReplayCatalogue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(t, 1<<20, term1, term2)
		viewer := newSub("viewer")
		viewer.scope = term1
		seq, _ := h.Initialize(viewer, []string{ahp.RootURI, term1})
		h.Publish(term1, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "mine"})
		tickPast() // the catalogue of a rename waits for the tick
		at := h.Seq()
		h.Publish(term1, data("out"))
		h.Publish(term2, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "theirs"})
		tickPast()

		again := newSub("viewer")
		again.scope = term1
		rec := h.Reconnect(again, ahp.ReconnectParams{LastSeenServerSeq: &seq, Subscriptions: []string{ahp.RootURI, term1}})
		if rec.Kind != Replayed {
			t.Fatalf("Reconnect = %v, want replay", rec.Kind)
		}
		var cats []ahp.Envelope
		prev := seq
		for _, e := range rec.Replay.Actions {
			if e.ServerSeq <= prev {
				t.Errorf("replay not ascending: %d after %d", e.ServerSeq, prev)
			}
			prev = e.ServerSeq
			if e.Action.Type == ahp.RootTerminalsChanged {
				cats = append(cats, e)
			}
		}
		if len(cats) != 1 {
			t.Fatalf("replay holds %d catalogues, want 1", len(cats))
		}
		if list := cats[0].Action.Terminals; cats[0].ServerSeq != at || len(list) != 1 || list[0].Resource != term1 || list[0].Title != "mine" {
			t.Errorf("replayed catalogue = %+v at %d, want only %s titled mine at %d", list, cats[0].ServerSeq, term1, at)
		}

		// Nothing about term1 since: no catalogue at all.
		last := h.Seq()
		h.Publish(term2, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "theirs again"})
		tickPast()
		third := newSub("viewer")
		third.scope = term1
		rec = h.Reconnect(third, ahp.ReconnectParams{LastSeenServerSeq: &last, Subscriptions: []string{ahp.RootURI, term1}})
		if rec.Kind != Replayed || len(rec.Replay.Actions) != 0 {
			t.Errorf("Reconnect after a change of %s only = %v with %d actions, want an empty replay", term2, rec.Kind, len(rec.Replay.Actions))
		}
	})
}
