package handlers_test

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// TestIdleTabGoroutines (issue 28, idle memory): a tab at rest (its own
// connection, its terminal at a prompt) holds two goroutines of the server:
// the connection's reader and the terminal's pty reader. The connection's
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
	waitUntil(t, 30*time.Second, "the tabs' goroutines to come to rest", func() bool {
		counts = goroutinesRunning(t, "handlers.(*conn).run(", "terminals.(*reader).loop(", // per tab
			"handlers.(*conn).send(", "terminals.(*terminal).write(", "pty.(*Process).wait(") // only while working
		return counts["handlers.(*conn).send("]+counts["terminals.(*terminal).write("]+counts["pty.(*Process).wait("] == 0
	})
	if counts["handlers.(*conn).run("] != tabs || counts["terminals.(*reader).loop("] != tabs {
		t.Fatalf("at rest with %d tabs: %v", tabs, counts)
	}
	// Work brings the writers back, and they end again.
	c := ts.dial(t)
	c.Initialize("1.0.0", "late")
	uri, _ := c.CreateTerminal("late", "late", nil)
	c.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo late-$((6*7))\r"})
	c.WaitOutput(uri, "late-42")
	waitUntil(t, 30*time.Second, "the late tab's writers to end", func() bool {
		counts = goroutinesRunning(t, "handlers.(*conn).send(", "terminals.(*terminal).write(")
		return counts["handlers.(*conn).send("]+counts["terminals.(*terminal).write("] == 0
	})
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
