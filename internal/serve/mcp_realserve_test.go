package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/cmdtest"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/terminals"
)

// stdioAgent is the real termhost mcp, started as an agent starts it (a
// subprocess on stdio) against the server at base, driven by the SDK's MCP
// client.
type stdioAgent struct {
	cs *mcp.ClientSession
}

func startStdioAgent(t *testing.T, name, base, token string) *stdioAgent {
	t.Helper()
	cmd := exec.Command(cmdtest.Binary(t), "mcp", "--server", base)
	cmd.Env = []string{"TERMHOST_TOKEN=" + token, "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	cmd.Stderr = t.Output()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &stdioAgent{cs: cs}
}

// call calls a tool; it fails the test on a protocol error, or when the
// tool's isError is not wantError.
func (a *stdioAgent) call(t *testing.T, name string, args map[string]any, wantError bool) (map[string]any, string) {
	t.Helper()
	out, text, isError, err := a.try(t.Context(), name, args)
	if err != nil || isError != wantError {
		t.Fatalf("%s(%v): %v, isError %v (want %v): %s %v", name, args, err, isError, wantError, text, out)
	}
	return out, text
}

// try is call from any goroutine: nothing is fatal.
func (a *stdioAgent) try(ctx context.Context, name string, args map[string]any) (out map[string]any, text string, isError bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, "", false, err
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(raw, &out)
	}
	return out, text, res.IsError, nil
}

// TestMCPOverStdioAgainstRealServe: the real termhost mcp,
// driven over stdio by the SDK's client, against a real "termhost serve"
// process with shell integration: it opens a terminal in a directory,
// runs commands there with their exit code, duration and output, the
// agent shows in termhost ls as "Agent · <client name>" holding a session
// claim, and the terminal is gone once closed.
func TestMCPOverStdioAgainstRealServe(t *testing.T) {
	t.Parallel()
	_, login := startServe(t, "--shell-integration", "on")
	base, token, _ := strings.Cut(login, "/#token=")
	a := startStdioAgent(t, "real-serve-agent", base, token)
	dir := t.TempDir()
	opened, text := a.call(t, "open_terminal", map[string]any{"name": "real serve", "cwd": dir}, false)
	id, _ := opened["id"].(string)
	if opened["shellIntegration"] != true || !strings.HasPrefix(fmt.Sprint(opened["url"]), base+"/t/"+id) {
		t.Fatalf("open_terminal against termhost serve: %s %v", text, opened)
	}
	// The duration is measured from the marks as the server reads them (see
	// agent's TestRunDurationAndCwd): bounded by the call, not by the sleep.
	start := time.Now()
	out, _ := a.call(t, "run_command", map[string]any{"terminal": id, "command": "pwd; echo real; sleep 0.2; (exit 3)"}, false)
	took := time.Since(start)
	if d, ok := out["durationMs"].(float64); out["status"] != "finished" || out["exitCode"] != float64(3) || out["output"] != dir+"\nreal" ||
		!ok || d < 0 || d > float64(took.Milliseconds()) {
		t.Fatalf("run_command against termhost serve: %v, want exit code 3 and a durationMs within the call's %d ms", out, took.Milliseconds())
	}

	env := map[string]string{"TERMHOST_SERVER": base, "TERMHOST_TOKEN": token}
	code, stdout, stderr := call(t, env, "ls", "--json")
	// The fields of termhost ls --json this test reads.
	var listed []struct {
		ID       string       `json:"id"`
		Claim    ahp.Claim    `json:"claim"`
		Presence []ext.Member `json:"presence"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &listed) != nil || len(listed) != 1 || listed[0].ID != id {
		t.Fatalf("termhost ls --json = %d %q %q, want the agent's terminal", code, stdout, stderr)
	}
	if got := listed[0]; got.Claim.Kind != ahp.ClaimSession || !strings.HasPrefix(got.Claim.Session, "ahp-session:") ||
		len(got.Presence) != 1 || got.Presence[0].Name != "Agent · real-serve-agent" || got.Presence[0].Kind != terminals.KindAgent {
		t.Fatalf("the agent's terminal in termhost ls: claim %+v, presence %+v", got.Claim, got.Presence)
	}

	a.call(t, "close_terminal", map[string]any{"terminal": id}, false)
	if list, text := a.call(t, "list_terminals", nil, false); len(list["terminals"].([]any)) != 0 {
		t.Fatalf("list_terminals after close_terminal: %s", text)
	}
	waitFor(t, "the terminal to leave termhost ls", func() bool {
		code, stdout, _ := call(t, env, "ls", "--json")
		return code == 0 && strings.TrimSpace(stdout) == "[]"
	})
}

// TestMCPUpgradeMidWait: "termhost upgrade" replaces the
// server's program while run_command waits for a command: the agent's AHP
// connection drops and reconnects to the upgraded server, and the tool
// call returns the command's real result (its exit code, its whole
// output), after which the agent goes on in the same terminal.
func TestMCPUpgradeMidWait(t *testing.T) {
	t.Parallel()
	next, err := nextBinary()
	if err != nil {
		t.Fatal(err)
	}
	s := startUpgradable(t, "--shell-integration", "on")
	a := startStdioAgent(t, "upgrade-agent", s.url, testToken)
	opened, text := a.call(t, "open_terminal", map[string]any{"name": "across an upgrade"}, false)
	id, _ := opened["id"].(string)
	if opened["shellIntegration"] != true {
		t.Fatalf("open_terminal: %s %v", text, opened)
	}
	channel := ahp.TerminalURI(id)
	w := watch(t, s.url, "upgrade-watcher", channel)

	// The command runs until the test creates the gate file.
	gate := filepath.Join(t.TempDir(), "gate")
	type result struct {
		out  map[string]any
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		out, text, isError, err := a.try(context.Background(), "run_command", map[string]any{"terminal": id,
			"command": fmt.Sprintf("echo begun; until [ -e %s ]; do sleep 0.05; done; echo done", gate), "timeoutSeconds": 300})
		if err == nil && isError {
			err = fmt.Errorf("tool error: %s", text)
		}
		done <- result{out, text, err}
	}()
	poll.Until(t, time.Minute, "the command to run", func() bool { out, _ := w.stream(channel); return strings.Contains(out, "begun\r\n") })

	s.install(t, next)
	out, err := exec.Command(s.exe, "upgrade", "--state-dir", s.stateDir).CombinedOutput()
	if err != nil {
		t.Fatalf("termhost upgrade: %v, output %q", err, out)
	}
	checkUpgradeMessage(t, string(out), s.first.Process.Pid)
	poll.Until(t, time.Minute, "the watcher's reconnect", func() bool { return w.saw(client.EventReconnected) })
	select {
	case r := <-done:
		t.Fatalf("run_command returned before its command finished: %v %s %v", r.out, r.text, r.err)
	default:
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("run_command never returned after the upgrade")
	}
	if r.err != nil || r.out["status"] != "finished" || r.out["exitCode"] != float64(0) || r.out["output"] != "begun\ndone" {
		t.Fatalf("run_command across termhost upgrade: %v %s %v, want finished, exit code 0, output begun, done", r.out, r.text, r.err)
	}
	if out, _ := a.call(t, "run_command", map[string]any{"terminal": id, "command": "echo after the upgrade"}, false); out["output"] != "after the upgrade" {
		t.Fatalf("run_command after the upgrade: %v", out)
	}
	a.call(t, "close_terminal", map[string]any{"terminal": id}, false)
}
