package hub

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/termhost/termhost/ahp"
)

// TestFanOutOrder: every subscriber of a channel gets its envelopes in
// serverSeq order, the same Frame (so the same bytes, encoded once), and
// a publish on one channel reaches only that channel's subscribers.
func TestFanOutOrder(t *testing.T) {
	h := newHub(t, 1<<20, term1, term2)
	a, b, other := newSub("me"), newSub("you"), newSub("x")
	for _, sub := range []struct {
		s   *fakeSub
		uri string
	}{{a, term1}, {b, term1}, {other, term2}} {
		if _, err := h.Subscribe(sub.s, sub.uri); err != nil {
			t.Fatalf("Subscribe(%s): %v", sub.uri, err)
		}
	}
	for i := range 50 {
		if _, ok := h.Publish(term1, data(strings.Repeat("x", i))); !ok {
			t.Fatalf("Publish(%s) = false, want true", term1)
		}
	}
	ea, eb := a.envelopes(), b.envelopes()
	if len(ea) != 50 || len(eb) != 50 {
		t.Fatalf("got %d and %d envelopes, want 50 each", len(ea), len(eb))
	}
	for i := range ea {
		if i > 0 && ea[i].ServerSeq <= ea[i-1].ServerSeq {
			t.Errorf("envelope %d: serverSeq %d after %d, want ascending", i, ea[i].ServerSeq, ea[i-1].ServerSeq)
		}
		if a.frames[i] != b.frames[i] {
			t.Errorf("envelope %d: subscribers got different frames, want one shared frame", i)
		}
	}
	if n := len(other.envelopes()); n != 0 {
		t.Errorf("a subscriber of %s got %d envelopes of %s, want 0", term2, n, term1)
	}
	if got := h.Seq(); got != ea[49].ServerSeq {
		t.Errorf("Seq() = %d, want the last envelope's %d", got, ea[49].ServerSeq)
	}
}

// TestFrameEncodedOncePerShape: a frame's bytes are computed once per wire
// shape (once in all when the shapes agree) and shared.
func TestFrameEncodedOncePerShape(t *testing.T) {
	cases := []struct {
		name      string
		action    ahp.Action
		sameBytes bool
	}{
		{"data is shape independent", data("hi\x1b[0m"), true},
		{"claim differs by shape", ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim("me")}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFrame(ahp.Envelope{Channel: term1, Action: tc.action, ServerSeq: 7})
			cur := f.Bytes(ahp.Current)
			if again := f.Bytes(ahp.Current); &again[0] != &cur[0] {
				t.Errorf("Bytes(Current) encoded twice")
			}
			leg := f.Bytes(ahp.Legacy)
			if same := &leg[0] == &cur[0]; same != tc.sameBytes {
				t.Errorf("Legacy and Current share bytes: %v, want %v", same, tc.sameBytes)
			}
			want, err := ahp.AppendEnvelope(nil, f.Envelope(), ahp.Current)
			if err != nil || string(cur) != string(want) {
				t.Errorf("Bytes(Current) = %s, want %s (%v)", cur, want, err)
			}
			if f.Size() <= 0 {
				t.Errorf("Size() = %d, want > 0", f.Size())
			}
		})
	}
}

// TestScopedCatalogue: a subscriber scoped to one terminal sees only that
// terminal in the catalogue, live and in its snapshot.
func TestScopedCatalogue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(t, 1<<20, term1)
		scoped, all := newSub("v"), newSub("me")
		scoped.scope = term1
		snap, err := h.Subscribe(scoped, ahp.RootURI)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Subscribe(all, ahp.RootURI); err != nil {
			t.Fatal(err)
		}
		if n := len(snap.State.(ahp.RootState).Terminals); n != 1 {
			t.Errorf("scoped root snapshot lists %d terminals, want 1", n)
		}
		if err := h.AddTerminal(term2, ahp.TerminalState{Title: "two"}, 0); err != nil {
			t.Fatal(err)
		}
		h.Publish(term2, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "2"})
		tickPast() // the rename came right after the creation: it waited
		if n := len(all.envelopes()); n != 2 {
			t.Fatalf("unscoped subscriber got %d catalogues, want 2", n)
		}
		if n := len(all.envelopes()[1].Action.Terminals); n != 2 {
			t.Errorf("unscoped catalogue lists %d terminals, want 2", n)
		}
		// Changes to another terminal send the scoped subscriber nothing.
		if got := scoped.envelopes(); len(got) != 0 {
			t.Errorf("scoped subscriber got %d frames about %s, want none", len(got), term2)
		}
		h.Publish(term1, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "1"})
		tickPast()
		envs := scoped.envelopes()
		if len(envs) != 1 {
			t.Fatalf("scoped subscriber got %d frames after a change of its terminal, want 1", len(envs))
		}
		got := envs[0].Action.Terminals
		if len(got) != 1 || got[0].Resource != term1 || got[0].Title != "1" {
			t.Errorf("scoped catalogue = %+v, want only %s titled 1", got, term1)
		}
		if _, err := h.Subscribe(scoped, term2); !errors.Is(err, ErrNotFound) {
			t.Errorf("scoped Subscribe(%s) = %v, want ErrNotFound", term2, err)
		}
	})
}

