package agent_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/terminals"
)

// agentMeta is the catalogue's record of the agent session that last held
// a terminal, as the person sees it.
func agentMeta(c *client.Client, uri string) terminals.AgentInfo {
	var meta map[string]terminals.AgentInfo
	if root, ok := c.Root(); ok {
		for _, info := range root.Terminals {
			if info.Resource == uri {
				_ = json.Unmarshal(info.Meta, &meta)
			}
		}
	}
	return meta[terminals.MetaAgent]
}

// TestAgentCommandMarkedAndHandBack: the command run_command
// typed is marked as the agent's (named by its MCP client) in the content
// every client sees; after the owner took control, the catalogue still
// names the agent session, and handing it back with that claim lets the
// agent run commands again.
func TestAgentCommandMarkedAndHandBack(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	uri := ahp.TerminalURI(id)
	if out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo marked"}); out["output"] != "marked" {
		t.Fatalf("run_command: %v", out)
	}
	p := r.person(t, id)
	st, _ := p.Terminal(uri)
	var by terminals.RunBy
	for _, part := range st.Content {
		if part.Type == ahp.PartCommand && part.CommandLine == "echo marked" {
			by, _ = terminals.RunByOf(p.CommandMeta(uri)[part.CommandID])
		}
	}
	if want := (terminals.RunBy{Kind: "agent", Name: "Agent · test-agent"}); by != want {
		t.Fatalf("the agent's command part is marked %+v, want %+v", by, want)
	}

	setClaim(t, p, uri, ahp.ClientClaim(p.ClientID()))
	r.fails(t, "run_command", map[string]any{"terminal": id, "command": "echo refused"}, "a person took control")
	info := agentMeta(p, uri)
	if info.Name != "Agent · test-agent" || info.Session == "" || info.Chat == "" {
		t.Fatalf("catalogue _meta %s = %+v, want the agent session and its name", terminals.MetaAgent, info)
	}
	// The workbench's "Hand Back to Agent": terminal/claimed with that session.
	setClaim(t, p, uri, ahp.Claim{Kind: ahp.ClaimSession, Session: info.Session, Chat: info.Chat})
	out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "(exit 2)"})
	if num(out["exitCode"]) != 2 {
		t.Fatalf("run_command after the hand-back: %v", out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for agentMeta(p, uri).Name != "Agent · test-agent" { // the owner's hand-back keeps the agent's name
		if _, err := p.Next(ctx); err != nil {
			t.Fatalf("catalogue after the hand-back: %+v (%v)", agentMeta(p, uri), err)
		}
	}
}
