package agent_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/agent"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestToolLinksUsePublicURL: the server runs behind a reverse proxy at a
// public URL with a path (handlers.Config.PublicURL) and the agent dials
// it over loopback with that loopback address as Config.Base: the links
// in its tool results (list_terminals' and open_terminal's url,
// run_command's fullOutputUrl) start with the public URL, and
// fullOutputUrl, fetched where the proxy sends it with the credential the
// agent holds (the owner token as a bearer, as fullOutputAuth says),
// answers the output.
func TestToolLinksUsePublicURL(t *testing.T) {
	t.Parallel()
	const public = "https://proxy.example/term"
	ts := testserver.New(t, testserver.Terminals(func(c *terminals.Config) { c.ShellIntegration, c.ShellArgs = true, nil }),
		testserver.Handlers(func(c *handlers.Config) { c.PublicURL = public + "/" }))
	loopback, err := client.ParseServer(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	const how = "send the Authorization header you send to this MCP server"
	r := &rig{ts: ts}
	ag := agent.New(agent.Config{Base: loopback, LinkCredentials: how, Logger: testserver.Logger(t),
		Dial: func(ctx context.Context, opts client.Options) (*client.Client, error) {
			opts.Token = ts.Token
			return client.Dial(ctx, ts.URL, opts)
		}})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := ag.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.cs, err = mcp.NewClient(&mcp.Implementation{Name: "link-agent", Version: "1"}, nil).Connect(t.Context(), ct, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cs.Close()
		_ = ss.Wait()
		ag.Close()
	})

	opened, text := r.ok(t, "open_terminal", map[string]any{"name": "linked"})
	id, _ := opened["id"].(string)
	if opened["url"] != public+"/t/"+id || !strings.Contains(text, public+"/t/"+id) {
		t.Errorf("open_terminal: url %v, text %q; want %s/t/%s", opened["url"], text, public, id)
	}
	list, _ := r.ok(t, "list_terminals", nil)
	if ts, _ := list["terminals"].([]any); len(ts) != 1 || ts[0].(map[string]any)["url"] != public+"/t/"+id {
		t.Errorf("list_terminals: %v, want the terminal at %s/t/%s", list, public, id)
	}
	ran, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo agent-output-marker"})
	full, _ := ran["fullOutputUrl"].(string)
	if full != public+"/t/"+id+"/output.txt" || ran["fullOutputAuth"] != how {
		t.Fatalf("run_command: fullOutputUrl %q, fullOutputAuth %v; want %s/t/%s/output.txt and %q", full, ran["fullOutputAuth"], public, id, how)
	}

	// The proxy strips /term: fetch there with what the agent holds.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+strings.TrimPrefix(full, public), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ts.Token)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "agent-output-marker") {
		t.Errorf("GET fullOutputUrl with the agent's bearer: HTTP %d %q, want 200 with the output", resp.StatusCode, body)
	}
}