// TestSlowSubscriberDropped: a subscriber whose queue is full is dropped
// from every channel; the others go on.
func TestSlowSubscriberDropped(t *testing.T) {
	h := newHub(t, 1<<20, term1)
	slow, ok := newSub("slow"), newSub("ok")
	for _, s := range []*fakeSub{slow, ok} {
		h.Initialize(s, []string{ahp.RootURI, term1})
	}
	slow.full = true
	h.Publish(term1, data("a"))
	slow.full = false
	h.Publish(term1, data("b"))
	h.RemoveTerminal(term1)
	if got := slow.types(); len(got) != 0 {
		t.Errorf("dropped subscriber got %v, want nothing", got)
	}
	if got, want := ok.types(), []string{ahp.TerminalData, ahp.TerminalData, ahp.RootTerminalsChanged}; !slices.Equal(got, want) {
		t.Errorf("other subscriber got %v, want %v", got, want)
	}
}

// TestSendToIsPrivate: a rejection or input echo reaches the dispatcher
// only, takes a serverSeq, is not reduced and is never replayed.
func TestSendToIsPrivate(t *testing.T) {
	h := newHub(t, 1<<20, term1)
	me, other := newSub("me"), newSub("other")
	h.Initialize(me, []string{term1})
	h.Initialize(other, []string{term1})
	before := h.Seq()
	h.Do(func(tx Tx) {
		if !tx.Visible(me, term1) {
			t.Errorf("Visible(%s) = false, want true", term1)
		}
		tx.SendTo(me, ahp.Envelope{Channel: term1, Action: ahp.Action{Type: ahp.TerminalInput, Data: "secret"}})
	})
	h.SendTo(me, ahp.Envelope{Channel: term1, Action: data("x"), RejectionReason: "no"})
	if got := len(me.envelopes()); got != 2 {
		t.Errorf("dispatcher got %d envelopes, want 2", got)
	}
	if got := len(other.envelopes()); got != 0 {
		t.Errorf("another subscriber got %d envelopes, want 0", got)
	}
	if h.Seq() != before+2 {
		t.Errorf("Seq() = %d, want %d", h.Seq(), before+2)
	}
	rec := h.Reconnect(newSub("me"), ahp.ReconnectParams{LastSeenServerSeq: &before, Subscriptions: []string{term1}})
	if rec.Kind != Replayed || len(rec.Replay.Actions) != 0 {
		t.Errorf("reconnect after private envelopes = %v with %d actions, want an empty replay", rec.Kind, len(rec.Replay.Actions))
	}
	snap, _ := h.Subscribe(newSub("me"), term1)
	if c := snap.State.(ahp.TerminalState).Content; len(c) != 0 {
		t.Errorf("snapshot content %+v, want none (a rejected action is not reduced)", c)
	}
}

