package handlers_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/ahptest"
)

// TestJoinersSeeTheirOwnArrival: a client that
// drops and reconnects with its clientId while another one initializes,
// both with the root and a terminal, gets everything after its snapshot or
// replay, in order, and nothing before the answer that carries it; at the
// next catalogue change (a rename, seq M) every live client has the same
// root state at M, and knows the same presence list for the terminal, one
// that lists itself. The race this guards against did not show on the
// server before 8114fe9 either (60 runs); the test fails at once on the two
// ways it could happen: a joiner not held while its answer is prepared
// (5 of 5 runs), the joiner's presence published before it subscribes
// (3 of 3).
func TestJoinersSeeTheirOwnArrival(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "race-owner")
	uri, _ := owner.CreateTerminal("race", "race-owner", nil)
	subs := []string{ahp.RootURI, uri}

	type live struct {
		c    *client
		name string
		self string         // presence id
		base *ahp.RootState // for a resumed connection: the root state it resumed from
		last int64          // for a resumed connection: the watermark
	}
	initialize := func(c *client, id string) string {
		res := c.Initialize("1.0.0", id, subs...)
		self, _ := res["_meta"].(map[string]any)["termhost/presenceId"].(string)
		return self
	}
	b := &live{c: ts.dial(t), name: "b"}
	b.self = initialize(b.c, "race-b")
	a := &live{c: ts.dial(t), name: "a"}
	a.self = initialize(a.c, "race-a")
	clients := []*live{{c: owner, name: "owner"}, b, a}
	ownerSelf := ""
	{
		var r struct {
			Meta map[string]string `json:"_meta"`
		}
		for _, f := range owner.Frames() {
			var m ahp.Message
			if json.Unmarshal(f, &m) == nil && m.Result != nil && json.Unmarshal(m.Result, &r) == nil && r.Meta["termhost/presenceId"] != "" {
				ownerSelf = r.Meta["termhost/presenceId"]
				break
			}
		}
		clients[0].self = ownerSelf
	}

	const rounds = 30
	for round := range rounds {
		// a drops; a2 resumes it while f joins.
		view := rootView(t, a.c, a.base, a.last, subs, "")
		_ = a.c.Conn().CloseNow()
		a2 := &live{c: ts.dial(t), name: fmt.Sprintf("a (round %d)", round), self: a.self, base: &view.state, last: view.seen}
		f := &live{c: ts.dial(t), name: fmt.Sprintf("f%d", round)}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			a2.c.MustCall(ahp.MethodReconnect, map[string]any{"channel": ahp.RootURI, "clientId": "race-a",
				"lastSeenServerSeq": a2.last, "subscriptions": subs})
		}()
		go func() {
			defer wg.Done()
			f.self = initialize(f.c, fmt.Sprintf("race-f%d", round))
		}()
		wg.Wait()
		clients = slices.DeleteFunc(clients, func(l *live) bool { return l == a })
		a = a2
		clients = append(clients, a2, f)

		// The barrier: a rename every live client gets as root seq M.
		title := fmt.Sprintf("barrier %d", round)
		owner.Dispatch(uri, map[string]any{"type": ahp.TerminalTitleChanged, "title": title})
		renamed := func(e ahp.Envelope) bool {
			return e.Channel == ahp.RootURI && slices.ContainsFunc(e.Action.Terminals, func(i ahp.TerminalInfo) bool { return i.Title == title })
		}
		for _, l := range clients {
			l.c.WaitFrame(l.name+" gets "+title, func(m *ahp.Message, _ int) bool {
				if m.Method != "action" {
					return false
				}
				e, err := ahptest.DecodeEnvelope(m.Params)
				return err == nil && renamed(e)
			})
		}
		truth := rootView(t, owner, nil, 0, []string{ahp.RootURI}, title)
		for _, l := range clients {
			v := rootView(t, l.c, l.base, l.last, subs, title)
			if v.atBarrier != truth.atBarrier {
				t.Errorf("round %d: %s and the owner are at different seqs after %q: %d, %d", round, l.name, title, v.atBarrier, truth.atBarrier)
			}
			got, want := stateJSON(t, v.state), stateJSON(t, truth.state)
			if got != want {
				t.Errorf("round %d: %s's root state at seq %d (baseline %d):\n got %s\nwant %s (the owner's)", round, l.name, v.atBarrier, v.from, got, want)
			}
			// Every root action the owner got after l's baseline, l got too.
			var missed []int64
			for _, s := range truth.seqs {
				if s > v.from && !slices.Contains(v.seqs, s) {
					missed = append(missed, s)
				}
			}
			if len(missed) > 0 {
				t.Errorf("round %d: %s (baseline %d) missed root actions %v", round, l.name, v.from, missed)
			}
			if !slices.Contains(v.presence, l.self) {
				t.Errorf("round %d: %s (%s) is not in the presence it knows at %q: %v", round, l.name, l.self, title, v.presence)
			}
			if !slices.Equal(v.presence, truth.presence) {
				t.Errorf("round %d: %s knows presence %v at %q, the owner %v", round, l.name, v.presence, title, truth.presence)
			}
		}
		if t.Failed() {
			return
		}
	}
}

