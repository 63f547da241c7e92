package terminals

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
)

// TestKeystrokesKeepOrder: a keystroke goes straight to the pty only when
// nothing is queued before it, so keystrokes typed while a big paste is
// still queued arrive after the paste, and keystrokes alone arrive in the
// order typed.
func TestKeystrokesKeepOrder(t *testing.T) {
	m := testManager(t, Config{DisposeGrace: 100 * time.Millisecond})
	defer m.Close()
	uri := "ahp-terminal:/order"
	rec := claimedTerminal(t, m, uri)
	out := filepath.Join(t.TempDir(), "typed")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	seq := int64(0)
	send := func(data string) {
		seq++
		if got := m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: seq}, uri, input(t, data), Policy{}); got != Accepted {
			t.Fatalf("input %d: %v, want accepted", seq, got)
		}
	}
	send("stty raw -echo; echo RE''ADY; head -c 262153 > " + out + "; echo TYPED''DONE\r")
	if err := rec.waitFor(ctx, "READY"); err != nil { // raw: no 4 KiB line limit
		t.Fatal(err)
	}
	paste := strings.Repeat("p", 64<<10)
	var want strings.Builder
	for range 4 {
		send(paste) // 256 KiB: far more than the pty takes at once
		want.WriteString(paste)
		send("k") // a keystroke typed meanwhile: after the paste
		want.WriteString("k")
	}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		send(k)
		want.WriteString(k)
	}
	if err := rec.waitFor(ctx, "TYPEDDONE"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		i := 0
		for i < len(got) && i < want.Len() && got[i] == want.String()[i] {
			i++
		}
		t.Errorf("the program read %d bytes, differing from what was typed at byte %d (got %q…, want %q…)",
			len(got), i, got[i:min(len(got), i+8)], want.String()[i:min(want.Len(), i+8)])
	}
	// With the queue empty the writer's goroutine ends: an idle terminal holds none.
	m.mu.Lock()
	term := m.terms[uri]
	m.mu.Unlock()
	for term.writer.Running() {
		select {
		case <-ctx.Done():
			t.Fatal("the input writer still runs with nothing queued")
		case <-time.After(time.Millisecond):
		}
	}
}

// TestInputQueueFull: a program that does not read its input gets what
// the queue holds (Config.InputQueue bytes, inputSlots chunks) and then
// every input is rejected, with its reason, until it reads again; then the
// queue drains and input is accepted again.
func TestInputQueueFull(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chunk int
	}{
		{"bytes", 4 << 10}, // the 64 KiB byte bound comes first
		{"chunks", 100},    // 64 chunks of 100 bytes: the chunk bound comes first
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testManager(t, Config{InputQueue: 64 << 10, DisposeGrace: 100 * time.Millisecond})
			defer m.Close()
			fifo := filepath.Join(t.TempDir(), "go-on")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			uri := "ahp-terminal:/full"
			rec := claimedTerminal(t, m, uri)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			seq := int64(1)
			dispatch := func(data string) Outcome {
				seq++
				return m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: seq}, uri, input(t, data), Policy{})
			}
			// cat waits on the fifo, reading nothing from the terminal, until
			// the test opens and closes it; then a second cat reads everything.
			dispatch("stty -icanon -echo; echo NOT''READING; cat " + fifo + "; cat >/dev/null\r")
			if err := rec.waitFor(ctx, "NOTREADING"); err != nil {
				t.Fatal(err)
			}
			m.mu.Lock()
			term := m.terms[uri]
			m.mu.Unlock()
			accepted := 0
			for dispatch(strings.Repeat("y", tc.chunk)) == Accepted {
				if accepted++; accepted > 1000 {
					t.Fatal("1000 inputs accepted by a program that does not read: the queue is not bounded")
				}
			}
			if !strings.Contains(rec.all(), "input queue is full; the shell is not reading") {
				t.Fatalf("rejection without its reason: %q", rec.all())
			}
			// The pty's own buffers keep taking some input after the
			// rejection, so only what was accepted tells which bound held.
			if q := term.queued.Load(); q > 64<<10 {
				t.Errorf("%d bytes queued, over the 64 KiB bound", q)
			}
			if n := term.input.len(); n > inputSlots {
				t.Errorf("%d chunks queued, over the bound of %d", n, inputSlots)
			}
			switch tc.name {
			case "bytes": // refused once the queue could not take another chunk
				if accepted*tc.chunk <= 64<<10-tc.chunk {
					t.Errorf("refused after %d bytes, before the 64 KiB bound", accepted*tc.chunk)
				}
			case "chunks": // refused with bytes to spare: by the chunk bound
				if accepted < inputSlots || accepted*tc.chunk >= 64<<10-tc.chunk {
					t.Errorf("refused after %d chunks of %d bytes, want at least %d, under the byte bound", accepted, tc.chunk, inputSlots)
				}
			}
			// The program reads again: the queue drains, input is accepted.
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
			for term.queued.Load() != 0 {
				select {
				case <-ctx.Done():
					t.Fatalf("%d bytes still queued 20 s after the program reads again", term.queued.Load())
				case <-time.After(5 * time.Millisecond):
				}
			}
			if got := term.input.len(); got != 0 {
				t.Errorf("%d chunks left in a drained queue", got)
			}
			if got := dispatch(strings.Repeat("z", tc.chunk)); got != Accepted {
				t.Errorf("input after the queue drained: %v, want Accepted", got)
			}
		})
	}
}

func (q *inputQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.chunks)
}
