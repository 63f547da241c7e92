package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/ahptest"
)

// TestOneTruth: with joins, leaves and
// reconnects in parallel with catalogue changes and output, on every
// connection and channel serverSeq only grows, the first action after a
// snapshot or replay is the next one the server published on that channel
// (no live action before a replay, none missed after a snapshot), and a
// snapshot at seq N equals the state of a client that watched everything,
// at N. The watcher's envelopes are the server's stream: it subscribed to
// the root and the terminal before anything happened on them.
func TestOneTruth(t *testing.T) {
	ts := newServer(t, quiet)
	churner := ts.dial(t)
	churner.Initialize("1.0.0", "churner")
	uri, _ := churner.CreateTerminal("truth", "churner", nil)
	watcher := ts.dial(t)
	init := watcher.MustCall(ahp.MethodInitialize, map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"},
		"clientId": "watcher", "initialSubscriptions": []string{ahp.RootURI, uri}})
	base := snapshotsOf(t, init)

	const workers, rounds = 4, 6
	var sessions [workers][]session
	// The churn runs beside the workers (a goroutine: parallel subtests
	// may run one or two at a time), paced by a ticker so that it loads
	// the server without flooding it.
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			// Each rename changes the terminal and the catalogue; the input
			// comes back as output.
			for _, a := range []map[string]any{{"type": ahp.TerminalTitleChanged, "title": fmt.Sprintf("title %d", i)},
				{"type": ahp.TerminalInput, "data": fmt.Sprintf("line %d\r", i)}} {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": ahp.MethodDispatchAction,
					"params": map[string]any{"channel": uri, "clientSeq": 1000 + 2*i, "action": a}})
				if churner.Conn().Write(context.Background(), websocket.MessageText, b) != nil {
					return
				}
			}
		}
	}()
	t.Run("joins", func(t *testing.T) {
		for w := range workers {
			t.Run(fmt.Sprintf("worker %d", w), func(t *testing.T) {
				t.Parallel()
				id := fmt.Sprintf("worker-%d", w)
				for r := range rounds {
					c := ts.dial(t)
					if r == 0 || r%3 == 1 {
						sessions[w] = append(sessions[w], session{c: c})
						c.Initialize("1.0.0", id, ahp.RootURI, uri)
					} else { // resume the previous connection, which dropped or left
						last := lastSeen(t, sessions[w][r-1])
						sessions[w] = append(sessions[w], session{c: c, resumed: true, last: last})
						c.MustCall(ahp.MethodReconnect, map[string]any{"channel": ahp.RootURI, "clientId": id,
							"lastSeenServerSeq": last, "subscriptions": []string{ahp.RootURI, uri}})
					}
					c.NextFrame("a live action", func(m *ahp.Message) bool { return m.Method == "action" })
					if r%3 == 2 {
						_ = c.Conn().Close(websocket.StatusNormalClosure, "") // leaves
					} else {
						_ = c.Conn().CloseNow() // drops: the next round reconnects
					}
					_ = c.WaitClosed()
				}
			})
		}
	})
	close(stop)
	<-stopped
	// Everything happened: one last change reaches the watcher after all.
	churner.Dispatch(uri, map[string]any{"type": ahp.TerminalTitleChanged, "title": "done"})
	watcher.WaitAction("the last change", func(e ahp.Envelope) bool {
		return e.Channel == ahp.RootURI && slices.ContainsFunc(e.Action.Terminals, func(i ahp.TerminalInfo) bool { return i.Title == "done" })
	})
	truth := newStream(t, base, watcher.Envelopes())

	live, replays := 0, 0
	for w := range workers {
		for r, ss := range sessions[w] {
			n, replayed := truth.check(t, fmt.Sprintf("worker %d round %d", w, r), ss, []string{ahp.RootURI, uri})
			live += n
			if replayed {
				replays++
			}
		}
	}
	if live == 0 || replays == 0 {
		t.Errorf("checked %d live actions and %d replays, want some of each", live, replays)
	}
}

// session is one connection of a worker: initialized, or resumed with a
// reconnect from watermark last.
type session struct {
	c       *client
	resumed bool
	last    int64
}

// lastSeen is a connection's reconnect watermark: the highest serverSeq
// it received, in an envelope or an answer, or the one it resumed from.
func lastSeen(t *testing.T, ss session) int64 {
	seq := max(ss.c.LastSeq(), ss.last)
	for _, f := range ss.c.Frames() {
		var m ahp.Message
		if json.Unmarshal(f, &m) == nil && m.Result != nil {
			var r struct {
				ServerSeq int64          `json:"serverSeq"`
				Actions   []ahp.Envelope `json:"actions"`
			}
			_ = json.Unmarshal(m.Result, &r)
			seq = max(seq, r.ServerSeq)
			for _, e := range r.Actions {
				seq = max(seq, e.ServerSeq)
			}
			for _, s := range snapshotsOf(t, m.Result) {
				seq = max(seq, s.FromSeq)
			}
		}
	}
	return seq
}

