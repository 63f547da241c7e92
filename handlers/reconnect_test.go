package handlers_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/terminals"
)

func TestReconnectReplay(t *testing.T) {
	for _, version := range []string{"0.8.0", "1.0.0"} {
		t.Run(version, func(t *testing.T) {
			ts := newServer(t)
			a := ts.dial(t)
			a.Initialize(version, "roamer")
			uri, _ := a.CreateTerminal("r", "roamer", nil)
			// Quoted so that the echo of the line does not match the wait.
			a.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo bef''ore\r"})
			a.WaitOutput(uri, "before\r\n")
			seen := a.LastSeq()
			before := a.Output(uri)
			_ = a.Conn().CloseNow()
			a.WaitClosed()

			// While a is away, someone else makes output.
			b := ts.dial(t)
			b.Initialize("1.0.0", "helper")
			b.Subscribe(uri)
			takeControl(t, b, uri, "helper") // the roamer keeps its claim for the grace: the owner's other client takes it
			b.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo while-$((6*7))\r"})
			b.WaitOutput(uri, "while-42\r\n")
			ts.m.Create(ahp.CreateTerminalParams{Channel: "ahp-terminal:/gone", Claim: &ahp.Claim{Kind: "client", ClientID: "helper"}})
			b.MustCall("disposeTerminal", map[string]any{"channel": "ahp-terminal:/gone"})

			a2 := ts.dial(t)
			res := a2.MustCall("reconnect", map[string]any{"channel": ahp.RootURI, "clientId": "roamer",
				"lastSeenServerSeq": seen, "subscriptions": []string{ahp.RootURI, uri, "ahp-terminal:/gone"}})
			var r struct {
				Type    string            `json:"type"`
				Actions []json.RawMessage `json:"actions"`
				Missing []string          `json:"missing"`
			}
			if err := json.Unmarshal(res, &r); err != nil || r.Type != "replay" {
				t.Fatalf("reconnect = %s (%v), want a replay", res, err)
			}
			if len(r.Missing) != 1 || r.Missing[0] != "ahp-terminal:/gone" {
				t.Errorf("missing = %v", r.Missing)
			}
			var replayed strings.Builder
			last := seen
			for _, raw := range r.Actions {
				e := decodeEnvelope(t, raw)
				if e.ServerSeq <= last {
					t.Fatalf("replay not ascending or not after the watermark: %d after %d", e.ServerSeq, last)
				}
				last = e.ServerSeq
				if e.Channel == uri && e.Action.Type == ahp.TerminalData {
					replayed.WriteString(e.Action.Data)
				}
			}
			if !strings.Contains(replayed.String(), "while-42") || strings.Contains(replayed.String(), "before\r\n") {
				t.Errorf("replayed output %q: want exactly what was missed", replayed.String())
			}
			// Subscriptions are live again, with no duplicate or gap.
			b.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo af''ter\r"})
			a2.WaitOutput(uri, "after\r\n")
			full := before + replayed.String() + a2.Output(uri)
			if strings.Count(full, "while-42\r\n") != 1 || strings.Count(full, "after\r\n") != 1 {
				t.Errorf("stream after reconnect has duplicates or gaps: %q", full)
			}
		})
	}
}

