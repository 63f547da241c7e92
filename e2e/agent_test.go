//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/agent"
	"github.com/termhost/termhost/internal/poll"
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

// TestAgentBuildTakeOverHandBack: an agent runs a failing build
// in a terminal the owner watches live, named as the agent; the owner takes
// control mid-build and the agent's next call is refused; the owner hands
// the terminal back and the agent's build ends with exit code 2, marked as
// the agent's in the Commands view.
func TestAgentBuildTakeOverHandBack(t *testing.T) {
	t.Parallel()
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

// TestAgentCommandMarksOnPromptLine: the gutter mark of each command an
// agent ran sits on the line of its prompt, where the command was typed,
// also for a loop the agent's run_command timed out on and for a prompt of
// read waiting for input, once the page's scrollback is full; for the page
// that watched them run and for one that joins later.
func TestAgentCommandMarksOnPromptLine(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	cs := mcpAgent(t, e)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	opened := callTool(ctx, cs, "open_terminal", map[string]any{"name": "marks"})
	if opened.err != nil || opened.isError || opened.out["shellIntegration"] != true {
		t.Fatalf("open_terminal: %+v", opened)
	}
	id := opened.out["id"].(string)
	watcher := e.newPage("watcher")
	watcher.login()
	watcher.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, id), nil)
	watcher.waitPrompt(id)

	// A long output first, past the page's scrollback (10000 lines): from
	// then on every new line trims the oldest.
	if r := callTool(ctx, cs, "run_command", map[string]any{"terminal": id, "command": "seq 1 12000", "timeoutSeconds": 60}); r.err != nil || r.isError || r.out["status"] != "finished" {
		t.Fatalf("run_command seq: %+v", r)
	}
	watcher.waitLine(id, "12000", 15*time.Second)
	commands := []struct {
		line, status string
		timeout      int
	}{
		{`for i in $(seq 1 600); do echo "tick $i"; sleep 0.2; done`, "still_running", 2},
		// Answered once the prompt has been quiet for a while.
		{`read -p 'Your name? ' x`, "input_awaited", 60},
	}
	for i, c := range commands {
		if i > 0 {
			// Interrupt the loop before the next command. bash can miss
			// one ^C (seen at load 13: "^C" echoed, the loop went on
			// when it landed between two children), so press it again
			// while the loop runs, as a person would.
			var last toolResult
			interrupted := poll.Eventually(poll.Long, func() bool {
				if r := callTool(ctx, cs, "send_input", map[string]any{"terminal": id, "keys": []string{"Ctrl-C"}}); r.err != nil || r.isError {
					t.Fatalf("send_input Ctrl-C: %+v", r)
				}
				last = callTool(ctx, cs, "wait_for", map[string]any{"terminal": id, "timeoutSeconds": 5})
				if last.err != nil || last.isError {
					t.Fatalf("wait_for the interrupted loop: %+v", last)
				}
				return last.out["status"] == "finished"
			})
			if !interrupted {
				t.Fatalf("wait_for the interrupted loop: %+v", last)
			}
		}
		r := callTool(ctx, cs, "run_command", map[string]any{"terminal": id, "command": c.line, "timeoutSeconds": c.timeout})
		if r.err != nil || r.isError || r.out["status"] != c.status {
			t.Fatalf("run_command(%q): %+v, want %s", c.line, r, c.status)
		}
	}
	late := e.newPage("late", chromedp.WithNewBrowserContext())
	late.login()
	late.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, id), nil)
	late.waitLine(id, "Your name?", 15*time.Second)
	for _, p := range []*page{watcher, late} {
		for _, c := range commands {
			// The mark's line is the line the prompt and the command are on.
			js := fmt.Sprintf(`(v => { const rec = v.commands.find(c => c.commandLine === %q); const m = rec?.marker;
				if (!m || m.isDisposed) return '';
				const b = v.term.buffer.active;
				let prompt = -1;
				for (let y = 0; y < b.length; y++) if (b.getLine(y).translateToString(true).endsWith('# ' + %q)) prompt = y;
				return m.line === prompt ? 'ok' : 'mark on ' + m.line + ' ' + JSON.stringify(b.getLine(m.line).translateToString(true)) + ', prompt on ' + prompt; })(window.__termhost.view(%q))`,
				c.line, c.line, id)
			p.waitJS(fmt.Sprintf("a mark for %q", c.line), fmt.Sprintf(`(%s) !== ''`, js), 10*time.Second)
			if got := p.evalString(js); got != "ok" {
				t.Errorf("%s: the mark of %q: %s", p.name, c.line, got)
			}
		}
	}
}
