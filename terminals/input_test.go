package terminals

import (
	"context"
	"encoding/json"
	"fmt"
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
// the queue holds, Config.InputQueue bytes however small the inputs (they
// are joined into chunks), and then input is neither accepted nor refused
// but Full: its dispatcher waits in AwaitInput. The wait ends once the
// program reads (the input then goes in), or, if it takes nothing from
// the full queue for Config.InputStall, the input is refused with a
// reason that says so. (The queue held 64 chunks: a paste of 4 KiB
// inputs was refused at 256 KiB, whatever the bound and however fast the
// program read.)
func TestInputQueueFull(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chunk int
	}{
		{"4KiB inputs", 4 << 10},
		{"100-byte inputs", 100}, // 64 of them were a full queue
	} {
		t.Run(tc.name, func(t *testing.T) {
			const stall = 300 * time.Millisecond
			m := testManager(t, Config{InputQueue: 64 << 10, InputStall: stall, DisposeGrace: 100 * time.Millisecond})
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
			var out Outcome
			var full time.Time // before the dispatch that found the queue full
			for full, out = time.Now(), dispatch(strings.Repeat("y", tc.chunk)); out == Accepted; full, out = time.Now(), dispatch(strings.Repeat("y", tc.chunk)) {
				if accepted++; accepted > 10000 {
					t.Fatal("10000 inputs accepted by a program that does not read: the queue is not bounded")
				}
			}
			if out != Full {
				t.Fatalf("input to a full queue: %v, want Full (%q)", out, rec.all())
			}
			if strings.Contains(rec.all(), "rejectionReason") {
				t.Fatalf("input refused before the program stalled: %q", rec.all())
			}
			// The pty's own buffers take a few KiB (some of them late); the
			// queue holds the rest, up to its bound in bytes, in few chunks.
			if q := term.queued.Load(); q > 64<<10 {
				t.Errorf("%d bytes queued, over the 64 KiB bound", q)
			}
			if n := term.input.len(); n > 64<<10/inputChunk+1 {
				t.Errorf("%d chunks queued for %d bytes: small inputs are not joined", n, term.queued.Load())
			}
			// Full means the next chunk would pass the bound: with nothing
			// taken by the pty yet, that is up to one chunk short of it.
			if accepted*tc.chunk+tc.chunk <= 64<<10 {
				t.Errorf("full after %d bytes, with room for another %d-byte input under the 64 KiB bound", accepted*tc.chunk, tc.chunk)
			}

			// Nothing read: the wait ends after the stall bound and the input
			// is refused, saying why. (The pty may still take a few bytes
			// late, which makes room for some input and counts as reading.)
			for out != Rejected {
				if ctx.Err() != nil {
					t.Fatalf("input to a program that does not read never refused: %v", out)
				}
				m.AwaitInput(ctx, uri, tc.chunk)
				out = dispatch(strings.Repeat("z", tc.chunk))
			}
			if waited := time.Since(full); waited < stall {
				t.Errorf("refused %v after the queue was full, within the %v bound", waited, stall)
			}
			want := "input refused: the program in this terminal has read no input for 300ms and its input queue is full"
			if StalledInput(stall) != want || !strings.Contains(rec.all(), want) {
				t.Fatalf("rejection without its reason %q: %q", want, rec.all())
			}

			// The program reads again: a waiting dispatch goes on once there
			// is room, the queue drains, input is accepted.
			waited := make(chan struct{})
			go func() {
				defer close(waited)
				m.AwaitInput(ctx, uri, tc.chunk)
			}()
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
			<-waited
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

// TestSilentProgramGetsInputAtOnce: a terminal that runs a command (here
// cat, which prints nothing until it is given input) has no shell
// integration to say when it reads, so its input never waits for a sign
// of readiness: the first keystroke's echo comes although the hold is an
// hour long. (Input was held until the program printed something, or for
// the whole hold: every first keystroke into cat took 2.5 s.)
func TestSilentProgramGetsInputAtOnce(t *testing.T) {
	m := testManager(t, Config{InputHold: time.Hour, DisposeGrace: 100 * time.Millisecond})
	defer m.Close()
	uri := "ahp-terminal:/cat"
	claim := ahp.ClientClaim("me")
	if err := m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim, Cols: 80, Rows: 24,
		Meta: json.RawMessage(`{"termhost/command": ["cat"]}`)}); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	term := m.terms[uri]
	m.mu.Unlock()
	if !isClosed(term.ready) {
		t.Error("a terminal without integration is not ready once created: its input waits")
	}
	rec := newRecorder("me")
	if _, err := m.Subscribe(rec, uri); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if got := m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, input(t, "k"), Policy{}); got != Accepted {
		t.Fatalf("input: %v, want accepted", got)
	}
	// The terminal echoes the key as soon as cat's pty is given it.
	if err := rec.waitOutput(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	// And cat gets the line.
	if got := m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 2}, uri, input(t, "ey\r"), Policy{}); got != Accepted {
		t.Fatalf("input: %v, want accepted", got)
	}
	if err := rec.waitOutput(ctx, "key\r\nkey"); err != nil {
		t.Fatal(err)
	}
}

