package handlers_test

import (
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// TestRejections: every refused dispatch gets a rejection envelope with the
// dispatcher's origin, sent to the dispatcher only; the state is unchanged and
// other clients keep working.
func TestRejections(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.initialize("0.8.0", "owner")
	uri, _ := owner.createTerminal("rej", "owner", nil)
	other := ts.dial(t)
	other.initialize("0.8.0", "other")
	other.subscribe(uri)

	cases := []struct {
		name   string
		action map[string]any
		reason string
	}{
		{"server-only data", map[string]any{"type": "terminal/data", "data": "forged"}, "cannot be dispatched"},
		{"server-only exited", map[string]any{"type": "terminal/exited", "exitCode": 0}, "cannot be dispatched"},
		{"server-only cwd", map[string]any{"type": "terminal/cwdChanged", "cwd": "file:///"}, "cannot be dispatched"},
		{"server-only command", map[string]any{"type": "terminal/commandExecuted", "commandId": "x", "commandLine": "rm", "timestamp": 1}, "cannot be dispatched"},
		{"unknown type", map[string]any{"type": "terminal/explode"}, "cannot be dispatched"},
		{"input without data", map[string]any{"type": "terminal/input"}, "needs data"},
		{"input data not a string", map[string]any{"type": "terminal/input", "data": 5}, "invalid action"},
		{"claim by non-holder", map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "other"}}, "claimed by another client"},
		{"claim malformed", map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client"}}, "clientId"},
		{"resize by non-holder", map[string]any{"type": "terminal/resized", "cols": 50, "rows": 10}, "claim holder"},
		{"config on a terminal", map[string]any{"type": "root/configChanged", "config": map[string]any{}}, "root"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seq := other.dispatch(uri, tc.action)
			rej := other.waitAction("rejection", func(e ahp.Envelope) bool { return e.RejectionReason != "" })
			if rej.Origin == nil || rej.Origin.ClientID != "other" || rej.Origin.ClientSeq != seq {
				t.Errorf("rejection origin = %+v, want other/%d", rej.Origin, seq)
			}
			if !strings.Contains(rej.RejectionReason, tc.reason) {
				t.Errorf("reason %q, want it to mention %q", rej.RejectionReason, tc.reason)
			}
			if rej.Channel != uri || rej.Action.Type != tc.action["type"] {
				t.Errorf("rejection envelope %+v does not carry the action", rej)
			}
		})
	}
	t.Run("root config", func(t *testing.T) {
		other.dispatch(ahp.RootURI, map[string]any{"type": "root/configChanged", "config": map[string]any{"a": 1}})
		rej := other.waitAction("rejection", func(e ahp.Envelope) bool { return e.RejectionReason != "" })
		if rej.Channel != ahp.RootURI {
			t.Errorf("rejection on %s", rej.Channel)
		}
	})
	t.Run("unknown channel is dropped silently", func(t *testing.T) {
		before := len(other.envelopes())
		other.dispatch("ahp-terminal:/ghost", map[string]any{"type": "terminal/input", "data": "x"})
		other.mustCall("ping", map[string]any{"channel": ahp.RootURI})
		for _, e := range other.envelopes()[before:] {
			if e.Channel == "ahp-terminal:/ghost" {
				t.Errorf("got an envelope for an unknown channel: %+v", e)
			}
		}
	})
	for _, e := range owner.envelopes() {
		if e.RejectionReason != "" {
			t.Errorf("owner received someone else's rejection: %+v", e)
		}
		if e.Action.Data == "forged" {
			t.Errorf("forged data reached the owner")
		}
	}
	// The terminal still works for its owner, and its claim is unchanged.
	owner.dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo still-$((40+2))\r"})
	owner.waitOutput(uri, "still-42")
	st := owner.subscribe(uri).State.(ahp.TerminalState)
	if st.Claim.ClientID != "owner" || st.Cols != 80 {
		t.Errorf("state changed by rejected actions: %+v", st)
	}
}

// TestClaims: the holder hands over; the new holder resizes; a claim whose
// client has gone can be taken.
func TestClaims(t *testing.T) {
	ts := newServer(t)
	a := ts.dial(t)
	a.initialize("1.0.0", "a")
	uri, _ := a.createTerminal("claims", "a", nil)
	b := ts.dial(t)
	b.initialize("1.0.0", "b")
	b.subscribe(uri)

	a.dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "b"}})
	b.waitAction("handover", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalClaimed && e.Origin != nil && e.Origin.ClientID == "a"
	})
	b.waitAction("catalogue claim", func(e ahp.Envelope) bool {
		return e.Channel == ahp.RootURI && len(e.Action.Terminals) == 1 && e.Action.Terminals[0].Claim.ClientID == "b"
	})
	b.dispatch(uri, map[string]any{"type": "terminal/resized", "cols": 90, "rows": 20})
	b.waitAction("resize", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalResized && e.RejectionReason == "" })

	// a is no longer the holder.
	a.dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "a"}})
	a.waitAction("rejection", func(e ahp.Envelope) bool { return e.RejectionReason != "" })

	// b leaves: its claim can be taken over.
	_ = b.ws.CloseNow()
	b.waitClosed(t)
	for i := 0; ; i++ {
		a.dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "a"}})
		e := a.waitAction("take over", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalClaimed })
		if e.RejectionReason == "" {
			break
		}
		if i > 50 {
			t.Fatalf("could not take an abandoned claim: %s", e.RejectionReason)
		}
	}
}

// TestTwoSubscribers: both see the same envelopes in the same order; the echo
// of one client's input reaches the other with the origin.
func TestTwoSubscribers(t *testing.T) {
	ts := newServer(t)
	a := ts.dial(t)
	a.initialize("1.0.0", "a")
	uri, _ := a.createTerminal("two", "a", nil)
	b := ts.dial(t)
	b.initialize("0.8.0", "b")
	b.subscribe(uri)
	b.dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo from-$((1+1))\r"})
	a.waitAction("b's input", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalInput && e.Origin != nil && e.Origin.ClientID == "b"
	})
	a.waitOutput(uri, "from-2")
	b.waitOutput(uri, "from-2")
	a.dispatch(uri, map[string]any{"type": "terminal/input", "data": "exit 0\r"})
	a.waitAction("exit", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalExited })
	b.waitAction("exit", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalExited })
	seqs := func(c *client) []int64 {
		var out []int64
		for _, e := range c.envelopes() {
			if e.Channel == uri && e.ServerSeq > 0 {
				out = append(out, e.ServerSeq)
			}
		}
		return out
	}
	sa, sb := seqs(a), seqs(b)
	// b subscribed later: its sequence must be a suffix of a's.
	if len(sb) == 0 || len(sb) > len(sa) || mustJSON(sa[len(sa)-len(sb):]) != mustJSON(sb) {
		t.Errorf("subscriber sequences differ:\n a=%v\n b=%v", sa, sb)
	}
}
