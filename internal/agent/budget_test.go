package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/internal/agent"
)

// costly prints n units of what costs vt most: a count vt would work
// through one at a time without vtbound's clamp (ESC[999999b, seconds of
// CPU alone), a screen erase and line insertions (each moves every cell of
// the emulator's screen); 23 bytes a unit.
func costly(n int) string {
	return fmt.Sprintf(`printf 'x\e[999999b\e[2J\e[999999L%%.0s' $(seq %d)`, n)
}

// generous bounds a call's wall time in these tests: far above what the
// budgets allow (a fraction of a second to 2 s), far below what rendering
// costly output took without them (minutes to hours).
const generous = 30 * time.Second

// TestRunCommandCostlyOutputBounded: a quick command printing 16 KB of
// costly sequences (about 13 KB once the server has bounded their counts
// to the terminal's screen) is answered within its rendering budget
// (run_command took 20 s for such a 47 ms command, and one ESC[999999999b
// alone hours), with the output's end intact and the simplification said.
func TestRunCommandCostlyOutputBounded(t *testing.T) {
	r := newRig(t, false)
	id := r.open(t)
	start := time.Now()
	out, text := r.ok(t, "run_command", map[string]any{"terminal": id, "command": costly(720) + "; echo; echo done", "timeoutSeconds": 5})
	if d := time.Since(start); d > generous {
		t.Fatalf("run_command took %v", d)
	}
	if out["status"] != "finished" || num(out["outputBytes"]) < 12000 || !strings.HasSuffix(out["output"].(string), "done") {
		t.Fatalf("run_command: status %v, %v bytes, output ending %q", out["status"], out["outputBytes"], tail(out["output"]))
	}
	if simplified := out["simplified"] == true; simplified != strings.Contains(text, "took too long") {
		t.Fatalf("simplified %v, but the text says %q", simplified, tail(text))
	}
}

// streamCostly starts a loop printing costly output (and a line of text)
// twenty times a second in terminal id, and stops it when the test ends.
func (r *rig) streamCostly(t *testing.T, id string) {
	t.Helper()
	r.ok(t, "send_input", map[string]any{"terminal": id, "text": "while :; do echo tick; " + costly(45) + "; sleep 0.05; done", "keys": []string{"Enter"}})
	r.ok(t, "wait_for", map[string]any{"terminal": id, "pattern": "tick", "timeoutSeconds": 60})
	t.Cleanup(func() { // t.Context() has ended by now
		ctx, cancel := context.WithTimeout(context.Background(), generous)
		defer cancel()
		_, _ = r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_input", Arguments: map[string]any{"terminal": id, "keys": []string{"Ctrl-C"}}})
	})
}

// TestWaitForTimeoutWhileCostlyOutputStreams: wait_for honours its
// timeout whatever the output: each rendering starts before the timeout
// and has a budget of its own (a 2 s wait took 20 to 65 s).
func TestWaitForTimeoutWhileCostlyOutputStreams(t *testing.T) {
	r := newRig(t, false)
	id := r.open(t)
	r.streamCostly(t, id)
	start := time.Now()
	out, text := r.ok(t, "wait_for", map[string]any{"terminal": id, "pattern": "no such text", "timeoutSeconds": 1})
	if d := time.Since(start); d > generous {
		t.Fatalf("wait_for with a 1 s timeout took %v", d)
	}
	if out["status"] != "timeout" {
		t.Fatalf("wait_for: %v %s", out["status"], tail(text))
	}
	// A pattern in the stream is still found in it.
	if out, text = r.ok(t, "wait_for", map[string]any{"terminal": id, "pattern": "tick", "timeoutSeconds": 10}); out["status"] != "matched" {
		t.Fatalf("wait_for tick: %v %s", out["status"], tail(text))
	}
}

// TestCallsDoNotQueueBehindASlowOne: while a wait_for renders costly
// output for long (a budget of a minute here, 12 s a rendering for its
// 120 s timeout), the session's other calls are answered at once: the
// rendering runs outside the session's lock (it held the lock, and so
// every other call of the session and the event pump, for as long as it
// took).
func TestCallsDoNotQueueBehindASlowOne(t *testing.T) {
	r := newRigWith(t, func(c *agent.Config) { c.RenderBudget = time.Minute })
	id := r.open(t)
	r.streamCostly(t, id)
	ctx, cancel := context.WithCancel(t.Context())
	slow := make(chan error, 1)
	go func() {
		_, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for", Arguments: map[string]any{"terminal": id, "pattern": "no such text", "timeoutSeconds": 120}})
		slow <- err
	}()
	defer func() {
		cancel()
		<-slow
	}()
	// The slow call renders from the first output change on.
	for range 3 {
		start := time.Now()
		r.ok(t, "list_terminals", nil)
		// The server may refuse the screen while its own model works
		// through the costly output (it has a time bound of its own): an
		// answer is what counts here.
		r.call(t, "read_terminal", map[string]any{"terminal": id})
		if d := time.Since(start); d > 15*time.Second { // 34 s with the rendering under the lock
			t.Fatalf("two calls beside a slow wait_for took %v", d)
		}
	}
	select {
	case err := <-slow:
		t.Fatalf("the slow wait_for ended early: %v", err)
	default:
	}
}

func tail(v any) string {
	s := fmt.Sprint(v)
	return s[max(len(s)-200, 0):]
}
