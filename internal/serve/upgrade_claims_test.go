package serve

import (
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

// echoScript echoes each line it reads as got-<line>.
const echoScript = `while read -r l; do echo "got-$l"; done`

// echoOf is the echo of w's dispatch clientSeq on channel, once it came.
func (w *watcher) echoOf(channel string, seq int64) (ahp.Envelope, bool) {
	for _, ev := range w.events() {
		env := ev.Envelope
		if ev.Kind == client.EventAction && ev.Channel == channel && env.Origin != nil &&
			env.Origin.ClientID == w.c.ClientID() && env.Origin.ClientSeq == seq {
			return env, true
		}
	}
	return ahp.Envelope{}, false
}

// typeAndWait dispatches line to channel and returns the server's answer to
// it: its echo, with a rejection reason if refused.
func (w *watcher) typeAndWait(t *testing.T, channel, line string) ahp.Envelope {
	t.Helper()
	seq, err := w.c.Dispatch(t.Context(), channel, ahp.Action{Type: ahp.TerminalInput, Data: line + "\r"})
	if err != nil {
		t.Fatalf("input: %v", err)
	}
	var env ahp.Envelope
	waitFor(t, "the answer to the input", func() bool {
		var ok bool
		env, ok = w.echoOf(channel, seq)
		return ok
	})
	return env
}

// TestUpgradeFreesClaimsOfGoneHolders: a claim holder that closed its
// connection before "termhost upgrade" does not hold the claim in the new
// process: another client types at once and gets control. A holder still
// connected at the upgrade keeps its claim: it reconnects, and another
// client's input is refused.
func TestUpgradeFreesClaimsOfGoneHolders(t *testing.T) {
	t.Parallel()
	s := startUpgradable(t)
	gone, kept := ahp.TerminalURI("gone"), ahp.TerminalURI("kept")
	left := watch(t, s.url, "claims-left")
	commandTerminal(t, left, gone, echoScript)
	stays := watch(t, s.url, "claims-stays")
	commandTerminal(t, stays, kept, echoScript)
	if err := left.c.Close(); err != nil { // a normal close: it left
		t.Fatal(err)
	}
	// The server has counted it out: nobody else watches its terminal.
	waitFor(t, "the holder's departure in the log", func() bool {
		return strings.Contains(s.logText(), "claim holder left; nobody present may take the claim")
	})

	upgradeNow(t, s)
	waitFor(t, "the connected holder's reconnect", func() bool { return stays.saw(client.EventReconnected) })
	other := watch(t, s.url, "claims-other", gone, kept)
	if env := other.typeAndWait(t, gone, "typed-after"); env.RejectionReason != "" {
		t.Fatalf("input into the terminal whose holder left before the upgrade: refused (%q), want accepted at once", env.RejectionReason)
	}
	waitFor(t, "the echo of the input", func() bool { out, _ := other.stream(gone); return strings.Contains(out, "got-typed-after") })
	if st, _ := other.c.Terminal(gone); st.Claim != ahp.ClientClaim(other.c.ClientID()) {
		t.Fatalf("claim after typing = %+v, want the client that typed", st.Claim)
	}
	if env := other.typeAndWait(t, kept, "not-mine"); !strings.Contains(env.RejectionReason, "only the claim holder") {
		t.Fatalf("input into the connected holder's terminal: rejection %q, want refused", env.RejectionReason)
	}
	if st, _ := other.c.Terminal(kept); st.Claim != ahp.ClientClaim(stays.c.ClientID()) {
		t.Fatalf("claim of the connected holder's terminal after the upgrade = %+v, want still its holder's", st.Claim)
	}
}
