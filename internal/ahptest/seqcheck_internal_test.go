package ahptest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// TestSeqCheck: the per-connection check fails a repeated or older
// serverSeq on a channel, live or replayed, and an action older than a
// snapshot given before it; it lets through what a connection may
// receive: other channels interleaved, gaps, a snapshot then newer actions.
func TestSeqCheck(t *testing.T) {
	term, other := "ahp-terminal:/a", "ahp-terminal:/b"
	env := func(ch string, seq int64) ahp.Envelope {
		return ahp.Envelope{Channel: ch, ServerSeq: seq, Action: ahp.Action{Type: ahp.TerminalData, Data: "x"}}
	}
	result := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	type step struct {
		live   *ahp.Envelope
		result json.RawMessage
		bad    string // "" when the step keeps the invariant, else part of the complaint
	}
	live := func(ch string, seq int64, bad string) step { e := env(ch, seq); return step{live: &e, bad: bad} }
	for name, steps := range map[string][]step{
		"in order, channels interleaved, gaps": {live(term, 5, ""), live(other, 3, ""), live(term, 9, ""), live(other, 10, "")},
		"the same serverSeq twice":             {live(term, 5, ""), live(term, 5, "serverSeq 5 (terminal/data) after 5")},
		"one serverSeq on two channels":        {live(ahp.RootURI, 6, ""), live(term, 6, "as an action of ahp-root:// at that serverSeq")},
		"an older one":                         {live(term, 5, ""), live(term, 4, "serverSeq 4 (terminal/data) after 5")},
		"a replay then live": {
			{result: result(map[string]any{"type": "replay", "actions": []ahp.Envelope{env(term, 3), env(term, 4)}})},
			live(term, 4, "live ahp-terminal:/a serverSeq 4"),
		},
		"a replay out of order": {
			{result: result(map[string]any{"type": "replay", "actions": []ahp.Envelope{env(term, 4), env(term, 4)}}), bad: "replayed ahp-terminal:/a serverSeq 4"},
		},
		"a snapshot then newer actions": {
			{result: result(map[string]any{"snapshot": map[string]any{"resource": term, "state": map[string]any{}, "fromSeq": 7}})},
			live(term, 8, ""),
		},
		"an action older than the snapshot before it": {
			{result: result(map[string]any{"snapshots": []any{map[string]any{"resource": term, "state": map[string]any{}, "fromSeq": 7}}})},
			live(term, 7, "serverSeq 7 (terminal/data) after 7"),
		},
		"a snapshot older than an action before it": {
			live(term, 9, ""),
			{result: result(map[string]any{"type": "snapshot", "snapshots": []any{map[string]any{"resource": term, "state": map[string]any{}, "fromSeq": 7}}}), bad: "fromSeq 7 after serverSeq 9"},
		},
		"per-channel recovery": {
			live(other, 2, ""),
			{result: result(map[string]any{"channels": []any{
				map[string]any{"kind": "replay", "channel": term, "actions": []ahp.Envelope{env(term, 3)}},
				map[string]any{"kind": "snapshot", "channel": other, "snapshot": map[string]any{"resource": other, "state": map[string]any{}, "fromSeq": 1}},
			}}), bad: "fromSeq 1 after serverSeq 2"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var c seqCheck
			for i, s := range steps {
				var got []string
				if s.live != nil {
					if msg := c.action(*s.live, "live"); msg != "" {
						got = append(got, msg)
					}
				} else {
					got = c.result(s.result)
				}
				switch {
				case s.bad == "" && len(got) > 0:
					t.Errorf("step %d: %v, want no complaint", i, got)
				case s.bad != "" && (len(got) != 1 || !strings.Contains(got[0], s.bad)):
					t.Errorf("step %d: %v, want one complaint with %q", i, got, s.bad)
				}
			}
		})
	}
}
