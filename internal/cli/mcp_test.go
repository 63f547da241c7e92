package cli

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/cmdtest"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestMCPOverStdio starts the real termhost mcp as a subprocess, as an
// agent does, and drives it with the SDK's MCP client: the agent's terminal
// shows in presence as "Agent · <client name>", with its session claim.
func TestMCPOverStdio(t *testing.T) {
	ts := testserver.New(t, testserver.Terminals(func(c *terminals.Config) { c.ShellIntegration, c.ShellArgs = true, nil }))
	cmd := exec.Command(cmdtest.Binary(t), "mcp", "--server", ts.URL)
	cmd.Env = []string{"TERMHOST_TOKEN=" + ts.Token, "HOME=" + t.TempDir()}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, " "); got != "close_terminal list_terminals open_terminal read_terminal run_command send_input wait_for" {
		t.Fatalf("tools: %s", got)
	}
	callTool := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		return res.StructuredContent.(map[string]any)
	}
	id := callTool("open_terminal", map[string]any{"name": "stdio"})["id"].(string)
	out := callTool("run_command", map[string]any{"terminal": id, "command": "echo over stdio; exit_code=3; (exit $exit_code)"})
	if out["output"] != "over stdio" || out["exitCode"] != float64(3) {
		t.Fatalf("run_command over stdio: %v", out)
	}
	var info ahp.TerminalInfo
	for _, i := range ts.Manager.Terminals() {
		info = i
	}
	if info.Claim.Kind != ahp.ClaimSession {
		t.Fatalf("the agent's terminal is claimed by %+v, want a session claim", info.Claim)
	}
	code, stdout, stderr := call(t, ownerEnvOf(ts), "ls", "--json")
	var listed []lsEntry
	if code != 0 || json.Unmarshal([]byte(stdout), &listed) != nil || len(listed) != 1 {
		t.Fatalf("termhost ls --json = %d %q %q, want one terminal", code, stdout, stderr)
	}
	if got := listed[0].Presence; len(got) != 1 || got[0].Name != "Agent · stdio-agent" || got[0].Kind != terminals.KindAgent {
		t.Fatalf("presence of the agent's terminal: %+v, want Agent · stdio-agent", got)
	}
	// termhost ls names the agent as the terminal's holder.
	if code, stdout, stderr := call(t, ownerEnvOf(ts), "ls"); code != 0 || !strings.Contains(stdout, "agent (termhost mcp)") {
		t.Fatalf("termhost ls = %d %q %q, want the agent as holder", code, stdout, stderr)
	}
	callTool("close_terminal", map[string]any{"terminal": id})
}

// ownerEnvOf is the environment of a CLI command aimed at ts as its owner.
func ownerEnvOf(ts *testserver.Server) map[string]string {
	return map[string]string{"TERMHOST_SERVER": ts.URL, "TERMHOST_TOKEN": ts.Token}
}

// TestMCPWithoutServer: with no server running, termhost mcp still starts
// (the agent sees its tools) and each tool says so in one sentence.
func TestMCPWithoutServer(t *testing.T) {
	ts := testserver.New(t)
	url := ts.URL
	ts.Close() // nothing listens there any more
	cmd := exec.Command(cmdtest.Binary(t), "mcp", "--server", url)
	cmd.Env = []string{"TERMHOST_TOKEN=x", "HOME=" + t.TempDir()}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "lonely-agent", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_terminals"})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	if len(res.Content) == 1 {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	if !res.IsError || !strings.Contains(text, "connection refused") || !strings.Contains(text, "termhost serve") {
		t.Fatalf("list_terminals without a server: isError %v, %q", res.IsError, text)
	}
}
