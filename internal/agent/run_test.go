package agent_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunCommand(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	tests := []struct {
		name, command string
		exit          int
		want          string
	}{
		{"success", "echo hello", 0, "hello"},
		{"failure", "echo oops; false", 1, "oops"},
		{"exit code", "(exit 7)", 7, ""},
		{"several lines", "echo first\necho second", 0, "first\nsecond"},
		{"carriage returns and colours", `printf '10%%\r50%%\r\033[32m100%%\033[0m\n'`, 0, "100%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, text := r.ok(t, "run_command", map[string]any{"terminal": id, "command": tt.command})
			if out["status"] != "finished" || num(out["exitCode"]) != tt.exit || !strings.Contains(out["output"].(string), tt.want) {
				t.Fatalf("run_command(%q) = %v (%s), want finished, exit %d, output with %q", tt.command, out, text, tt.exit, tt.want)
			}
			if strings.Contains(out["output"].(string), "\x1b") || strings.Contains(out["output"].(string), "\r") {
				t.Fatalf("run_command(%q) output has escapes: %q", tt.command, out["output"])
			}
		})
	}
	t.Run("progress keeps only the last frame", func(t *testing.T) {
		out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": `printf '10%%\r50%%\r100%%\n'`})
		if got := out["output"].(string); got != "100%" {
			t.Fatalf("output %q, want %q", got, "100%")
		}
	})
}

func TestRunLongAndBinaryOutput(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	out, text := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "seq 1 200000"})
	got := out["output"].(string)
	if out["truncated"] != true || num(out["outputBytes"]) < 1_000_000 || !strings.HasPrefix(got, "1\n2\n3\n") ||
		!strings.HasSuffix(got, "199999\n200000") || len(got) > 40<<10 {
		t.Fatalf("seq 1 200000: truncated %v, %v bytes, %d bytes of text (%.200s … %.200s); %s", out["truncated"], out["outputBytes"], len(got), got, got[max(0, len(got)-200):], text[:min(len(text), 200)])
	}
	if !strings.HasSuffix(out["fullOutputUrl"].(string), "/t/"+id+"/output.txt") {
		t.Fatalf("fullOutputUrl %v", out["fullOutputUrl"])
	}
	// Random bytes without ESC: ESC ( 0 in them (about 1 run in 100) would
	// switch the terminal to line drawing and rightly garble "done".
	out, _ = r.ok(t, "run_command", map[string]any{"terminal": id, "command": "head -c 200000 /dev/urandom | tr -d '\\033'; echo; echo done"})
	if out["status"] != "finished" || num(out["exitCode"]) != 0 || !strings.HasSuffix(out["output"].(string), "done") {
		t.Fatalf("binary output: %v", out["status"])
	}
	// The shell is still usable afterwards.
	out, _ = r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo still here"})
	if out["output"] != "still here" {
		t.Fatalf("after binary output: %q", out["output"])
	}
}

func TestRunTimeoutThenWaitAndInterrupt(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo started; sleep 600", "timeoutSeconds": 1})
	if out["status"] != "still_running" || !strings.Contains(out["output"].(string), "started") {
		t.Fatalf("never-ending command: %v", out)
	}
	r.fails(t, "run_command", map[string]any{"terminal": id, "command": "echo next"}, "is still running")
	out, _ = r.ok(t, "wait_for", map[string]any{"terminal": id, "timeoutSeconds": 1})
	if out["status"] != "still_running" {
		t.Fatalf("wait_for a running command: %v", out)
	}
	r.ok(t, "send_input", map[string]any{"terminal": id, "keys": []string{"Ctrl-C"}})
	out, _ = r.ok(t, "wait_for", map[string]any{"terminal": id, "timeoutSeconds": 30})
	if out["status"] != "finished" || num(out["exitCode"]) != 130 {
		t.Fatalf("after Ctrl-C: %v", out)
	}
	out, _ = r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo next"})
	if out["output"] != "next" {
		t.Fatalf("after the interrupt: %v", out)
	}
}

