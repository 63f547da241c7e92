package handlers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/testserver"
)

// TestRejections: every refused dispatch gets a rejection envelope with the
// dispatcher's origin, sent to the dispatcher only; the state is unchanged and
// other clients keep working. Every frame passes the schemas of the
// connection's version (the client's checkFrames): a rejection echoes a
// client-dispatchable action and carries a no-op for anything the schema
// cannot hold.
func TestRejections(t *testing.T) {
	for _, version := range []string{"0.8.0", "1.0.0"} {
		t.Run(version, func(t *testing.T) { testRejections(t, version) })
	}
}

func testRejections(t *testing.T, version string) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize(version, "owner")
	uri, _ := owner.CreateTerminal("rej", "owner", nil)
	other := ts.dial(t)
	other.Initialize(version, "other")
	other.Subscribe(uri)

	const noop = "terminal/input" // what a rejection carries for an action the schema cannot hold
	cases := []struct {
		name   string
		action any
		reason string
		echo   string // the action type the rejection carries; "" = the dispatched one
	}{
		// Known server-only actions valid in the receiver's schema are echoed
		// as dispatched.
		{"server-only data", map[string]any{"type": "terminal/data", "data": "forged"}, "cannot be dispatched", ""},
		{"server-only cwd", map[string]any{"type": "terminal/cwdChanged", "cwd": "file:///"}, "cannot be dispatched", ""},
		{"server-only command", map[string]any{"type": "terminal/commandExecuted", "commandId": "x", "commandLine": "rm", "timestamp": 1}, "cannot be dispatched", ""},
		{"server-only exited", map[string]any{"type": "terminal/exited", "exitCode": 0}, "cannot be dispatched", ""},
		{"server-only data without data", map[string]any{"type": "terminal/data"}, "needs data", noop},
		// Decoded, but not valid in the schema: the stand-in.
		{"server-only catalogue without resource", map[string]any{"type": "root/terminalsChanged", "terminals": []any{map[string]any{"title": "x"}}}, "cannot be dispatched", noop},
		{"server-only catalogue with garbage", map[string]any{"type": "root/terminalsChanged", "terminals": []any{map[string]any{"claim": map[string]any{"kind": "robot"}}}}, "cannot be dispatched", noop},
		{"unknown type", map[string]any{"type": "terminal/explode", "junk": []int{1}}, "cannot be dispatched", noop},
		{"action not an object", 5, "invalid action", noop},
		{"input without data", map[string]any{"type": "terminal/input"}, "needs data", noop},
		{"input data not a string", map[string]any{"type": "terminal/input", "data": 5}, "invalid action", noop},
		// (A claim by a non-holder is no rejection here: both connections are
		// owners, and the owner may always take control; see TestClaims.)
		{"claim malformed", map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client"}}, "clientId", noop},
		{"claim of an unknown kind", map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "robot", "x": 1}}, "unknown claim kind", noop},
		{"resize by non-holder", map[string]any{"type": "terminal/resized", "cols": 50, "rows": 10}, "claim holder", ""},
		{"config on a terminal", map[string]any{"type": "root/configChanged", "config": map[string]any{}}, "root", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seq := other.Dispatch(uri, tc.action)
			rej := other.WaitAction("rejection", func(e ahp.Envelope) bool { return e.RejectionReason != "" })
			if rej.Origin == nil || rej.Origin.ClientID != "other" || rej.Origin.ClientSeq != seq {
				t.Errorf("rejection origin = %+v, want other/%d", rej.Origin, seq)
			}
			if !strings.Contains(rej.RejectionReason, tc.reason) {
				t.Errorf("reason %q, want it to mention %q", rej.RejectionReason, tc.reason)
			}
			want := tc.echo
			if want == "" {
				want = tc.action.(map[string]any)["type"].(string)
			}
			if m, ok := tc.action.(map[string]any); ok && want == ahp.TerminalData && rej.Action.Data != m["data"] {
				t.Errorf("rejection of %v carries data %q, want it echoed", tc.action, rej.Action.Data)
			}
			if rej.Channel != uri || rej.Action.Type != want || (tc.echo == noop && rej.Action.Data != "") {
				t.Errorf("rejection of %v carries %+v on %s, want a %s", tc.action, rej.Action, rej.Channel, want)
			}
		})
	}
	t.Run("root config", func(t *testing.T) {
		other.Dispatch(ahp.RootURI, map[string]any{"type": "root/configChanged", "config": map[string]any{"a": 1}})
		rej := other.WaitAction("rejection", func(e ahp.Envelope) bool { return e.RejectionReason != "" })
		if rej.Channel != ahp.RootURI || rej.Action.Type != ahp.RootConfigChanged || string(rej.Action.Config["a"]) != "1" {
			t.Errorf("rejection on %s carries %+v, want the dispatched root/configChanged", rej.Channel, rej.Action)
		}
	})
	t.Run("root unknown type", func(t *testing.T) {
		other.Dispatch(ahp.RootURI, map[string]any{"type": "root/explode"})
		rej := other.WaitAction("rejection", func(e ahp.Envelope) bool { return e.RejectionReason != "" })
		if rej.Channel != ahp.RootURI || rej.Action.Type != ahp.RootConfigChanged || len(rej.Action.Config) != 0 {
			t.Errorf("rejection on %s carries %+v, want an empty root/configChanged", rej.Channel, rej.Action)
		}
	})
	t.Run("unknown channel is dropped silently", func(t *testing.T) {
		before := len(other.Envelopes())
		other.Dispatch("ahp-terminal:/ghost", map[string]any{"type": "terminal/input", "data": "x"})
		other.MustCall("ping", map[string]any{"channel": ahp.RootURI})
		for _, e := range other.Envelopes()[before:] {
			if e.Channel == "ahp-terminal:/ghost" {
				t.Errorf("got an envelope for an unknown channel: %+v", e)
			}
		}
	})
	for _, e := range owner.Envelopes() {
		if e.RejectionReason != "" {
			t.Errorf("owner received someone else's rejection: %+v", e)
		}
		if e.Action.Data == "forged" {
			t.Errorf("forged data reached the owner")
		}
	}
	// The terminal still works for its owner, and its claim is unchanged.
	owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo still-$((40+2))\r"})
	owner.WaitOutput(uri, "still-42")
	st := owner.Subscribe(uri).State.(ahp.TerminalState)
	if st.Claim.ClientID != "owner" || st.Cols != 80 {
		t.Errorf("state changed by rejected actions: %+v", st)
	}
}

