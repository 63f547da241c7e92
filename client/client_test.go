package client_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/bench/wirecount"
)

func TestDialInitializes(t *testing.T) {
	ts := newServer(t)
	c := dial(t, ts.URL, client.Options{InitialSubscriptions: []string{ahp.RootURI, "ahp-terminal:/none"}})
	if got := c.Version(); got != "1.0.0" {
		t.Errorf("Version() = %q, want 1.0.0 (the first offered)", got)
	}
	root, ok := c.Root()
	if !ok || len(root.Terminals) != 0 {
		t.Errorf("Root() = %+v, %v; want an empty catalogue", root, ok)
	}
	if _, ok := c.State("ahp-terminal:/none"); ok {
		t.Errorf("State of an unknown initial subscription exists")
	}
	if !strings.HasPrefix(c.ClientID(), "termhost-cli-") {
		t.Errorf("ClientID() = %q", c.ClientID())
	}
}

func TestDialErrors(t *testing.T) {
	ts := newServer(t)
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "nope", http.StatusNotFound)
	}))
	defer refuse.Close()
	tests := []struct {
		name   string
		server string
		token  string
		want   func(error) bool
	}{
		{"bad token", ts.URL, "wrong", func(err error) bool { return errors.Is(err, client.ErrUnauthorized) }},
		{"no token", ts.URL, "", func(err error) bool { return errors.Is(err, client.ErrUnauthorized) }},
		{"unreachable", "http://127.0.0.1:1", testToken, func(err error) bool { return err != nil && !errors.Is(err, client.ErrUnauthorized) }},
		{"bad url", "ftp://host", testToken, func(err error) bool { return errors.Is(err, client.ErrBadServer) }},
		{"not termhost", refuse.URL, testToken, func(err error) bool {
			var se *client.StatusError
			return errors.As(err, &se) && se.StatusCode == 404
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := client.Dial(t.Context(), tt.server, client.Options{Token: tt.token})
			if err == nil {
				_ = c.Close()
			}
			if !tt.want(err) {
				t.Errorf("Dial(%s, token %q) error = %v", tt.server, tt.token, err)
			}
		})
	}
}

func TestCallErrors(t *testing.T) {
	ts := newServer(t)
	c := dial(t, ts.URL, client.Options{})
	_, err := c.Subscribe(t.Context(), "ahp-terminal:/missing")
	if !client.IsNotFound(err) || !strings.HasPrefix(err.Error(), "subscribe: ") {
		t.Errorf("Subscribe(missing) error = %v, want a wrapped -32008", err)
	}
	if _, ok := c.State("ahp-terminal:/missing"); ok {
		t.Errorf("a failed subscription left a mirror")
	}
	if _, err := c.Call(t.Context(), "x-nothing", map[string]string{"channel": ahp.RootURI}); !isAHPError(err, ahp.CodeMethodNotFound) {
		t.Errorf("Call(x-nothing) error = %v, want -32601", err)
	}
	if res, err := c.Call(t.Context(), ahp.MethodPing, map[string]string{"channel": ahp.RootURI}); err != nil || string(res) != "null" {
		t.Errorf("ping = %s, %v; want null", res, err)
	}
}

func TestMirrorFollowsTerminal(t *testing.T) {
	ts := newServer(t)
	a := dial(t, ts.URL, client.Options{InitialSubscriptions: []string{ahp.RootURI}})
	uri := createShell(t, a, "mirror")
	seq, err := a.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: "echo $((6*7))\r"})
	if err != nil {
		t.Fatal(err)
	}
	events := waitEvent(t, a, "output 42", outputContains(a, uri, "42\r\n"))
	echoed := false
	for _, ev := range events {
		if o := ev.Envelope.Origin; ev.Kind == client.EventAction && o != nil && o.ClientID == a.ClientID() && o.ClientSeq == seq {
			echoed = ev.Envelope.Action.Type == ahp.TerminalInput && ev.Envelope.RejectionReason == ""
		}
	}
	if !echoed {
		t.Errorf("no accepted echo of clientSeq %d among %d events", seq, len(events))
	}
	// A rejected dispatch comes back to its sender with a reason.
	seq, _ = a.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalResized, Cols: 0, Rows: 5})
	waitEvent(t, a, "rejection", func(ev client.Event) bool {
		o := ev.Envelope.Origin
		return o != nil && o.ClientSeq == seq && ev.Envelope.RejectionReason != ""
	})
	// The root mirror lists the terminal; a second client's fresh snapshot
	// agrees with the mirror once output is quiet.
	root, _ := a.Root()
	if len(root.Terminals) != 1 || root.Terminals[0].Resource != uri {
		t.Errorf("root mirror = %+v", root.Terminals)
	}
	b := dial(t, ts.URL, client.Options{})
	snap, err := b.Subscribe(t.Context(), uri)
	if err != nil {
		t.Fatal(err)
	}
	mine, _ := a.Terminal(uri)
	theirs := snap.State.(ahp.TerminalState)
	if text(mine) != text(theirs) || mine.Cols != theirs.Cols || mine.Claim != theirs.Claim {
		t.Errorf("mirror %q (%dx%d) != snapshot %q (%dx%d)", text(mine), mine.Cols, mine.Rows, text(theirs), theirs.Cols, theirs.Rows)
	}
}

