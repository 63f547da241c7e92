package handlers_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/terminals"
)

// maxSends is how many coalesced sends fit in a window of d: one per
// terminals.CoalesceInterval, with room for the sends that go at once after
// a quiet spell (the churn pauses between rounds) and for frames in flight
// when the test starts counting; uncoalesced, each connection alone
// brings two.
func maxSends(d time.Duration) int { return int(d/terminals.CoalesceInterval)*3/2 + 2 }

// presenceFrames are the x-termhost/presence notifications of uri among
// frames, in order, as member lists.
func presenceFrames(frames [][]byte, uri string) [][]string {
	var out [][]string
	for _, f := range frames {
		var m ahp.Message
		var p terminals.PresenceList
		if json.Unmarshal(f, &m) == nil && m.Method == terminals.MethodPresence && json.Unmarshal(m.Params, &p) == nil && p.Channel == uri {
			out = append(out, describe(p.Members))
		}
	}
	return out
}

// TestPresenceChurnCoalesced: a viewer link's connections coming and going
// sixty times (several at once) reach an owner tab on the terminal
// as at most one presence notification per terminals.CoalesceInterval, and the
// last one the tab gets is the final list. (Every join and every leave was
// one notification to every subscriber: ~750 a second froze the tab.)
func TestPresenceChurnCoalesced(t *testing.T) {
	ts := newServer(t, quiet)
	owner := ts.dial(t, "User-Agent", firefoxUA)
	owner.Initialize("1.0.0", "owner-tab", ahp.RootURI)
	uri, _ := owner.CreateTerminal("churn", "owner-tab", nil)
	alone := []string{"Owner/owner/Firefox on Linux/true"}
	waitPresence(t, owner, uri, alone)
	tok := shareLabelled(t, owner, uri, "viewer", "churner")

	// 60 connections, 6 at a time. Each round waits for a coalesced list,
	// so rounds cost wall time, not CPU: 40 of them showed nothing more.
	const rounds, width = 10, 6
	start, seen := time.Now(), len(owner.Frames())
	for r := range rounds {
		var open []*client
		for i := range width {
			v := ts.dial(t, "Authorization", "Bearer "+tok)
			v.Initialize("1.0.0", fmt.Sprintf("churn-%d-%d", r, i), uri)
			open = append(open, v)
		}
		// The last joiner got the list right after its snapshot, itself in it.
		last := open[width-1]
		last.NextFrame("the joiner's presence", func(m *ahp.Message) bool { return m.Method == terminals.MethodPresence })
		for _, v := range open {
			_ = v.Conn().CloseNow()
		}
	}
	poll.Until(t, 10*time.Second, "the viewers gone from the terminal", func() bool { return len(ts.m.Subscribers(uri)) == 1 })
	poll.Until(t, 10*time.Second, "the owner's last presence to be the owner alone", func() bool {
		got := presenceFrames(owner.Frames()[seen:], uri)
		return len(got) > 0 && slices.Equal(got[len(got)-1], alone)
	})
	elapsed := time.Since(start)
	got := presenceFrames(owner.Frames()[seen:], uri)
	if limit := maxSends(elapsed); len(got) > limit {
		t.Errorf("the owner got %d presence notifications in %v of churn (%d connections), want at most %d (about one per %v)",
			len(got), elapsed.Round(time.Millisecond), rounds*width, limit, terminals.CoalesceInterval)
	}
	t.Logf("%d connections in %v: %d presence notifications to the owner", rounds*width, elapsed.Round(time.Millisecond), len(got))
}

// TestTitleChurnCoalesced: a program printing 20 000 titles (OSC 0) sends
// an owner tab watching only the root a catalogue at most once per
// terminals.CoalesceInterval (plus the creation's), the last one with the final
// title, serverSeq growing throughout, and the tab's catalogue (snapshot
// plus the actions) equal to a new subscriber's. (Every title was a full
// catalogue to every owner connection: 20 000 titles, ~7 500 catalogues.)
func TestTitleChurnCoalesced(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.SetWaitTimeout(time.Minute)
	init := owner.MustCall(ahp.MethodInitialize, map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"},
		"clientId": "owner-tab", "initialSubscriptions": []string{ahp.RootURI}})
	base := snapshotsOf(t, init)[0].State.(ahp.RootState)

	const titles = 20000
	script := fmt.Sprintf(`for ((i=1; i<=%d; i++)); do printf '\e]0;t%%d\a' $i; done; printf '\e]0;final\a'; exec cat`, titles)
	uri := ahp.TerminalURI("titles")
	start, seen := time.Now(), len(owner.Envelopes())
	owner.MustCall(ahp.MethodCreateTerminal, map[string]any{"channel": uri, "claim": map[string]any{"kind": "client", "clientId": "owner-tab"},
		"_meta": map[string]any{terminals.MetaCommand: []string{"bash", "--norc", "-c", script}}})
	titled := func(title string) func(e ahp.Envelope) bool {
		return func(e ahp.Envelope) bool {
			return e.Channel == ahp.RootURI && slices.ContainsFunc(e.Action.Terminals, func(i ahp.TerminalInfo) bool { return i.Resource == uri && i.Title == title })
		}
	}
	owner.WaitAction("the catalogue with the final title", titled("final"))
	elapsed := time.Since(start)

	envs := owner.Envelopes()
	var cats []ahp.Envelope
	for i, e := range envs {
		if i > 0 && e.ServerSeq <= envs[i-1].ServerSeq {
			t.Errorf("envelope %d: serverSeq %d after %d, want it to grow", i, e.ServerSeq, envs[i-1].ServerSeq)
		}
		if i >= seen && e.Channel == ahp.RootURI && e.Action.Type == ahp.RootTerminalsChanged {
			cats = append(cats, e)
		}
	}
	if limit := maxSends(elapsed) + 1; len(cats) > limit { // + 1: the creation goes at once
		t.Errorf("the owner got %d catalogues in %v of %d titles, want at most %d (the creation's, then one per %v)",
			len(cats), elapsed.Round(time.Millisecond), titles, limit, terminals.CoalesceInterval)
	}
	if !titled("final")(cats[len(cats)-1]) {
		t.Errorf("the last catalogue is %+v, want the final title", cats[len(cats)-1].Action.Terminals)
	}
	state := base
	for _, e := range envs {
		if e.Channel == ahp.RootURI {
			state = ahp.ReduceRoot(state, e.Action)
		}
	}
	fresh := ts.dial(t)
	res := fresh.MustCall(ahp.MethodInitialize, map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"},
		"clientId": "fresh-tab", "initialSubscriptions": []string{ahp.RootURI}})
	if got, want := stateJSON(t, state), stateJSON(t, snapshotsOf(t, res)[0].State.(ahp.RootState)); got != want {
		t.Errorf("the owner's catalogue (snapshot + actions):\n got %s\nwant %s (a new subscriber's)", got, want)
	}
	t.Logf("%d titles in %v: %d catalogues to the owner", titles, elapsed.Round(time.Millisecond), len(cats))
}
