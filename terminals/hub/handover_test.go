package hub

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// TestExportRestore: a hub restored from another's
// exported state, through JSON as a hand-over sends it, continues its
// serverSeq, has the same snapshots and replays what a client missed
// before the hand-over; the ring's evictions stay known (a snapshot, not a
// replay with a hole).
func TestExportRestore(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replay   int
		wantKind RecoveryKind
	}{
		{"ring holds the missed actions", 1 << 20, Replayed},
		{"ring evicted some", 2048, Snapshots},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := newHub(t, tc.replay, term1, term2)
			last := old.Seq()
			for i := range 30 {
				old.Publish(term1, data(strings.Repeat("x", 90)+string(rune('a'+i%26))))
			}
			old.Publish(term2, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "two"})
			// Extensions: a command's mark (beside the terminal's state) and
			// the catalogue's _meta (in the root's).
			old.Publish(term2, ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: "c1", CommandLine: "make", Timestamp: 1,
				Meta: json.RawMessage(`{"termhost/runBy":{"kind":"agent","name":"Agent"}}`)})
			old.SetInfoMeta(term2, "termhost/runsCommand", true)
			b, err := json.Marshal(old.Export())
			if err != nil {
				t.Fatal(err)
			}
			var st State
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatal(err)
			}
			h := counting(New(tc.replay))
			if err := h.Restore(st, 1<<20); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if got, want := h.Seq(), old.Seq(); got != want {
				t.Fatalf("Seq = %d, want %d", got, want)
			}
			if got, want := h.Terminals(), old.Terminals(); !reflect.DeepEqual(got, want) {
				t.Fatalf("catalogue = %+v, want %+v", got, want)
			}
			for _, uri := range []string{ahp.RootURI, term1, term2} {
				got, _ := h.Subscribe(newSub("a"), uri)
				want, _ := old.Subscribe(newSub("a"), uri)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s snapshot = %+v, want %+v", uri, got, want)
				}
			}
			rec := h.Reconnect(newSub("me"), ahp.ReconnectParams{LastSeenServerSeq: &last, Subscriptions: []string{term1, term2}})
			if rec.Kind != tc.wantKind {
				t.Fatalf("Reconnect = %v, want %v", rec.Kind, tc.wantKind)
			}
			if rec.Kind == Replayed && len(rec.Replay.Actions) != 32 {
				t.Fatalf("replayed %d actions, want 32", len(rec.Replay.Actions))
			}
			h.Publish(term1, data("next"))
			if got := h.Seq(); got <= old.Seq() {
				t.Fatalf("Seq after a publish = %d, want > %d", got, old.Seq())
			}
		})
	}
}

// TestScopedReplayAfterRestoreKeepsSeqsUnique: a share link's connection
// reconnecting to a restored hub gets its terminal's catalogue entry in the
// replay at the serverSeq of the catalogue change it stands for. Restore
// used to date that change at the hub's last serverSeq, which belongs to
// another action when the catalogue was not the last one published, so
// the replay carried two envelopes with one serverSeq.
func TestScopedReplayAfterRestoreKeepsSeqsUnique(t *testing.T) {
	old := newHub(t, 1<<20, term1, term2)
	last := old.Seq()
	old.Publish(term1, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "renamed"})
	old.Publish(term1, data("after the rename"))
	old.Export() // sends the catalogue the rename may have left waiting
	old.Publish(term1, data("the last action before the upgrade"))
	st := old.Export()
	h := counting(New(1 << 20))
	if err := h.Restore(st, 1<<20); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	link := newSub("link")
	link.scope = term1
	rec := h.Reconnect(link, ahp.ReconnectParams{LastSeenServerSeq: &last, Subscriptions: []string{ahp.RootURI, term1}})
	if rec.Kind != Replayed {
		t.Fatalf("Reconnect = %v, want a replay", rec.Kind)
	}
	var seqs []int64
	catalogues := 0
	for _, e := range rec.Replay.Actions {
		seqs = append(seqs, e.ServerSeq)
		if e.Action.Type == ahp.RootTerminalsChanged {
			catalogues++
		}
	}
	if catalogues != 1 {
		t.Fatalf("replay has %d catalogues, want the renamed entry once: %v", catalogues, seqs)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("replay serverSeqs %v: %d does not follow %d", seqs, seqs[i], seqs[i-1])
		}
	}
}