func TestInputAwaited(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	out, text := r.ok(t, "run_command", map[string]any{"terminal": id, "command": `read -p "Name: " n; echo "hello $n"`, "timeoutSeconds": 60})
	if out["status"] != "input_awaited" || !strings.Contains(out["output"].(string), "Name:") {
		t.Fatalf("a prompt: %v (%s)", out, text)
	}
	r.ok(t, "send_input", map[string]any{"terminal": id, "text": "bob", "keys": []string{"Enter"}})
	out, _ = r.ok(t, "wait_for", map[string]any{"terminal": id})
	if out["status"] != "finished" || !strings.Contains(out["output"].(string), "hello bob") {
		t.Fatalf("after answering: %v", out)
	}
}

func TestWaitForPatternAndRead(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	in, _ := r.ok(t, "send_input", map[string]any{"terminal": id, "text": "for i in 1 2 3; do echo tick$i; sleep 0.2; done; echo READY", "keys": []string{"Enter"}})
	out, _ := r.ok(t, "wait_for", map[string]any{"terminal": id, "pattern": `(?m)^READY$`, "since": in["cursor"]})
	if out["status"] != "matched" || out["match"] != "READY" {
		t.Fatalf("wait_for READY: %v", out)
	}
	out, _ = r.ok(t, "read_terminal", map[string]any{"terminal": id, "mode": "output", "since": in["cursor"]})
	if txt := out["text"].(string); !strings.Contains(txt, "tick1\ntick2\ntick3\nREADY") {
		t.Fatalf("read output: %q", txt)
	}
	_, text := r.ok(t, "read_terminal", map[string]any{"terminal": id})
	if !strings.Contains(text, "tick3") {
		t.Fatalf("read screen: %q", text)
	}
	out, _ = r.ok(t, "wait_for", map[string]any{"terminal": id, "pattern": "never-printed", "timeoutSeconds": 1})
	if out["status"] != "timeout" {
		t.Fatalf("wait_for a pattern that never comes: %v", out)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	huge := "echo " + strings.Repeat("x", 100<<10)
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"run_command", map[string]any{"terminal": id, "command": ""}, "command is empty"},
		{"run_command", map[string]any{"terminal": id, "command": huge}, "write it to a script file"},
		{"run_command", map[string]any{"terminal": id, "command": "echo \x1b[31m"}, "control character"},
		{"run_command", map[string]any{"terminal": id, "command": "echo hi", "timeoutSeconds": 10000}, "timeoutSeconds must be between"},
		{"run_command", map[string]any{"terminal": "no such/thing", "command": "true"}, "not a terminal id"},
		{"run_command", map[string]any{"terminal": "abc123", "command": "true"}, "was not opened by this agent"},
		{"run_command", map[string]any{"command": "true"}, "terminal"},
		{"send_input", map[string]any{"terminal": id, "keys": []string{"Hyper-Q"}}, "unknown key"},
		{"send_input", map[string]any{"terminal": id}, "nothing to send"},
		{"wait_for", map[string]any{"terminal": id, "pattern": "(unclosed"}, "not a valid regular expression"},
		{"read_terminal", map[string]any{"terminal": id, "mode": "video"}, "use screen or output"},
		{"read_terminal", map[string]any{"terminal": id, "mode": "output", "maxBytes": 100}, "maxBytes must be between 2048 and 131072"},
		{"run_command", map[string]any{"terminal": id, "command": "true", "maxBytes": 1 << 20}, "maxBytes must be between 2048 and 131072"},
		{"wait_for", map[string]any{"terminal": id, "maxBytes": -1}, "maxBytes must be between 2048 and 131072"},
		{"open_terminal", map[string]any{"cwd": "relative/dir"}, "not an absolute path"},
		{"close_terminal", map[string]any{"terminal": "abc123"}, "was not opened by this agent"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %.40v", tt.tool, tt.args), func(t *testing.T) {
			r.fails(t, tt.tool, tt.args, tt.want)
		})
	}
	// After all that the terminal still runs commands.
	out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "echo fine"})
	if out["output"] != "fine" {
		t.Fatalf("after bad input: %v", out)
	}
}

