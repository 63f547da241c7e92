package handlers_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// TestFlow runs a client-owned shell's whole life at every protocol version a
// client may offer: create, subscribe, type, resize, rename, clear, exit 3,
// dispose.
func TestFlow(t *testing.T) {
	versions := []string{"0.5.1", "0.5.2", "0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.10.0", "1.0.0", "1.1.0"}
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			ts := newServer(t)
			c := ts.dial(t)
			init := c.Initialize(version, "client-a")
			if init["protocolVersion"] != version {
				t.Fatalf("protocolVersion = %v, want %s", init["protocolVersion"], version)
			}
			legacy := ahp.ShapeFor(version) == ahp.Legacy

			uri, snap := c.CreateTerminal("flow", "client-a", map[string]any{"name": "build", "cols": 100, "rows": 30})
			cat := c.WaitAction("catalogue with the terminal", func(e ahp.Envelope) bool {
				return e.Channel == ahp.RootURI && len(e.Action.Terminals) == 1
			})
			if cat.Origin != nil {
				t.Errorf("server-originated root/terminalsChanged has origin %+v", cat.Origin)
			}
			st := snap.State.(ahp.TerminalState)
			if st.Title != "build" || st.Cols != 100 || st.Rows != 30 || st.Lifecycle.Exited() {
				t.Fatalf("initial snapshot = %+v", st)
			}
			if snap.FromSeq < cat.ServerSeq {
				t.Errorf("snapshot fromSeq %d is older than the create's catalogue seq %d", snap.FromSeq, cat.ServerSeq)
			}

			seq := c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo hel''lo\r"})
			echo := c.WaitAction("input echo", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalInput })
			if echo.Origin == nil || echo.Origin.ClientID != "client-a" || echo.Origin.ClientSeq != seq {
				t.Errorf("input echo origin = %+v, want client-a/%d", echo.Origin, seq)
			}
			c.WaitOutput(uri, "hello\r\n")

			c.Dispatch(uri, map[string]any{"type": "terminal/resized", "cols": 120, "rows": 40})
			c.WaitAction("resize echo", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalResized && e.Action.Cols == 120 })
			c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "stty size\r"})
			c.WaitOutput(uri, "40 120")

			c.Dispatch(uri, map[string]any{"type": "terminal/titleChanged", "title": "renamed"})
			c.WaitAction("catalogue rename", func(e ahp.Envelope) bool {
				return e.Channel == ahp.RootURI && len(e.Action.Terminals) == 1 && e.Action.Terminals[0].Title == "renamed"
			})
			c.Dispatch(uri, map[string]any{"type": "terminal/cleared"})
			c.WaitAction("clear echo", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalCleared })
			if got := c.Subscribe(uri).State.(ahp.TerminalState); len(got.Content) > 1 || got.Title != "renamed" || got.Cols != 120 {
				t.Errorf("after clear/rename/resize: %+v", got)
			}

			c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "exit 3\r"})
			exited := c.WaitAction("exit", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalExited })
			if exited.Action.ExitCode == nil || *exited.Action.ExitCode != 3 {
				t.Fatalf("terminal/exited = %+v, want exitCode 3", exited.Action)
			}
			cat = c.WaitAction("catalogue exit", func(e ahp.Envelope) bool {
				return e.Channel == ahp.RootURI && len(e.Action.Terminals) == 1 && e.Action.Terminals[0].Lifecycle.Exited()
			})
			checkExitShape(t, c, legacy)

			c.MustCall("disposeTerminal", map[string]any{"channel": uri})
			c.WaitAction("catalogue empty", func(e ahp.Envelope) bool {
				return e.Channel == ahp.RootURI && e.Action.Type == ahp.RootTerminalsChanged && len(e.Action.Terminals) == 0
			})
			c.CallErr("subscribe", map[string]any{"channel": uri}, ahp.CodeNotFound)
			checkSeqIncreasing(t, c.Envelopes())
		})
	}
}

// checkExitShape looks at the raw frames: legacy connections carry exitCode,
// current ones a lifecycle object.
func checkExitShape(t *testing.T, c *client, legacy bool) {
	t.Helper()
	var raw string
	for _, f := range c.Frames() {
		if strings.Contains(string(f), `"root/terminalsChanged"`) && strings.Contains(string(f), "renamed") {
			raw = string(f)
		}
	}
	want, notWant := `"lifecycle":{"status":"exited","exitCode":3}`, `"exitCode":3}],`
	if legacy {
		want, notWant = `"exitCode":3`, `"lifecycle"`
	}
	if !strings.Contains(raw, want) || strings.Contains(raw, notWant) {
		t.Errorf("last catalogue frame %s: want %s and not %s", raw, want, notWant)
	}
}

func checkSeqIncreasing(t *testing.T, envs []ahp.Envelope) {
	t.Helper()
	var last int64
	for _, e := range envs {
		if e.ServerSeq <= last {
			t.Fatalf("serverSeq not increasing: %d after %d", e.ServerSeq, last)
		}
		last = e.ServerSeq
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var _ = fmt.Sprint
