package handlers_test

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/poll"
)

// TestIdleTabGoroutines: idle memory is mostly goroutine stacks, so a tab at
// rest (its own connection, its terminal at a prompt) holds one goroutine of
// the server: the connection's reader. The terminal's pty reader (parked in
// the shared watcher once the pty has been quiet for 2 s), the connection's
// writer, the terminal's input writer and the shell's exit waiter run only
// while they have work; the screen model's goroutine ends a while after the
// last output and is not counted here (screen's TestIdleResizeKeepsScreen).
func TestIdleTabGoroutines(t *testing.T) {
	ts := newServer(t)
	const tabs = 12
	for i := range tabs {
		c := ts.dial(t)
		id := fmt.Sprint("tab-", i)
		c.Initialize("1.0.0", id)
		uri, _ := c.CreateTerminal(id, id, nil)
		c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo ready-$((6*7))\r"})
		c.WaitOutput(uri, "ready-42")
	}
	var counts map[string]int
	working := []string{"handlers.(*conn).send(", "terminals.(*terminal).write(", "pty.(*Process).wait(", "terminals.(*reader).run("}
	atRest := func() bool {
		counts = goroutinesRunning(t, append(working, "handlers.(*conn).read(")...) // read: one per tab
		for _, f := range working {
			if counts[f] != 0 {
				return false
			}
		}
		return true
	}
	poll.Until(t, 30*time.Second, "the tabs' goroutines to come to rest", atRest)
	if counts["handlers.(*conn).read("] != tabs {
		t.Fatalf("at rest with %d tabs: %v", tabs, counts)
	}
	// Work brings the readers and writers back, and they end again.
	c := ts.dial(t)
	c.Initialize("1.0.0", "late")
	uri, _ := c.CreateTerminal("late", "late", nil)
	c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo late-$((6*7))\r"})
	c.WaitOutput(uri, "late-42")
	poll.Until(t, 30*time.Second, "the late tab's goroutines to end", atRest)
}

// goroutinesRunning counts the goroutines of this process whose stack has a
// frame of each function.
func goroutinesRunning(t *testing.T, funcs ...string) map[string]int {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, stack := range strings.Split(b.String(), "\n\n") {
		frames, _, _ := strings.Cut(stack, "\ncreated by ") // not who started it
		for _, f := range funcs {
			if strings.Contains(frames, f) {
				counts[f]++
			}
		}
	}
	return counts
}