// TestClaims: the holder hands over; the new holder resizes; a claim whose
// client has gone is handed on after the grace period (the owner first).
func TestClaims(t *testing.T) {
	// Between drivers: the owner may always take the claim (TestOwnerTakesClaim).
	ts := newServer(t, testserver.Terminals(func(c *terminalsConfig) { c.ClaimGrace = 50 * time.Millisecond }))
	o := ts.dial(t)
	o.Initialize("1.0.0", "o")
	uri, _ := o.CreateTerminal("claims", "o", nil)
	_, tok := share(t, o, uri, "driver", 0)
	a := ts.dial(t, "Authorization", "Bearer "+tok)
	a.Initialize("1.0.0", "a", ahp.RootURI, uri)
	b := ts.dial(t, "Authorization", "Bearer "+tok)
	b.Initialize("1.0.0", "b", ahp.RootURI, uri)
	o.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "a"}})
	a.WaitAction("claim to a", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalClaimed && e.Action.Claim.ClientID == "a"
	})

	a.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "b"}})
	b.WaitAction("handover", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalClaimed && e.Origin != nil && e.Origin.ClientID == "a"
	})
	b.WaitAction("catalogue claim", func(e ahp.Envelope) bool {
		return e.Channel == ahp.RootURI && len(e.Action.Terminals) == 1 && e.Action.Terminals[0].Claim.ClientID == "b"
	})
	b.Dispatch(uri, map[string]any{"type": "terminal/resized", "cols": 90, "rows": 20})
	b.WaitAction("resize", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalResized && e.RejectionReason == "" })

	// a is no longer the holder.
	a.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "a"}})
	a.WaitAction("rejection", func(e ahp.Envelope) bool { return e.RejectionReason != "" })

	// b leaves: after the grace its claim goes to the owner, connected.
	_ = b.Conn().CloseNow()
	b.WaitClosed()
	e := a.WaitAction("handed on", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalClaimed && e.Action.Claim.ClientID != "b"
	})
	if e.Origin != nil || e.Action.Claim != ahp.ClientClaim("o") {
		t.Errorf("claim handed on = %+v (origin %+v), want the owner's, by the server", e.Action.Claim, e.Origin)
	}
}

// TestTwoSubscribers: both see the same envelopes in the same order; the echo
// of one client's input reaches that client only.
func TestTwoSubscribers(t *testing.T) {
	ts := newServer(t)
	a := ts.dial(t)
	a.Initialize("1.0.0", "a")
	uri, _ := a.CreateTerminal("two", "a", nil)
	b := ts.dial(t)
	b.Initialize("0.8.0", "b")
	b.Subscribe(uri)
	takeControl(t, b, uri, "b") // the holder types: b (the owner's) takes control
	b.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo from-$((1+1))\r"})
	b.WaitAction("b's echo", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalInput && e.Origin != nil && e.Origin.ClientID == "b"
	})
	a.WaitOutput(uri, "from-2")
	b.WaitOutput(uri, "from-2")
	takeControl(t, a, uri, "a")
	a.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "exit 0\r"})
	a.WaitAction("exit", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalExited })
	b.WaitAction("exit", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalExited })
	for _, e := range a.Envelopes() {
		if e.Action.Type == ahp.TerminalInput && e.Origin != nil && e.Origin.ClientID == "b" {
			t.Errorf("a received b's input: %+v", e)
		}
	}
	// Input echoes go to their dispatcher only: compare the shared stream.
	shared := func(c *client) []int64 {
		var out []int64
		for _, e := range c.Envelopes() {
			if e.Channel == uri && e.ServerSeq > 0 && e.Action.Type != ahp.TerminalInput {
				out = append(out, e.ServerSeq)
			}
		}
		return out
	}
	sa, sb := shared(a), shared(b)
	// b subscribed later: its sequence must be a suffix of a's.
	if len(sb) == 0 || len(sb) > len(sa) || mustJSON(sa[len(sa)-len(sb):]) != mustJSON(sb) {
		t.Errorf("subscriber sequences differ:\n a=%v\n b=%v", sa, sb)
	}
}
