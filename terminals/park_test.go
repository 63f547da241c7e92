package terminals

import (
	"bytes"
	"context"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"

	"github.com/termhost/termhost/internal/poll"
)

// readersRunning counts the goroutines running a terminal's reader.
func readersRunning(t *testing.T) int {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, stack := range strings.Split(b.String(), "\n\n") {
		frames, _, _ := strings.Cut(stack, "\ncreated by ")
		if strings.Contains(frames, "terminals.(*reader).run(") {
			n++
		}
	}
	return n
}

// waitParked waits until no reader goroutine runs: every terminal's reader
// has parked in the watcher.
func waitParked(t *testing.T) {
	t.Helper()
	if n, ok := poll.Last(20*time.Second, func() (int, bool) { n := readersRunning(t); return n, n == 0 }); !ok {
		t.Fatalf("after 20 s, %d reader goroutines still run: the readers do not park", n)
	}
}

// TestReaderParks: a quiet terminal's reader holds no goroutine (the pty
// watcher waits for its output); output, a resize and the exit wake it and
// nothing is lost, and a parked terminal is disposed of at once.
func TestReaderParks(t *testing.T) {
	m := testManager(t, Config{DisposeGrace: 100 * time.Millisecond})
	defer m.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	uri := "ahp-terminal:/parks"
	rec := claimedTerminal(t, m, uri)
	if err := rec.waitFor(ctx, "$ "); err != nil {
		t.Fatal(err)
	}
	waitParked(t)
	// Output after the park: a command's, then a large one, byte for byte.
	seq := int64(1)
	dispatch := func(data string) {
		seq++
		m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: seq}, uri, input(t, data), Policy{})
	}
	dispatch("echo wo''ke-$((6*7))\r")
	if err := rec.waitFor(ctx, "woke-42"); err != nil {
		t.Fatal(err)
	}
	waitParked(t)
	dispatch("sleep 0.2; seq 1 20000 | tail -n 1 | sed s/^/last-/\r")
	if err := rec.waitFor(ctx, "last-20000"); err != nil {
		t.Fatal(err)
	}
	waitParked(t)
	// The exit while parked: reported with its code, the terminal released.
	dispatch("exit 5\r")
	if err := rec.waitFor(ctx, `"terminal/exited","exitCode":5`); err != nil {
		t.Fatal(err)
	}

	// Disposed while parked: Dispose kills the shell, the reader wakes and ends.
	other := "ahp-terminal:/parks-dispose"
	rec2 := claimedTerminal(t, m, other)
	if err := rec2.waitFor(ctx, "$ "); err != nil {
		t.Fatal(err)
	}
	waitParked(t)
	done := make(chan error, 1)
	go func() { done <- m.Dispose(other) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("Dispose of a terminal whose reader was parked did not return")
	}
}