func TestReconnectReplaysMissedOutput(t *testing.T) {
	ts := newServer(t)
	p := newProxy(t, ts.Listener.Addr().String())
	a := dial(t, p.URL(), client.Options{Token: testToken})
	uri := createShell(t, a, "roam")
	if _, err := a.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: "echo bef''ore\r"}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, a, "before", outputContains(a, uri, "before\r\n"))

	// Refused, not only cut: a reconnect before b's output would bring it
	// live instead of replayed.
	p.Refuse()
	waitEvent(t, a, "disconnect", func(ev client.Event) bool { return ev.Kind == client.EventDisconnected })
	// While a is away, b makes output.
	b := dial(t, ts.URL, client.Options{})
	if _, err := b.Subscribe(t.Context(), uri); err != nil {
		t.Fatal(err)
	}
	// a keeps control through its grace period: b (the owner's other
	// client) takes it before typing, as the holder alone types.
	_, _ = b.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim(b.ClientID())})
	_, _ = b.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: "echo while-$((6*7))\r"})
	waitEvent(t, b, "while-42", outputContains(b, uri, "while-42\r\n"))
	p.Accept()

	events := waitEvent(t, a, "reconnect", func(ev client.Event) bool { return ev.Kind == client.EventReconnected })
	replayed := false
	for _, ev := range events {
		if ev.Kind == client.EventResync {
			t.Errorf("got a snapshot resync, want a replay")
		}
		if ev.Kind == client.EventAction && strings.Contains(ev.Envelope.Action.Data, "while-42") {
			replayed = true
			if !ev.Replayed {
				t.Errorf("replayed output %q has Replayed false, want true", ev.Envelope.Action.Data)
			}
		}
	}
	if !replayed {
		t.Errorf("the reconnect brought no while-42 output")
	}
	// Calls work again (a takes control back), and the mirror holds every
	// line exactly once.
	if _, err := a.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim(a.ClientID())}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: "echo af''ter\r"}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range waitEvent(t, a, "after", outputContains(a, uri, "after\r\n")) {
		if ev.Replayed {
			t.Errorf("live event %v %q has Replayed true", ev.Kind, ev.Envelope.Action.Data)
		}
	}
	st, _ := a.Terminal(uri)
	out := text(st)
	for _, line := range []string{"before\r\n", "while-42\r\n", "after\r\n"} {
		if strings.Count(out, line) != 1 {
			t.Errorf("output has %q %d times, want once:\n%q", line, strings.Count(out, line), out)
		}
	}
}

func TestReconnectToNewServerResets(t *testing.T) {
	ts := newServer(t)
	p := newProxy(t, ts.Listener.Addr().String())
	a := dial(t, p.URL(), client.Options{Token: testToken, InitialSubscriptions: []string{ahp.RootURI}})
	uri := createShell(t, a, "old")

	// The server "restarts": the new one knows neither the client nor the terminal.
	fresh := newServer(t)
	p.Retarget(fresh.Listener.Addr().String())
	p.Cut()
	events := waitEvent(t, a, "reconnect", func(ev client.Event) bool { return ev.Kind == client.EventReconnected })
	var gone, resync bool
	for _, ev := range events {
		gone = gone || (ev.Kind == client.EventGone && ev.Channel == uri)
		resync = resync || (ev.Kind == client.EventResync && ev.Channel == ahp.RootURI)
	}
	if !gone || !resync {
		t.Errorf("events %v: want the terminal gone and the root resynced", kinds(events))
	}
	if root, _ := a.Root(); len(root.Terminals) != 0 {
		t.Errorf("root after reset = %+v", root.Terminals)
	}
	if _, ok := a.State(uri); ok {
		t.Errorf("the gone terminal is still mirrored")
	}
}

