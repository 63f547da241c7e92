package hub

import (
	"slices"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// TestReconnect: replay while the ring holds every missed envelope of the
// subscriptions, snapshots once it has evicted one; gone channels are
// missing; the new connection is subscribed in the same step.
func TestReconnect(t *testing.T) {
	cases := []struct {
		name     string
		replay   int // ring budget
		output   int // bytes published after the cursor
		subs     []string
		wantKind RecoveryKind
		missing  int
	}{
		{"replay", 1 << 20, 100, []string{term1}, Replayed, 0},
		{"replay with a gone channel", 1 << 20, 100, []string{term1, "ahp-terminal:/gone"}, Replayed, 1},
		{"snapshot once evicted", 1024, 8 << 10, []string{term1}, Snapshots, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHub(t, tc.replay, term1)
			last := h.Seq()
			for range tc.output / 100 {
				h.Publish(term1, data(strings.Repeat("y", 100)))
			}
			s := newSub("me")
			rec := h.Reconnect(s, ahp.ReconnectParams{LastSeenServerSeq: &last, Subscriptions: tc.subs})
			if rec.Kind != tc.wantKind {
				t.Fatalf("Reconnect kind = %v, want %v", rec.Kind, tc.wantKind)
			}
			switch rec.Kind {
			case Replayed:
				if got := len(rec.Replay.Actions); got != tc.output/100 {
					t.Errorf("replayed %d actions, want %d", got, tc.output/100)
				}
				if len(rec.Replay.Missing) != tc.missing {
					t.Errorf("missing %v, want %d", rec.Replay.Missing, tc.missing)
				}
				if _, ok := rec.Result().(ahp.ReplayResult); !ok {
					t.Errorf("Result() is %T, want ahp.ReplayResult", rec.Result())
				}
			case Snapshots:
				if len(rec.Snapshot.Snapshots) != 1 {
					t.Errorf("%d snapshots, want 1", len(rec.Snapshot.Snapshots))
				}
				if _, ok := rec.Result().(ahp.SnapshotResult); !ok {
					t.Errorf("Result() is %T, want ahp.SnapshotResult", rec.Result())
				}
			}
			h.Publish(term1, data("after"))
			if env := s.envelopes(); len(env) != 1 || env[0].Action.Data != "after" {
				t.Errorf("after reconnect the connection got %+v, want the next output", env)
			}
		})
	}
}

// TestReconnectPerChannel: each cursor is answered on its own: replay,
// snapshot (no or evicted cursor) or missing.
func TestReconnectPerChannel(t *testing.T) {
	h := newHub(t, 1<<20, term1, term2)
	cursor := h.Seq()
	h.Publish(term1, data("one"))
	rec := h.Reconnect(newSub("me"), ahp.ReconnectParams{PerChannel: true, Cursors: []ahp.ChannelCursor{
		{Channel: term1, LastSeenServerSeq: cursor},
		{Channel: term2},
		{Channel: "ahp-terminal:/gone", LastSeenServerSeq: cursor},
	}})
	if rec.Kind != PerChannel || rec.Kind.String() != "channels" {
		t.Fatalf("kind = %v, want channels", rec.Kind)
	}
	want := []string{ahp.RecoveryReplay, ahp.RecoverySnapshot, ahp.RecoveryMissing}
	if len(rec.Channels.Channels) != len(want) {
		t.Fatalf("%d recoveries, want %d", len(rec.Channels.Channels), len(want))
	}
	for i, c := range rec.Channels.Channels {
		if string(c.Kind) != want[i] {
			t.Errorf("channel %s: kind %q, want %q", c.Channel, c.Kind, want[i])
		}
	}
	if _, ok := rec.Result().(ahp.ChannelsResult); !ok {
		t.Errorf("Result() is %T, want ahp.ChannelsResult", rec.Result())
	}
}

// TestRingBudget: the ring keeps the newest envelopes within its budget
// and knows per channel whether a history is complete.
func TestRingBudget(t *testing.T) {
	r := newRing(4 * (envelopeOverhead + 100))
	for i := range 10 {
		ch := term1
		if i%2 == 1 {
			ch = term2
		}
		r.add(ahp.Envelope{Channel: ch, ServerSeq: int64(i + 1)}, 100)
	}
	got := r.since(0, map[string]bool{term1: true, term2: true})
	if len(got) != 4 || got[0].ServerSeq != 7 {
		t.Errorf("ring holds %d envelopes from seq %d, want 4 from 7", len(got), got[0].ServerSeq)
	}
	cases := []struct {
		channel string
		after   int64
		want    bool
	}{
		{term1, 0, false}, {term1, 5, true}, {term2, 5, false}, {term2, 6, true},
	}
	for _, tc := range cases {
		if got := r.complete(tc.channel, tc.after); got != tc.want {
			t.Errorf("complete(%s, %d) = %v, want %v", tc.channel, tc.after, got, tc.want)
		}
	}
	r.forget(term1)
	if !r.complete(term1, 0) {
		t.Errorf("complete after forget = false, want true")
	}
}

// TestRingKeepsNewestCatalogue: a root/terminalsChanged replaces the whole
// catalogue, so the ring keeps only the newest one (200 creations must not
// fill it with 200 catalogues); replay still gives the same state and the
// root's history counts as complete.
func TestRingKeepsNewestCatalogue(t *testing.T) {
	r := newRing(1 << 20)
	seq := int64(0)
	add := func(ch string, a ahp.Action) {
		seq++
		r.add(ahp.Envelope{Channel: ch, ServerSeq: seq, Action: a}, 100)
	}
	for i := range 5 {
		add(ahp.RootURI, ahp.Action{Type: ahp.RootTerminalsChanged, Terminals: make([]ahp.TerminalInfo, i+1)})
		add(term1, ahp.Action{Type: ahp.TerminalData, Data: "x"})
	}
	got := r.since(0, map[string]bool{ahp.RootURI: true, term1: true})
	var seqs []int64
	for _, e := range got {
		seqs = append(seqs, e.ServerSeq)
	}
	if want := []int64{2, 4, 6, 8, 9, 10}; !slices.Equal(seqs, want) {
		t.Errorf("replay from 0 has seqs %v, want %v (only the newest catalogue, seq 9)", seqs, want)
	}
	if n := len(got[4].Action.Terminals); n != 5 {
		t.Errorf("the catalogue kept lists %d terminals, want 5 (the newest)", n)
	}
	if want := 6 * (envelopeOverhead + 100); r.size != want {
		t.Errorf("ring size %d, want %d (superseded catalogues no longer counted)", r.size, want)
	}
	if !r.complete(ahp.RootURI, 0) {
		t.Error("root history after 0 counted incomplete, want complete")
	}
	if held := r.held(); len(held) != 6 {
		t.Errorf("held() has %d envelopes, want 6", len(held))
	}
}