// TestReduceAndSnapshot: published actions are reduced into the snapshot,
// content through the store, and the catalogue follows titles and exits.
func TestReduceAndSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(t, 1<<20, term1)
		root := newSub("me")
		h.Subscribe(root, ahp.RootURI)
		code := 3
		h.Publish(term1, data("hello "))
		h.Publish(term1, data("world"))
		h.Do(func(tx Tx) {
			tx.Publish(term1, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "renamed"}, &ahp.Origin{ClientID: "me"})
		})
		h.Publish(term1, ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: "c1", CommandLine: "ls"})
		h.Publish(term1, ahp.Action{Type: ahp.TerminalExited, ExitCode: &code})
		snap, err := h.Subscribe(newSub("me"), term1)
		if err != nil {
			t.Fatal(err)
		}
		st := snap.State.(ahp.TerminalState)
		if len(st.Content) != 2 || st.Content[0].Text() != "hello world" || st.Content[1].CommandID != "c1" {
			t.Errorf("content = %+v, want the text then command c1", st.Content)
		}
		if st.Title != "renamed" || !st.Lifecycle.Exited() || st.SupportsCommandDetection == nil {
			t.Errorf("state = %+v, want renamed, exited, with command detection", st)
		}
		// The rename came right after the creation: it waited, and the exit,
		// published at once, carries it.
		if got, want := root.types(), []string{ahp.RootTerminalsChanged}; !slices.Equal(got, want) {
			t.Errorf("root subscriber got %v, want one catalogue, the exit's: %v", got, want)
		} else if info := root.envelopes()[0].Action.Terminals[0]; info.Title != "renamed" || !info.Lifecycle.Exited() {
			t.Errorf("the exit's catalogue lists %+v, want it renamed and exited", info)
		}
		if infos := h.Terminals(); len(infos) != 1 || infos[0].Title != "renamed" {
			t.Errorf("Terminals() = %+v, want one renamed terminal", infos)
		}
		if _, ok := h.Publish("ahp-terminal:/gone", data("x")); ok {
			t.Errorf("Publish on an unknown channel = true, want false")
		}
		if _, err := h.Subscribe(newSub("me"), "not a uri"); !errors.Is(err, ErrInvalid) {
			t.Errorf("Subscribe(bad uri) = %v, want ErrInvalid", err)
		}
	})
}

// TestHoldBeforeSnapshot: every operation that answers with a snapshot
// holds the subscriber first, so later envelopes wait for the answer.
func TestHoldBeforeSnapshot(t *testing.T) {
	h := newHub(t, 1<<20, term1)
	zero := int64(0)
	ops := map[string]func(s *fakeSub){
		"subscribe":  func(s *fakeSub) { _, _ = h.Subscribe(s, term1) },
		"initialize": func(s *fakeSub) { h.Initialize(s, []string{term1}) },
		"reconnect": func(s *fakeSub) {
			h.Reconnect(s, ahp.ReconnectParams{LastSeenServerSeq: &zero, Subscriptions: []string{term1}})
		},
		"per channel": func(s *fakeSub) {
			h.Reconnect(s, ahp.ReconnectParams{PerChannel: true, Cursors: []ahp.ChannelCursor{{Channel: term1}}})
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			s := newSub("me")
			op(s)
			if s.holds != 1 {
				t.Errorf("%s held the subscriber %d times, want 1", name, s.holds)
			}
		})
	}
}

// TestUnsubscribeAndLeave: no envelope after Unsubscribe or Leave.
func TestUnsubscribeAndLeave(t *testing.T) {
	h := newHub(t, 1<<20, term1)
	a, b := newSub("a"), newSub("b")
	h.Initialize(a, []string{ahp.RootURI, term1})
	h.Initialize(b, []string{ahp.RootURI, term1})
	h.Unsubscribe(a, term1)
	h.Unsubscribe(a, "ahp-terminal:/unknown")
	h.Leave(b)
	h.Publish(term1, data("x"))
	if got := a.types(); len(got) != 0 {
		t.Errorf("unsubscribed subscriber got %v", got)
	}
	if got := b.types(); len(got) != 0 {
		t.Errorf("subscriber that left got %v", got)
	}
	if claimed := h.ClaimedClients(); !claimed["me"] || len(claimed) != 1 {
		t.Errorf("ClaimedClients() = %v, want {me}", claimed)
	}
	if h.AddTerminal(term1, ahp.TerminalState{}, 0) == nil {
		t.Errorf("AddTerminal(existing) = nil, want an error")
	}
	if !h.RemoveTerminal(term1) || h.RemoveTerminal(term1) {
		t.Errorf("RemoveTerminal: want true once, then false")
	}
	if h.Visible(a, term1) {
		t.Errorf("Visible(removed) = true")
	}
}
