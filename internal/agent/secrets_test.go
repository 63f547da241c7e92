package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/agent"
)

// TestToolsNeverShowSecrets: an agent never gets the owner
// token or a share link through a tool. Share links (a viewer's, with a
// watcher connected through it, and a driver's) exist for the agent's
// terminal; every tool is called, successes and failures, and no result
// (its text, structured content or anything else in it) holds the owner
// token, a share link's secret or a "#share=" fragment. Every call is
// answered within a generous bound, with a small rendering budget: reading
// the output since 0 after seq 1 20000 took 58 s under -race unbounded,
// past 90 s with other tests running.
func TestToolsNeverShowSecrets(t *testing.T) {
	r := newRigWith(t, func(c *agent.Config) { c.RenderBudget = 100 * time.Millisecond })
	id := r.open(t)
	uri := ahp.TerminalURI(id)
	p := r.person(t, id)
	secrets := []string{r.ts.Token}
	for _, role := range []string{"viewer", "driver"} {
		raw, err := p.Call(t.Context(), "x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": role, "label": "guest " + role})
		if err != nil {
			t.Fatalf("share link: %v", err)
		}
		var link struct{ URL string }
		if err := json.Unmarshal(raw, &link); err != nil {
			t.Fatal(err)
		}
		_, token, ok := strings.Cut(link.URL, "#share=")
		if !ok || len(token) < 16 {
			t.Fatalf("share link %q", link.URL)
		}
		secrets = append(secrets, token)
	}
	// A guest watches through the viewer link: presence names them.
	guest, err := client.Dial(t.Context(), r.ts.URL, client.Options{Token: secrets[1], InitialSubscriptions: []string{uri}})
	if err != nil {
		t.Fatalf("the viewer link: %v", err)
	}
	defer func() { _ = guest.Close() }()

	var results []string
	callTool := func(name string, args map[string]any, wantError bool) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		defer cancel()
		start := time.Now()
		res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := time.Since(start); d > generous {
			t.Fatalf("%s(%v) took %v", name, args, d)
		}
		raw, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != wantError {
			t.Fatalf("%s(%v): isError %v, want %v: %s", name, args, res.IsError, wantError, raw)
		}
		results = append(results, name+": "+string(raw))
		var out map[string]any
		if b, _ := json.Marshal(res.StructuredContent); res.StructuredContent != nil {
			_ = json.Unmarshal(b, &out)
		}
		return out
	}
	opened := callTool("open_terminal", map[string]any{"name": "second"}, false)
	in := callTool("send_input", map[string]any{"terminal": id, "text": "echo typed", "keys": []string{"Enter"}}, false)
	callTool("wait_for", map[string]any{"terminal": id, "pattern": "(?m)^typed", "since": in["cursor"]}, false)
	callTool("wait_for", map[string]any{"terminal": id, "timeoutSeconds": 30}, false)
	callTool("run_command", map[string]any{"terminal": id, "command": "echo ran; seq 1 20000"}, false)
	callTool("run_command", map[string]any{"terminal": id, "command": "echo started; sleep 600", "timeoutSeconds": 1}, false)
	callTool("run_command", map[string]any{"terminal": id, "command": "echo busy"}, true)
	callTool("send_input", map[string]any{"terminal": id, "keys": []string{"Ctrl-C"}}, false)
	callTool("wait_for", map[string]any{"terminal": id, "timeoutSeconds": 30}, false)
	callTool("read_terminal", map[string]any{"terminal": id}, false)
	callTool("read_terminal", map[string]any{"terminal": id, "mode": "output", "since": 0}, false)
	list := callTool("list_terminals", nil, false)
	watchers := ""
	for _, term := range list["terminals"].([]any) {
		if term.(map[string]any)["id"] == id {
			raw, _ := json.Marshal(term.(map[string]any)["watchers"])
			watchers = string(raw)
		}
	}
	callTool("read_terminal", map[string]any{"terminal": "abc123"}, true)
	callTool("close_terminal", map[string]any{"terminal": opened["id"]}, false)
	callTool("close_terminal", map[string]any{"terminal": id}, false)
	callTool("close_terminal", map[string]any{"terminal": id}, true)

	for _, res := range results {
		for i, secret := range secrets {
			if strings.Contains(res, secret) {
				t.Errorf("secret #%d (0: the owner token, then share links) in the result of %s", i, res)
			}
		}
		if strings.Contains(res, "#share=") || strings.Contains(res, "token=") {
			t.Errorf("a share link or login link in the result of %s", res)
		}
	}
	t.Logf("watchers of the agent's terminal as the agent sees them: %s", watchers)
}
