package hub

import (
	"slices"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// fakeTap records what its channel shows it and, at each snapshot, how
// many actions it had seen; its amendment appends a part naming that count.
type fakeTap struct {
	h         *Hub
	sub       *fakeSub // a subscriber of the channel
	seen      []string // action types, in order
	had       []int    // per action: what sub had been given when the tap saw it
	snapshots []int    // actions seen at each Snapshot
	unlocked  []bool   // per amendment: it ran with the hub lock free
}

func (f *fakeTap) Action(a ahp.Action) {
	f.seen = append(f.seen, a.Type)
	f.had = append(f.had, len(f.sub.envelopes()))
}

func (f *fakeTap) Snapshot() Amend {
	n := len(f.seen)
	f.snapshots = append(f.snapshots, n)
	return func(snap *ahp.Snapshot) {
		free := f.h.mu.TryLock()
		if free {
			f.h.mu.Unlock()
		}
		f.unlocked = append(f.unlocked, free)
		st := snap.State.(ahp.TerminalState)
		st.Content = append(st.Content, ahp.Part{Type: ahp.PartUnclassified, Value: "amended"})
		snap.State = st
	}
}

// TestTapSeesActionsFirst: a channel's tap sees each of its actions, the
// terminal's and dispatched ones, in serverSeq order and before any
// subscriber; another channel's actions never.
func TestTapSeesActionsFirst(t *testing.T) {
	h := newHub(t, 1<<20, term2)
	sub := newSub("me")
	tap := &fakeTap{h: h, sub: sub}
	st := ahp.TerminalState{Title: term1, Cols: 80, Rows: 24, Lifecycle: ahp.Running(), Claim: ahp.ClientClaim("me")}
	if err := h.AddTerminal(term1, st, 1<<20, tap); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Subscribe(sub, term1); err != nil {
		t.Fatal(err)
	}
	h.Publish(term1, data("one"))
	h.Publish(term2, data("elsewhere"))
	h.Do(func(tx Tx) {
		tx.Publish(term1, ahp.Action{Type: ahp.TerminalResized, Cols: 100, Rows: 30}, &ahp.Origin{ClientID: "me"})
	})
	h.Publish(term1, ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: "c1", CommandLine: "ls"})
	h.Publish(term1, data("two"))
	want := []string{ahp.TerminalData, ahp.TerminalResized, ahp.TerminalCommandExecuted, ahp.TerminalData}
	if !slices.Equal(tap.seen, want) {
		t.Fatalf("tap saw %v, want %v", tap.seen, want)
	}
	if got := sub.types(); !slices.Equal(got, want) {
		t.Fatalf("subscriber got %v, want %v", got, want)
	}
	for i, n := range tap.had {
		if n != i {
			t.Errorf("action %d (%s): the subscriber had %d actions when the tap saw it, want %d (not this one yet)", i, want[i], n, i)
		}
	}
	if h.AddTap("ahp-terminal:/gone", tap) {
		t.Errorf("AddTap(unknown channel) = true, want false")
	}
	late := &fakeTap{h: h, sub: newSub("x")}
	if !h.AddTap(term1, late) {
		t.Fatalf("AddTap(%s) = false, want true", term1)
	}
	h.Publish(term1, data("three"))
	if !slices.Equal(late.seen, []string{ahp.TerminalData}) || len(tap.seen) != 5 {
		t.Errorf("after AddTap: new tap saw %v, first %d actions; want the new action each", late.seen, len(tap.seen))
	}
}

// TestTapAmendsSnapshot: a joiner's snapshot (Join) is asked of the
// channel's taps at exactly its point of the stream and amended outside
// the hub lock, by every form of join; the Hub's own joins are not.
func TestTapAmendsSnapshot(t *testing.T) {
	zero := int64(0)
	joins := []struct {
		name   string
		join   func(h *Hub, s Subscriber) []ahp.Snapshot
		amends bool
	}{
		{"subscribe", func(h *Hub, s Subscriber) []ahp.Snapshot {
			snap, err := h.Join().Subscribe(s, term1)
			if err != nil {
				t.Fatal(err)
			}
			return []ahp.Snapshot{snap}
		}, true},
		{"initialize", func(h *Hub, s Subscriber) []ahp.Snapshot {
			_, snaps := h.Join().Initialize(s, []string{ahp.RootURI, term1, term1})
			return snaps
		}, true},
		{"reconnect", func(h *Hub, s Subscriber) []ahp.Snapshot {
			gone := int64(1 << 40) // past the ring: snapshots
			r := h.Join().Reconnect(s, ahp.ReconnectParams{LastSeenServerSeq: &gone, Subscriptions: []string{term1}})
			if r.Kind != Snapshots {
				t.Fatalf("reconnect: %v, want snapshots", r.Kind)
			}
			return r.Snapshot.Snapshots
		}, true},
		{"per channel", func(h *Hub, s Subscriber) []ahp.Snapshot {
			r := h.Join().Reconnect(s, ahp.ReconnectParams{PerChannel: true, Cursors: []ahp.ChannelCursor{{Channel: term1}}})
			return []ahp.Snapshot{*r.Channels.Channels[0].Snapshot}
		}, true},
		{"hub's own subscribe", func(h *Hub, s Subscriber) []ahp.Snapshot {
			snap, _ := h.Subscribe(s, term1)
			return []ahp.Snapshot{snap}
		}, false},
		{"hub's own reconnect", func(h *Hub, s Subscriber) []ahp.Snapshot {
			r := h.Reconnect(s, ahp.ReconnectParams{LastSeenServerSeq: &zero, Subscriptions: []string{term1}})
			return r.Snapshot.Snapshots
		}, false},
	}
	for _, tc := range joins {
		t.Run(tc.name, func(t *testing.T) {
			h := newHub(t, 0, term1) // no ring: a reconnect gets snapshots
			tap := &fakeTap{h: h, sub: newSub("x")}
			h.AddTap(term1, tap)
			h.Publish(term1, data("a"))
			h.Publish(term1, data("b"))
			snaps := tc.join(h, newSub("me"))
			h.Publish(term1, data("c")) // after the join: in no snapshot
			if !tc.amends {
				if len(tap.snapshots) != 0 {
					t.Fatalf("taps asked %d times, want none", len(tap.snapshots))
				}
				return
			}
			if !slices.Equal(tap.snapshots, []int{2}) {
				t.Fatalf("tap asked at %v actions, want once, at 2", tap.snapshots)
			}
			n := 0
			for _, snap := range snaps {
				if snap.Resource != term1 {
					continue
				}
				n++
				content := snap.State.(ahp.TerminalState).Content
				if got := content[0].Text(); got != "ab" || content[len(content)-1].Value != "amended" {
					t.Errorf("snapshot content %+v, want \"ab\" then the amendment", content)
				}
			}
			if n == 0 || len(tap.unlocked) != n || slices.Contains(tap.unlocked, false) {
				t.Errorf("%d snapshots, amendments ran %v (true: outside the hub lock), want one each, unlocked", n, tap.unlocked)
			}
		})
	}
}
