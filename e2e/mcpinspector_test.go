//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestMCPInspectorCLI lists and calls termhost mcp's tools with the MCP
// Inspector's command line (npm @modelcontextprotocol/inspector-cli, a
// devDependency: npm ci installs it), which starts termhost mcp on stdio
// as an agent would. Each Inspector call is a session of its own, so the
// second one may use the first one's terminal only with
// --allow-any-terminal (set through its environment twin).
func TestMCPInspectorCLI(t *testing.T) {
	t.Parallel()
	inspector, err := filepath.Abs("../node_modules/.bin/mcp-inspector-cli")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(inspector); err != nil {
		t.Fatalf("the MCP Inspector CLI is not installed (%v): run npm ci", err)
	}
	s := testserver.New(t, testserver.Terminals(func(c *terminals.Config) { c.ShellIntegration, c.ShellArgs = true, nil }))
	bin := buildTermhost(t)
	inspect := func(args ...string) map[string]any {
		t.Helper()
		argv := append([]string{"--cli", "-e", "TERMHOST_SERVER=" + s.URL, "-e", "TERMHOST_TOKEN=" + s.Token,
			"-e", "TERMHOST_MCP_ALLOW_ANY_TERMINAL=true", bin, "mcp"}, args...)
		run := func() ([]byte, error) {
			cmd := exec.CommandContext(t.Context(), inspector, argv...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			return cmd.Output()
		}
		out, err := run()
		// Once in four loaded runs the Inspector's node process died of a
		// SIGTERM that neither it, the SDK, termhost nor this test sends (a
		// stray signal to a reused pid from another process tree on the busy
		// machine is the one explanation left). Its death by a signal says
		// nothing about termhost: run it once more, and say so.
		if ee, ok := err.(*exec.ExitError); ok && ee.ProcessState.Sys().(syscall.WaitStatus).Signaled() && t.Context().Err() == nil {
			t.Logf("mcp-inspector-cli %s ended by %v: running it once more", strings.Join(args, " "), err)
			out, err = run()
		}
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("mcp-inspector-cli %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr)
		}
		var res map[string]any
		if err := json.Unmarshal(out[strings.IndexByte(string(out), '{'):], &res); err != nil {
			t.Fatalf("mcp-inspector-cli %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return res
	}
	var names []string
	for _, tool := range inspect("--method", "tools/list")["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if got := strings.Join(names, " "); got != "close_terminal list_terminals open_terminal read_terminal run_command send_input wait_for" {
		t.Fatalf("tools/list: %s", got)
	}
	opened := inspect("--method", "tools/call", "--tool-name", "open_terminal", "--tool-arg", "name=inspector")
	id, _ := structured(t, opened)["id"].(string)
	// The Inspector reads a tool-arg's value as JSON first: an id of digits
	// alone would become a number, so it is passed JSON-quoted.
	terminalArg := "terminal=" + strconv.Quote(id)
	ran := inspect("--method", "tools/call", "--tool-name", "run_command", "--tool-arg", terminalArg, "--tool-arg", "command=echo from inspector; false")
	if sc := structured(t, ran); sc["output"] != "from inspector" || sc["exitCode"] != float64(1) || ran["isError"] == true {
		t.Fatalf("run_command through the Inspector: %v", ran)
	}
	bad := inspect("--method", "tools/call", "--tool-name", "run_command", "--tool-arg", "terminal=abc123", "--tool-arg", "command=uptime")
	if text, _ := json.Marshal(bad["content"]); bad["isError"] != true || !strings.Contains(string(text), "there is no terminal abc123") {
		t.Fatalf("run_command in a terminal that does not exist: %v, want a tool error", bad)
	}
	inspect("--method", "tools/call", "--tool-name", "close_terminal", "--tool-arg", terminalArg)
}

// structured is a tool result's structured content; a result without it (a
// tool error) fails the test with the result.
func structured(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	sc, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("tool result without structured content: %v", res)
	}
	return sc
}