// TestInputHoldIsBounded: input typed into a shell with integration waits
// for its first prompt (shells may discard what is typed while they set
// up), but no longer than Config.InputHold. The shell's start-up waits on
// a fifo (its ~/.bashrc reads it) until the test lets it go on.
func TestInputHoldIsBounded(t *testing.T) {
	start := func(t *testing.T, hold time.Duration) (*Manager, *recorder, *terminal, string) {
		home := t.TempDir()
		fifo := filepath.Join(home, "go-on")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		rc := "read -r _ < " + fifo + "\necho RC-''DONE\n"
		if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte(rc), 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := NewManager(Config{Shell: "/bin/bash", ShellArgs: []string{}, ShellIntegration: true, Cwd: home,
			Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, InputHold: hold, DisposeGrace: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		uri := "ahp-terminal:/slowstart"
		rec := claimedTerminal(t, m, uri)
		m.mu.Lock()
		term := m.terms[uri]
		m.mu.Unlock()
		if !term.integrated {
			t.Fatal("bash started without integration: nothing to hold for")
		}
		if got := m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, input(t, "K"), Policy{}); got != Accepted {
			t.Fatalf("input: %v, want accepted", got)
		}
		return m, rec, term, fifo
	}
	goOn := func(t *testing.T, fifo string) {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // the shell has it open to read
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.WriteString("\n")
		_ = f.Close()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	t.Run("held until the prompt", func(t *testing.T) {
		_, rec, _, fifo := start(t, time.Hour)
		// Written at once, the key would be echoed (by the terminal: the
		// shell is not reading yet) before the start-up goes on.
		goOn(t, fifo)
		if err := rec.waitOutput(ctx, "K"); err != nil {
			t.Fatal(err)
		}
		out := rec.outputNow()
		if i, k := strings.Index(out, "RC-DONE"), strings.Index(out, "K"); i < 0 || k < i {
			t.Errorf("the key reached the shell before its start-up ended: %q", out)
		}
	})
	t.Run("seconds by default", func(t *testing.T) {
		// Start-up files that take seconds (a version manager's init) are
		// common: by default the hold covers them, where 300 ms let the
		// terminal echo the keys out of place.
		before := time.Now()
		_, _, term, fifo := start(t, 0)
		defer goOn(t, fifo)
		if held := term.readyBy.Sub(before); held < 2*time.Second {
			t.Errorf("input to a starting shell is held %v by default; want seconds", held)
		}
	})
	t.Run("not past the hold", func(t *testing.T) {
		_, rec, term, fifo := start(t, 50*time.Millisecond)
		// The start-up still waits: the key goes in once the hold is over,
		// and the terminal echoes it.
		if err := rec.waitOutput(ctx, "K"); err != nil {
			t.Fatal(err)
		}
		if isClosed(term.ready) || strings.Contains(rec.outputNow(), "RC-DONE") {
			t.Errorf("the shell's start-up ended before the key was echoed: the hold was not tested (%q)", rec.outputNow())
		}
		goOn(t, fifo)
	})
}

// outputNow is the terminal's output received so far.
func (r *recorder) outputNow() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.output.String()
}

// waitOutput waits until the terminal's output (not the echo of the input
// dispatched, which goes to the dispatcher at once) contains want.
func (r *recorder) waitOutput(ctx context.Context, want string) error {
	for {
		r.mu.Lock()
		out := r.output.String()
		r.mu.Unlock()
		if strings.Contains(out, want) {
			return nil
		}
		select {
		case <-r.changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for output %q: %w; the output is %q", want, ctx.Err(), out[max(0, len(out)-300):])
		}
	}
}