func snapshotsOf(t *testing.T, result json.RawMessage) []ahp.Snapshot {
	var r struct {
		Snapshots []ahp.Snapshot `json:"snapshots"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("result %s: %v", result, err)
	}
	return r.Snapshots
}

// stream is what the server published on each channel, and the state
// after each action, as the watcher saw it.
type stream struct {
	envs   map[string][]ahp.Envelope
	states map[string][]string // states[ch][i]: after envs[ch][i]
	first  map[string]string   // the state before envs[ch][0]
	from   map[string]int64    // the watcher's snapshot seq
}

func newStream(t *testing.T, snaps []ahp.Snapshot, envs []ahp.Envelope) *stream {
	s := &stream{envs: map[string][]ahp.Envelope{}, states: map[string][]string{}, first: map[string]string{}, from: map[string]int64{}}
	state := map[string]any{}
	for _, sn := range snaps {
		state[sn.Resource], s.from[sn.Resource] = sn.State, sn.FromSeq
		s.first[sn.Resource] = comparable(t, sn.State)
	}
	for _, e := range envs {
		if e.RejectionReason != "" || state[e.Channel] == nil {
			continue
		}
		switch st := state[e.Channel].(type) {
		case ahp.RootState:
			state[e.Channel] = ahp.ReduceRoot(st, e.Action)
		case ahp.TerminalState:
			state[e.Channel] = ahp.ReduceTerminal(st, e.Action)
		}
		s.envs[e.Channel] = append(s.envs[e.Channel], e)
		s.states[e.Channel] = append(s.states[e.Channel], comparable(t, state[e.Channel]))
	}
	return s
}

// comparable is a channel state as JSON, without a terminal's content (a
// joiner's snapshot may end with the screen redraw).
func comparable(t *testing.T, state any) string {
	if ts, ok := state.(ahp.TerminalState); ok {
		ts.Content = nil
		state = ts
	}
	b, err := ahp.Marshal(state, ahp.Current)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// at is the index of the first action after seq on ch, and the state at seq.
func (s *stream) at(ch string, seq int64) (int, string) {
	i, _ := slices.BinarySearchFunc(s.envs[ch], seq+1, func(e ahp.Envelope, q int64) int { return int(e.ServerSeq - q) })
	if i == 0 {
		return 0, s.first[ch]
	}
	return i, s.states[ch][i-1]
}

// check replays one connection's frames, in the order it got them,
// against the stream. It returns how many live actions it checked and
// whether the connection got a replay.
func (s *stream) check(t *testing.T, name string, ss session, subs []string) (live int, replayed bool) {
	t.Helper()
	next := map[string]int{} // per channel: index in s.envs of the action due next; absent: no baseline yet
	for _, f := range ss.c.Frames() {
		var m ahp.Message
		if err := json.Unmarshal(f, &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch {
		case m.Result != nil && string(m.Result) != "null":
			var r struct {
				Type    string         `json:"type"`
				Actions []ahp.Envelope `json:"actions"`
			}
			_ = json.Unmarshal(m.Result, &r)
			for _, sn := range snapshotsOf(t, m.Result) {
				if sn.FromSeq < s.from[sn.Resource] {
					t.Fatalf("%s: snapshot of %s at %d, before the watcher's", name, sn.Resource, sn.FromSeq)
				}
				i, want := s.at(sn.Resource, sn.FromSeq)
				if got := comparable(t, sn.State); got != want {
					t.Errorf("%s: snapshot of %s at seq %d:\n got %s\nwant %s (the watcher's state at %d)", name, sn.Resource, sn.FromSeq, got, want, sn.FromSeq)
				}
				next[sn.Resource] = i
			}
			if r.Type != "replay" {
				continue
			}
			replayed = true
			for _, ch := range subs {
				next[ch], _ = s.at(ch, ss.last)
			}
			for _, e := range r.Actions {
				i, _ := s.at(e.Channel, e.ServerSeq-1)
				switch {
				case i >= len(s.envs[e.Channel]) || s.envs[e.Channel][i].ServerSeq != e.ServerSeq:
					near := []int64{}
					for _, x := range s.envs[e.Channel][max(0, i-2):min(len(s.envs[e.Channel]), i+2)] {
						near = append(near, x.ServerSeq)
					}
					t.Errorf("%s: replayed %s seq %d (%s, last %d) was not published there (near: %v)", name, e.Channel, e.ServerSeq, e.Action.Type, ss.last, near)
				case i < next[e.Channel]:
					t.Errorf("%s: replayed %s seq %d out of order", name, e.Channel, e.ServerSeq)
				case i > next[e.Channel] && e.Channel != ahp.RootURI:
					// (On the root, the ring keeps only the newest catalogue.)
					t.Errorf("%s: replay of %s skips seq %d", name, e.Channel, s.envs[e.Channel][next[e.Channel]].ServerSeq)
				}
				next[e.Channel] = i + 1
			}
		case m.Method == "action":
			e, err := ahptest.DecodeEnvelope(m.Params)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			i, ok := next[e.Channel]
			switch {
			case !ok:
				t.Errorf("%s: %s seq %d arrived before the answer carrying the channel's baseline", name, e.Channel, e.ServerSeq)
				return live, replayed
			case i >= len(s.envs[e.Channel]) || s.envs[e.Channel][i].ServerSeq != e.ServerSeq:
				want := "nothing"
				if i < len(s.envs[e.Channel]) {
					want = fmt.Sprint(s.envs[e.Channel][i].ServerSeq)
				}
				t.Errorf("%s: %s seq %d arrived; the next one published there is %s", name, e.Channel, e.ServerSeq, want)
				return live, replayed
			}
			next[e.Channel] = i + 1
			live++
		}
	}
	return live, replayed
}