func TestReconnectSnapshotFallback(t *testing.T) {
	ts := newServer(t, func(tc *terminals.Config, _ *handlersConfig) { tc.ReplayBytes = 2048 })
	a := ts.dial(t)
	a.Initialize("1.0.0", "late")
	uri, _ := a.CreateTerminal("s", "late", nil)
	a.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo rea''dy\r"})
	a.WaitOutput(uri, "ready")
	seen := a.LastSeq()
	_ = a.Conn().CloseNow()
	a.WaitClosed()
	b := ts.dial(t)
	b.Initialize("1.0.0", "loud")
	b.Subscribe(uri)
	takeControl(t, b, uri, "loud")
	b.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "for i in $(seq 1 300); do echo line-$i; done\r"})
	b.WaitOutput(uri, "line-300\r\n")

	a2 := ts.dial(t)
	res := a2.MustCall("reconnect", map[string]any{"channel": ahp.RootURI, "clientId": "late",
		"lastSeenServerSeq": seen, "subscriptions": []string{ahp.RootURI, uri}})
	var r struct {
		Type      string         `json:"type"`
		Snapshots []ahp.Snapshot `json:"snapshots"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.Type != "snapshot" || len(r.Snapshots) != 2 {
		t.Fatalf("reconnect = %.300s (%v), want two snapshots", res, err)
	}
	st := r.Snapshots[1].State.(ahp.TerminalState)
	var text strings.Builder
	for _, p := range st.Content {
		text.WriteString(p.Text())
	}
	if !strings.Contains(text.String(), "line-300") {
		t.Errorf("snapshot content lacks the latest output")
	}
}

func TestReconnectPerChannel(t *testing.T) {
	ts := newServer(t)
	a := ts.dial(t)
	a.Initialize("1.0.0", "pc")
	uri, snap := a.CreateTerminal("pc", "pc", nil)
	a.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo one\r"})
	a.WaitOutput(uri, "one\r\n")
	seen := a.LastSeq()
	_ = a.Conn().CloseNow()
	a.WaitClosed()
	ts.m.Dispose(uri)
	a2 := ts.dial(t)
	res := a2.MustCall("reconnect", map[string]any{"channel": ahp.RootURI, "clientId": "pc", "subscriptions": []any{
		map[string]any{"channel": ahp.RootURI, "lastSeenServerSeq": seen},
		map[string]any{"channel": uri, "lastSeenServerSeq": snap.FromSeq},
		map[string]any{"channel": "ahp-terminal:/never", "lastSeenServerSeq": 0},
	}})
	var r struct {
		Channels []struct {
			Kind    string            `json:"kind"`
			Channel string            `json:"channel"`
			Actions []json.RawMessage `json:"actions"`
		} `json:"channels"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Channels) != 3 {
		t.Fatalf("reconnect = %s (%v)", res, err)
	}
	kinds := map[string]string{}
	for _, ch := range r.Channels {
		kinds[ch.Channel] = ch.Kind
		if ch.Kind == "replay" {
			for _, raw := range ch.Actions {
				if e := decodeEnvelope(t, raw); e.Channel != ch.Channel {
					t.Errorf("replay for %s holds an action of %s", ch.Channel, e.Channel)
				}
			}
		}
	}
	if kinds[ahp.RootURI] != "replay" || kinds[uri] != "missing" || kinds["ahp-terminal:/never"] != "missing" {
		t.Errorf("kinds = %v", kinds)
	}
}

func TestReconnectUnknownClient(t *testing.T) {
	ts := newServer(t)
	c := ts.dial(t)
	c.CallErr("reconnect", map[string]any{"channel": ahp.RootURI, "clientId": "stranger", "lastSeenServerSeq": 5, "subscriptions": []string{}}, ahp.CodeInvalidParams)
	c.CallErr("reconnect", map[string]any{"channel": ahp.RootURI, "clientId": "stranger"}, ahp.CodeInvalidParams)
	// Falling back to initialize works on the same connection.
	c.Initialize("1.0.0", "stranger")
}

// TestHolderComesBack: a claim holder that left with nobody to hand its
// claim to marks the terminal's holder away; when it reconnects the mark
// goes. Clearing it takes the hub's lock, so the connection must be
// counted in after the server's own lock is released (make test's lockrank
// build panics on the wrong order).
func TestHolderComesBack(t *testing.T) {
	for _, method := range []string{"reconnect", "initialize"} {
		t.Run(method, func(t *testing.T) {
			ts := newServer(t)
			a := ts.dial(t)
			a.Initialize("1.0.0", "holder")
			uri, _ := a.CreateTerminal("held", "holder", nil)
			seen := a.LastSeq()
			_ = a.Conn().Close(websocket.StatusNormalClosure, "bye")
			a.WaitClosed()
			away := func() bool {
				for _, ti := range ts.m.Terminals() {
					if ti.Resource == uri {
						return strings.Contains(string(ti.Meta), ext.MetaHolderAway)
					}
				}
				return false
			}
			poll.Until(t, poll.Short, "the holder marked away", away)

			a2 := ts.dial(t)
			if method == "reconnect" {
				a2.MustCall("reconnect", map[string]any{"channel": ahp.RootURI, "clientId": "holder",
					"lastSeenServerSeq": seen, "subscriptions": []string{ahp.RootURI, uri}})
			} else {
				a2.Initialize("1.0.0", "holder", uri)
			}
			poll.Until(t, poll.Short, "the away mark gone", func() bool { return !away() })
		})
	}
}