func TestNoShellIntegration(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	out, _ := r.ok(t, "open_terminal", map[string]any{"command": []string{"cat"}})
	id := out["id"].(string)
	r.fails(t, "run_command", map[string]any{"terminal": id, "command": "echo hi"}, "reports no command ends")
	in, _ := r.ok(t, "send_input", map[string]any{"terminal": id, "text": "echoed back", "keys": []string{"Enter"}})
	out, _ = r.ok(t, "wait_for", map[string]any{"terminal": id, "pattern": "echoed back\\s*\\n\\s*echoed back", "since": in["cursor"]})
	if out["status"] != "matched" {
		t.Fatalf("cat: %v", out)
	}
	r.ok(t, "close_terminal", map[string]any{"terminal": id})
	r.fails(t, "read_terminal", map[string]any{"terminal": id}, "not opened by this agent")
}

// TestRunDurationAndCwd: a terminal opened with an absolute
// cwd runs its shell there (pwd, and the cwd list_terminals reports), and
// run_command reports how long the command ran: at least its sleep, and
// no more than the tool call took.
func TestRunDurationAndCwd(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, text := r.ok(t, "open_terminal", map[string]any{"name": "in a directory", "cwd": dir})
	if out["shellIntegration"] != true {
		t.Fatalf("open_terminal: no shell integration: %s %v", text, out)
	}
	id := out["id"].(string)
	if out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "pwd -P"}); out["output"] != real || num(out["exitCode"]) != 0 {
		t.Fatalf("pwd in a terminal opened with cwd %s: %v", dir, out)
	}
	list, _ := r.ok(t, "list_terminals", nil)
	terms := list["terminals"].([]any)
	if len(terms) != 1 || terms[0].(map[string]any)["cwd"] != dir && terms[0].(map[string]any)["cwd"] != real {
		t.Fatalf("list_terminals: %v, want the terminal with cwd %s", terms, dir)
	}

	// The duration runs from the command's start mark to its end mark as
	// the server reads them: within the call, but a loaded server may read
	// the start late, so it can be shorter than the sleep (191 ms seen).
	start := time.Now()
	out, text = r.ok(t, "run_command", map[string]any{"terminal": id, "command": "sleep 0.2"})
	took := time.Since(start)
	d, ok := out["durationMs"].(float64)
	if !ok || out["status"] != "finished" || d < 0 || d > float64(took.Milliseconds()) {
		t.Fatalf("run_command(sleep 0.2) = %v, want finished with durationMs within the call's %d ms", out, took.Milliseconds())
	}
	if !strings.HasPrefix(text, "Exit code 0 after ") {
		t.Fatalf("run_command(sleep 0.2) text %q, want the exit code and the duration", text)
	}
	if out, _ := r.ok(t, "run_command", map[string]any{"terminal": id, "command": "true"}); out["durationMs"] == nil {
		t.Fatalf("run_command(true) = %v, want a durationMs (0 included)", out)
	}

	r.fails(t, "open_terminal", map[string]any{"cwd": filepath.Join(dir, "no such directory")}, "no such directory")
}

// TestPasswordPromptAwaitsInput: a silent password prompt (read -s) is
// reported as waiting for a secret, not waited on until the timeout, and
// the agent may not answer it: a person types it (TestSecretPrompt goes
// on from there).
func TestPasswordPromptAwaitsInput(t *testing.T) {
	t.Parallel()
	r := newRig(t, false)
	id := r.open(t)
	out, text := r.ok(t, "run_command", map[string]any{"terminal": id, "command": `read -s -p 'Password: ' pw; echo; echo "got ${#pw} characters"`, "timeoutSeconds": 120})
	if out["status"] != "input_awaited" || out["secret"] != true || !strings.Contains(out["output"].(string), "Password:") || !strings.Contains(text, "password") {
		t.Fatalf("a password prompt: %v (%s)", out, text)
	}
	r.fails(t, "send_input", map[string]any{"terminal": id, "text": "hunter2", "keys": []string{"Enter"}}, "a person must answer this prompt")
}