// raceView is a connection's root channel as it got it, up to the first
// catalogue that has the barrier title (all of it when barrier is "").
type raceView struct {
	state     ahp.RootState
	from      int64   // the snapshot's fromSeq, or the reconnect watermark or last replayed root seq: every root action after it comes live
	seen      int64   // the highest serverSeq seen on any channel (a reconnect watermark)
	seqs      []int64 // root serverSeqs after the baseline, in arrival order
	atBarrier int64
	presence  []string // the terminal's presence ids the connection knows at that point
}

// rootView replays a connection's frames in the order it got them; base
// and last are the state and watermark a resumed connection resumed from.
// It fails the test on actions out of order or before their baseline.
func rootView(t *testing.T, c *client, base *ahp.RootState, last int64, subs []string, barrier string) raceView {
	t.Helper()
	var v raceView
	have := map[string]bool{} // channels with a baseline
	lastSeq := map[string]int64{}
	if base != nil {
		v.state, v.from, v.seen = *base, last, last
	}
	var presence map[string][]string // from x-termhost/presence notifications, by channel
	for _, f := range c.Frames() {
		var m ahp.Message
		if err := json.Unmarshal(f, &m); err != nil {
			t.Fatal(err)
		}
		switch {
		case m.Result != nil && string(m.Result) != "null":
			var r struct {
				Type      string            `json:"type"`
				Actions   []json.RawMessage `json:"actions"`
				Snapshots []ahp.Snapshot    `json:"snapshots"`
				Snapshot  *ahp.Snapshot     `json:"snapshot"` // subscribe
			}
			if err := json.Unmarshal(m.Result, &r); err != nil {
				continue // not a snapshot-bearing answer
			}
			if r.Snapshot != nil {
				r.Snapshots = append(r.Snapshots, *r.Snapshot)
			}
			for _, sn := range r.Snapshots {
				have[sn.Resource], lastSeq[sn.Resource] = true, sn.FromSeq
				v.seen = max(v.seen, sn.FromSeq)
				if sn.Resource == ahp.RootURI {
					v.state, v.from = sn.State.(ahp.RootState), sn.FromSeq
				}
			}
			if r.Type == "replay" {
				for _, ch := range subs {
					have[ch], lastSeq[ch] = true, last
				}
				for _, raw := range r.Actions {
					e, err := ahptest.DecodeEnvelope(raw)
					if err != nil {
						t.Fatal(err)
					}
					if e.ServerSeq <= lastSeq[e.Channel] {
						t.Errorf("replay: %s seq %d after %d", e.Channel, e.ServerSeq, lastSeq[e.Channel])
					}
					lastSeq[e.Channel] = e.ServerSeq
					v.seen = max(v.seen, e.ServerSeq)
					if e.Channel == ahp.RootURI && e.RejectionReason == "" {
						// (The ring keeps only the newest catalogue: a replay may
						// skip older ones, and everything after it comes live.)
						v.state, v.from = ahp.ReduceRoot(v.state, e.Action), e.ServerSeq
						v.seqs = append(v.seqs, e.ServerSeq)
					}
				}
			}
		case m.Method == "x-termhost/presence":
			var p struct {
				Channel string `json:"channel"`
				Members []struct {
					ID string `json:"id"`
				} `json:"members"`
			}
			if err := json.Unmarshal(m.Params, &p); err == nil {
				if presence == nil {
					presence = map[string][]string{}
				}
				ids := []string{}
				for _, mb := range p.Members {
					ids = append(ids, mb.ID)
				}
				slices.Sort(ids)
				presence[p.Channel] = ids
			}
		case m.Method == "action":
			e, err := ahptest.DecodeEnvelope(m.Params)
			if err != nil {
				t.Fatal(err)
			}
			if !have[e.Channel] {
				t.Errorf("%s seq %d (%s) arrived before the answer carrying the channel's snapshot or replay", e.Channel, e.ServerSeq, e.Action.Type)
				continue
			}
			if e.ServerSeq <= lastSeq[e.Channel] {
				t.Errorf("%s seq %d (%s) arrived after seq %d", e.Channel, e.ServerSeq, e.Action.Type, lastSeq[e.Channel])
			}
			lastSeq[e.Channel] = e.ServerSeq
			v.seen = max(v.seen, e.ServerSeq)
			if e.Channel != ahp.RootURI || e.RejectionReason != "" {
				continue
			}
			v.state = ahp.ReduceRoot(v.state, e.Action)
			v.seqs = append(v.seqs, e.ServerSeq)
			if barrier != "" && slices.ContainsFunc(e.Action.Terminals, func(i ahp.TerminalInfo) bool { return i.Title == barrier }) {
				v.atBarrier = e.ServerSeq
				v.presence = knownPresence(v.state, presence)
				return v
			}
		}
	}
	v.presence = knownPresence(v.state, presence)
	return v
}

// knownPresence is the presence ids of the (one) terminal as a client
// knows them: from the catalogue's _meta (before the fix) or from the last
// x-termhost/presence notification (after).
func knownPresence(st ahp.RootState, notes map[string][]string) []string {
	for _, ids := range notes {
		return ids
	}
	ids := []string{}
	for _, info := range st.Terminals {
		var meta map[string]json.RawMessage
		if json.Unmarshal(info.Meta, &meta) != nil {
			continue
		}
		var members []struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(meta["termhost/presence"], &members) == nil {
			for _, mb := range members {
				ids = append(ids, mb.ID)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

func stateJSON(t *testing.T, st ahp.RootState) string {
	t.Helper()
	b, err := ahp.Marshal(st, ahp.Current)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
