package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/agent"
	"github.com/termhost/termhost/client"
)

// mcpAgent is an MCP client ("Claude Code") connected in memory to
// termhost mcp's tools, which talk AHP to the e2e server as the owner.
func mcpAgent(t *testing.T, e *env) *mcp.ClientSession {
	t.Helper()
	base, err := client.ParseServer(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	ag := agent.New(agent.Config{Base: base, Dial: func(ctx context.Context, opts client.Options) (*client.Client, error) {
		opts.Token = e.token
		return client.Dial(ctx, e.URL, opts)
	}})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := ag.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "Claude Code", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
		ag.Close()
	})
	return cs
}

// toolResult is a tool call's outcome.
type toolResult struct {
	out     map[string]any
	text    string
	isError bool
	err     error
}

func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) toolResult {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return toolResult{err: err}
	}
	r := toolResult{isError: res.IsError}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			r.text += tc.Text
		}
	}
	if m, ok := res.StructuredContent.(map[string]any); ok {
		r.out = m
	}
	return r
}

// TestAgentBuildTakeOverHandBack (issue 26): an agent runs a failing build
// in a terminal the owner watches live, named as the agent; the owner takes
// control mid-build and the agent's next call is refused; the owner hands
// the terminal back and the agent's build ends with exit code 2, marked as
// the agent's in the Commands view.
func TestAgentBuildTakeOverHandBack(t *testing.T) {
	e := newAuthEnv(t)
	cs := mcpAgent(t, e)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	opened := callTool(ctx, cs, "open_terminal", map[string]any{"name": "build"})
	if opened.err != nil || opened.isError || opened.out["shellIntegration"] != true {
		t.Fatalf("open_terminal: %+v", opened)
	}
	id := opened.out["id"].(string)

	owner := e.newPage("owner")
	owner.login()
	owner.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, id), nil)
	owner.waitPrompt(id)

	// The build: prints a line a step until the file stop appears (the test
	// creates it once the terminal is handed back), then fails.
	stop := filepath.Join(t.TempDir(), "stop")
	build := fmt.Sprintf(`for i in $(seq 1 600); do echo "building step $i"; [ -e %s ] && break; sleep 0.2; done; (exit 2)`, stop)
	first := make(chan toolResult, 1)
	go func() {
		first <- callTool(ctx, cs, "run_command", map[string]any{"terminal": id, "command": build, "timeoutSeconds": 60})
	}()
	owner.waitLine(id, "building step 2", 20*time.Second)
	owner.waitJS("the agent in the claim bar", claimBar(".claim-holder")+`?.textContent.startsWith('Controlled by Agent · Claude Code')`, 10*time.Second)
	owner.waitJS("the agent in the status bar", `document.getElementById('status.claim')?.textContent.includes('Agent · Claude Code')`, 10*time.Second)
	owner.waitJS("the agent among who is here", fmt.Sprintf(`document.querySelector('.tab[data-terminal=%q] .presence-avatars')?.title.includes('Agent · Claude Code')`, id), 10*time.Second)
	owner.waitJS("the agent badge on the tab", fmt.Sprintf(`!!document.querySelector('.tab[data-terminal=%q] .tab-agent')`, id), 10*time.Second)

	// The owner takes control mid-build.
	owner.clickClaimBar("Take Control", ".claim-take")
	owner.waitHolder(id, true)
	owner.waitJS("no agent badge once a person has control", fmt.Sprintf(`!document.querySelector('.tab[data-terminal=%q] .tab-agent')`, id), 10*time.Second)
	if r := <-first; r.err != nil || !r.isError || !strings.Contains(r.text, "a person took control") {
		t.Fatalf("the run_command the owner took over: %+v, want a tool error saying a person took control", r)
	}
	if r := callTool(ctx, cs, "send_input", map[string]any{"terminal": id, "text": "echo hi"}); !r.isError || !strings.Contains(r.text, "a person took control") {
		t.Fatalf("send_input once the owner has control: %+v", r)
	}

	// The owner hands it back; the agent waits for its build, which fails.
	owner.clickClaimBar("Hand Back to Agent", ".claim-handback")
	owner.waitHolder(id, false)
	owner.waitJS("the agent in control again", claimBar(".claim-holder")+`?.textContent.startsWith('Controlled by Agent · Claude Code')`, 10*time.Second)
	// The agent waits for its build, which the test lets end: it fails.
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := callTool(ctx, cs, "wait_for", map[string]any{"terminal": id, "timeoutSeconds": 30}); r.isError || r.out["status"] != "finished" || r.out["exitCode"] != float64(2) {
		t.Fatalf("wait_for the build after the hand-back: %+v, want it finished with exit code 2", r)
	}
	// And runs it again, to the end this time.
	if r := callTool(ctx, cs, "run_command", map[string]any{"terminal": id, "command": build, "timeoutSeconds": 30}); r.err != nil || r.isError || r.out["exitCode"] != float64(2) {
		t.Fatalf("the build after the hand-back: %+v, want exit code 2", r)
	}
	owner.waitJS("both builds in the Commands view, failed and marked as the agent's",
		`[...document.querySelectorAll('#commands-view .command-item[data-status=failure]')].filter(r => r.dataset.exitCode === '2' && r.dataset.runBy === 'Agent · Claude Code' && r.querySelector('.agent-badge')).length === 2`, 15*time.Second)
}
