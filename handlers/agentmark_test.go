package handlers_test

import (
	"encoding/json"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestAgentMarksOnTheWire: a command run while an agent's tool
// call holds the terminal reaches 1.x and 0.8 clients with its
// "termhost/runBy" _meta, and the catalogue names the agent session (a 0.8
// client's chat-less one with its session as chat, the claim a 1.x owner
// hands back); every frame is checked against the AHP schemas.
func TestAgentMarksOnTheWire(t *testing.T) {
	const session = "ahp-session:/agent-1"
	ts := newServer(t, testserver.Terminals(func(c *terminals.Config) { c.ShellIntegration, c.ShellArgs = true, nil }))
	old := ts.dial(t)
	old.Initialize("0.8.0", "old")
	uri := ahp.TerminalURI("agentmark")
	old.MustCall("createTerminal", map[string]any{"channel": uri,
		"claim": map[string]any{"kind": "session", "session": session, "turnId": "t1", "toolCallId": "tc1"}})
	cur := ts.dial(t)
	cur.Initialize("1.1.0", "cur")
	cur.Subscribe(uri)
	old.Subscribe(uri)
	// The owner may type under a session claim; input waits for the shell's first prompt.
	cur.Dispatch(uri, map[string]any{"type": ahp.TerminalInput, "data": "echo agent\r"})
	for _, c := range []*client{cur, old} {
		env := c.WaitAction("the agent's command", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalCommandExecuted })
		if by, ok := terminals.RunByOf(env.Action.Meta); !ok || by != (terminals.RunBy{Kind: "agent", Name: "Agent"}) {
			t.Errorf("commandExecuted _meta = %s, want the agent's mark", env.Action.Meta)
		}
	}
	var info terminals.AgentInfo
	for _, ti := range cur.Subscribe(ahp.RootURI).State.(ahp.RootState).Terminals {
		var meta map[string]json.RawMessage
		_ = json.Unmarshal(ti.Meta, &meta)
		_ = json.Unmarshal(meta[terminals.MetaAgent], &info)
	}
	if want := (terminals.AgentInfo{Session: session, Chat: session, Name: "Agent"}); info != want {
		t.Errorf("catalogue _meta %s = %+v, want %+v", terminals.MetaAgent, info, want)
	}
}
