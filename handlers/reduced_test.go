package handlers_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestSnapshotIsReducedHistory: for a client that knows nothing of
// termhost, every snapshot equals the previous snapshot plus the actions
// since, reduced with AHP's own reducers alone (ahptest.ReduceOfficial, on
// the JSON as received), whatever termhost's extensions did meanwhile: a
// command an agent's tool call ran (its "termhost/runBy" mark), the
// catalogue's _meta (the agent session, the recording), a session claim
// and a client claim, a resize, a rename and a title set by the program,
// shell integration's commands with their exit codes, and the exit. A 1.0.0
// and a 0.8.0 client watch the same terminal and each takes fresh snapshots
// of the root and the terminal on its own connection, where every action
// before a snapshot comes before it. The agent's mark still reaches both:
// on the action, and for a joiner beside the snapshot's state, in its
// _meta.
func TestSnapshotIsReducedHistory(t *testing.T) {
	const session, chat = "ahp-session:/agent-1", "ahp-chat:/agent-1"
	ts := newServer(t, testserver.Terminals(func(c *terminals.Config) {
		c.ShellIntegration, c.ShellArgs, c.RecordDir = true, nil, filepath.Join(t.TempDir(), "rec")
	}))
	cur, old := ts.dial(t), ts.dial(t)
	cur.Initialize("1.0.0", "cur")
	old.Initialize("0.8.0", "old")
	uri := ahp.TerminalURI("reduced")
	cur.MustCall(ahp.MethodCreateTerminal, map[string]any{"channel": uri, "cols": 80, "rows": 24,
		"claim": map[string]any{"kind": "session", "session": session, "chat": chat, "turnId": "t1", "toolCallId": "tc1"},
		"_meta": map[string]any{ext.MetaRecord: true}})
	clients := []*client{cur, old}
	for _, c := range clients {
		c.Subscribe(uri)
	}
	resubscribe := func() { // fresh snapshots, checked against what came before
		for _, c := range clients {
			c.Subscribe(ahp.RootURI)
			c.Subscribe(uri)
		}
	}
	waitAll := func(what string, pred func(ahp.Envelope) bool) {
		for _, c := range clients {
			c.WaitAction(what, pred)
		}
	}
	finished := func(code int) func(ahp.Envelope) bool {
		return func(e ahp.Envelope) bool {
			return e.Action.Type == ahp.TerminalCommandFinished && e.Action.ExitCode != nil && *e.Action.ExitCode == code
		}
	}

	// The agent's tool call runs a command (the owner may type under a
	// session claim; input waits for the shell's first prompt).
	cur.Dispatch(uri, map[string]any{"type": ahp.TerminalInput, "data": "echo agent\r"})
	waitAll("the agent's command", finished(0))
	resubscribe()

	// The owner takes control, resizes and renames; the program sets a
	// title and a command fails; the recording pauses; the shell exits.
	cur.Dispatch(uri, map[string]any{"type": ahp.TerminalClaimed, "claim": map[string]any{"kind": "client", "clientId": "cur"}})
	cur.Dispatch(uri, map[string]any{"type": ahp.TerminalResized, "cols": 100, "rows": 30})
	cur.Dispatch(uri, map[string]any{"type": ahp.TerminalTitleChanged, "title": "renamed"})
	cur.Dispatch(uri, map[string]any{"type": ahp.TerminalInput, "data": `printf '\033]0;set by the program\007'; (exit 3)` + "\r"})
	waitAll("the person's command", finished(3))
	cur.MustCall(ext.MethodRecord, map[string]any{"channel": uri, "on": false})
	waitAll("the paused recording in the catalogue", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.RootTerminalsChanged && len(e.Action.Terminals) == 1 &&
			strings.Contains(string(e.Action.Terminals[0].Meta), `"`+ext.RecordingPaused+`"`)
	})
	resubscribe()
	cur.Dispatch(uri, map[string]any{"type": ahp.TerminalInput, "data": "exit 0\r"})
	waitAll("the exit in the catalogue", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.RootTerminalsChanged && len(e.Action.Terminals) == 1 &&
			e.Action.Terminals[0].Lifecycle.Status == ahp.StatusExited
	})
	resubscribe()

	for _, c := range clients {
		t.Run(c.Version(), func(t *testing.T) {
			checks, last := checkReducedHistory(t, c)
			if checks != 6 { // the root and the terminal, three times
				t.Errorf("compared %d snapshots with the reduced history, want 6", checks)
			}
			// The agent's mark: on its action, and beside the state for a joiner.
			var agentCmd string
			for _, e := range c.Envelopes() {
				if e.Action.Type == ahp.TerminalCommandExecuted && e.Action.CommandLine == "echo agent" {
					agentCmd = e.Action.CommandID
					if by, ok := terminals.RunByOf(e.Action.Meta); !ok || by != (terminals.RunBy{Kind: ext.RunByAgent, Name: "Agent"}) {
						t.Errorf("commandExecuted _meta = %s, want the agent's mark", e.Action.Meta)
					}
				}
			}
			if by, ok := terminals.RunByOfSnapshot(last.Meta, agentCmd); agentCmd == "" || !ok || by.Kind != ext.RunByAgent {
				t.Errorf("the last snapshot's _meta %s does not mark command %q as the agent's", last.Meta, agentCmd)
			}
		})
	}
}

// checkReducedHistory walks a client's frames in order: each snapshot of a
// channel it already had must equal the previous one plus the actions
// since, reduced with AHP's reducers alone. It returns how many snapshots
// it compared and the last snapshot of a terminal.
func checkReducedHistory(t *testing.T, c *client) (checks int, last ahp.Snapshot) {
	t.Helper()
	legacy := c.Version() == "0.8.0"
	state := map[string]map[string]any{}
	for _, f := range c.Frames() {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Channel         string         `json:"channel"`
				Action          map[string]any `json:"action"`
				RejectionReason string         `json:"rejectionReason"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(f, &m); err != nil {
			t.Fatalf("frame %s: %v", f, err)
		}
		if m.Method == "action" {
			if st := state[m.Params.Channel]; st != nil && m.Params.RejectionReason == "" {
				state[m.Params.Channel] = ahptest.ReduceOfficial(m.Params.Channel, st, m.Params.Action, legacy)
			}
			continue
		}
		var r struct {
			Snapshot  json.RawMessage   `json:"snapshot"`
			Snapshots []json.RawMessage `json:"snapshots"`
		}
		if len(m.Result) == 0 || json.Unmarshal(m.Result, &r) != nil {
			continue
		}
		if r.Snapshot != nil {
			r.Snapshots = append(r.Snapshots, r.Snapshot)
		}
		for _, raw := range r.Snapshots {
			var s struct {
				Resource string         `json:"resource"`
				State    map[string]any `json:"state"`
				FromSeq  int64          `json:"fromSeq"`
			}
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("snapshot %s: %v", raw, err)
			}
			if want := state[s.Resource]; want != nil {
				checks++
				if !reflect.DeepEqual(s.State, want) {
					got, _ := json.Marshal(s.State)
					reduced, _ := json.Marshal(want)
					t.Errorf("snapshot of %s at seq %d is not the previous one plus the actions:\n snapshot %s\n reduced  %s", s.Resource, s.FromSeq, got, reduced)
				}
			}
			state[s.Resource] = s.State
			if s.Resource != ahp.RootURI {
				if err := json.Unmarshal(raw, &last); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return checks, last
}