func TestReconnectGivesUp(t *testing.T) {
	ts := newServer(t)
	p := newProxy(t, ts.Listener.Addr().String())
	a := dial(t, p.URL(), client.Options{Token: testToken, ReconnectWindow: 300 * time.Millisecond})
	p.Retarget("127.0.0.1:1")
	p.Cut()
	waitEvent(t, a, "disconnect", func(ev client.Event) bool { return ev.Kind == client.EventDisconnected })
	select {
	case <-a.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("client did not give up")
	}
	if _, err := a.Next(t.Context()); !errors.Is(err, client.ErrConnectionLost) {
		t.Errorf("Next after giving up = %v, want ErrConnectionLost", err)
	}
	if _, err := a.Call(t.Context(), ahp.MethodPing, map[string]string{"channel": ahp.RootURI}); !errors.Is(err, client.ErrConnectionLost) {
		t.Errorf("Call after giving up = %v", err)
	}
}

func TestCloseEndsNext(t *testing.T) {
	ts := newServer(t)
	c := dial(t, ts.URL, client.Options{})
	errc := make(chan error, 1)
	go func() { _, err := c.Next(t.Context()); errc <- err }()
	_ = c.Close()
	_ = c.Close()
	if err := <-errc; !errors.Is(err, client.ErrClosed) {
		t.Errorf("Next after Close = %v, want ErrClosed", err)
	}
}

func kinds(events []client.Event) []string {
	var out []string
	for _, ev := range events {
		out = append(out, ev.Kind.String()+":"+ev.Channel)
	}
	return out
}

// TestOutputAsBinary: the Go client asks for binary
// data messages, so colourful output costs about a byte on the wire per
// byte of output (JSON: 1.5 here, an ESC is \u001b), and its mirror holds
// what a JSON snapshot of the terminal holds, invalid UTF-8 as U+FFFD.
func TestOutputAsBinary(t *testing.T) {
	ts := newServer(t)
	var wire atomic.Int64
	a := dial(t, ts.URL, client.Options{InitialSubscriptions: []string{ahp.RootURI}, HTTPClient: wirecount.Client(&wire)})
	uri := createShell(t, a, "binary")
	waitOutput(t, a, uri, "a prompt", "$ ")
	before, _ := a.Terminal(uri)
	w0 := wire.Load()
	if _, err := a.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput,
		Data: `for i in $(seq 20000); do printf '\033[3%dm%05d\033[0m \377\n' $((i%8)) $i; done; echo do''ne` + "\r"}); err != nil {
		t.Fatal(err)
	}
	// Up to the prompt after it: the snapshot below must not hold output
	// the mirror has not had yet.
	waitEvent(t, a, "done and the prompt", func(ev client.Event) bool {
		st, _ := a.Terminal(uri)
		out := text(st)
		return ev.Kind == client.EventAction && ev.Channel == uri && strings.Contains(out, "done\r\n") && strings.HasSuffix(out, "$ ")
	})
	after, _ := a.Terminal(uri)
	received := len(text(after)) - len(text(before))
	if perByte := float64(wire.Load()-w0) / float64(received); perByte > 1.10 {
		t.Errorf("%.3f wire bytes per output byte (%d for %d), want ≤ 1.10", perByte, wire.Load()-w0, received)
	}
	b := dial(t, ts.URL, client.Options{})
	snap, err := b.Subscribe(t.Context(), uri)
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := text(after), text(snap.State.(ahp.TerminalState))
	if !strings.HasSuffix(mine, theirs[len(theirs)-min(len(theirs), 200000):]) || !strings.Contains(mine, "19999\x1b[0m \ufffd\r\n") {
		t.Errorf("the mirror's output differs from a JSON snapshot's: they end %q and %q", mine[max(0, len(mine)-60):], theirs[max(0, len(theirs)-60):])
	}
}
