package client_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/testserver"
)

// TestDeadLinkDetected: a path that stops forwarding
// without closing (a frozen proxy) is noticed within PingInterval +
// PingTimeout: the client reports EventDisconnected with ErrDeadLink, then
// recovers with a replay, every line exactly once, whether the path comes
// back (resume) or its held connections are dropped and a fresh one is made
// (cut, then resume).
func TestDeadLinkDetected(t *testing.T) {
	const (
		interval = 100 * time.Millisecond
		timeout  = 300 * time.Millisecond
		slack    = 2 * time.Second // a loaded machine running -race
	)
	for _, tc := range []struct {
		name    string
		recover func(p *testserver.Proxy)
	}{
		{"resume", func(p *testserver.Proxy) { p.Resume() }},
		{"cut then resume", func(p *testserver.Proxy) { p.Cut(); p.Resume() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newServer(t)
			p := newProxy(t, ts.Listener.Addr().String())
			a := dial(t, p.URL(), client.Options{PingInterval: interval, PingTimeout: timeout})
			uri := createShell(t, a, "frozen")
			const lines = 20
			loop := fmt.Sprintf("for i in $(seq 1 %d); do echo tick-$i; sleep 0.05; done; echo loop-''done\r", lines)
			if _, err := a.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: loop}); err != nil {
				t.Fatal(err)
			}
			waitEvent(t, a, "tick-1", outputContains(a, uri, "tick-1\r\n"))

			p.Freeze()
			frozen := time.Now()
			events := waitEvent(t, a, "disconnect", func(ev client.Event) bool { return ev.Kind == client.EventDisconnected })
			if took, bound := time.Since(frozen), interval+timeout+slack; took > bound {
				t.Errorf("dead link noticed after %s, want within %s", took, bound)
			}
			if err := events[len(events)-1].Err; !errors.Is(err, client.ErrDeadLink) {
				t.Errorf("EventDisconnected.Err = %v, want ErrDeadLink", err)
			}

			tc.recover(p)
			waitEvent(t, a, "reconnect", func(ev client.Event) bool { return ev.Kind == client.EventReconnected })
			waitEvent(t, a, "loop-done", outputContains(a, uri, "loop-done\r\n"))
			st, _ := a.Terminal(uri)
			out := text(st)
			for i := 1; i <= lines; i++ {
				line := fmt.Sprintf("tick-%d\r\n", i)
				if n := strings.Count(out, line); n != 1 {
					t.Errorf("output has %q %d times, want once:\n%q", line, n, out)
				}
			}
			// Calls work again on the new connection.
			if _, err := a.Call(t.Context(), ahp.MethodPing, map[string]string{"channel": ahp.RootURI}); err != nil {
				t.Errorf("ping after the recovery: %v", err)
			}
		})
	}
}
