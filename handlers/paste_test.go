package handlers_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testenv"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// pasteChunk is how much of a paste one terminal/input carries in these
// tests, as a browser's paste is sent.
const pasteChunk = 4 << 10

// pasteText is n bytes of printable text, the same for every run.
func pasteText(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:-_=+*/()[]{}"
	r := rand.New(rand.NewPCG(uint64(n), 42))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// pasteFrames is text as dispatchAction frames of pasteChunk bytes of
// terminal/input each, numbered from seq.
func pasteFrames(t *testing.T, uri, text string, seq int64) [][]byte {
	var frames [][]byte
	for i := 0; i < len(text); i += pasteChunk {
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{
			"channel": uri, "clientSeq": seq, "action": map[string]any{"type": ahp.TerminalInput, "data": text[i:min(len(text), i+pasteChunk)]}}})
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, b)
		seq++
	}
	return frames
}

// sendFrames writes frames on c's socket from a goroutine of its own (the
// server stops reading the socket while the paste waits, so the writes
// block); the channel gets the first error, or nil once all are written.
func sendFrames(t *testing.T, c *client, frames [][]byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		for _, f := range frames {
			if err := c.Conn().Write(t.Context(), websocket.MessageText, f); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	return done
}

// notReading has the terminal's shell run a program that reads nothing
// from the terminal until the returned function is called, then cmd; the
// terminal is raw, without echo, so the paste reaches cmd byte for byte.
func notReading(t *testing.T, c *client, uri, cmd string) (goOn func()) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "go-on")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	c.Dispatch(uri, map[string]any{"type": ahp.TerminalInput, "data": "stty raw -echo; echo NOT''READING; cat " + fifo + "; " + cmd + "\r"})
	c.WaitOutput(uri, "NOTREADING")
	return func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // cat has it open to read
		if err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
	}
}

// rejections are the rejection envelopes c got on uri.
func rejections(c *client, uri string) []ahp.Envelope {
	var out []ahp.Envelope
	for _, e := range c.Envelopes() {
		if e.Channel == uri && e.RejectionReason != "" {
			out = append(out, e)
		}
	}
	return out
}

// TestPasteIsPaced: a paste far larger than the terminal's input queue,
// sent as 4 KiB dispatches into a program that reads it only later,
// reaches the program byte for byte (checksums compared) and nothing is
// refused: the server stops reading the pasting connection while the
// queue is full and goes on once the program reads. Meanwhile another
// connection of the owner types into another terminal and sees its
// output. (The queue held 64 chunks, 256 KiB, and then refused every
// dispatch with "input queue is full".)
func TestPasteIsPaced(t *testing.T) {
	t.Parallel()
	pasteIsPaced(t, 256<<10, 1<<20)
}

// TestPasteIsPacedVolume is TestPasteIsPaced with 4 MiB into the default
// queue.
func TestPasteIsPacedVolume(t *testing.T) {
	testenv.Volume(t)
	pasteIsPaced(t, 0, 4<<20)
}

// pasteIsPaced pastes paste bytes through an input queue of queue bytes
// (0: the default).
func pasteIsPaced(t *testing.T, queue, paste int) {
	ts := newServer(t, testserver.Terminals(func(c *terminalsConfig) {
		c.InputQueue = queue
		c.InputStall = time.Hour // this program reads: it is never refused
	}))
	a := ts.dial(t)
	a.SetWaitTimeout(5 * time.Minute)
	a.Initialize("1.0.0", "paster")
	uri, _ := a.CreateTerminal("paste", "paster", nil)
	goOn := notReading(t, a, uri, "head -c "+fmt.Sprint(paste)+" | sha256sum")

	text := pasteText(paste)
	frames := pasteFrames(t, uri, text, 1000)
	sent := sendFrames(t, a, frames)
	// The queue fills (the pty itself takes a few KiB) and the
	// pasting connection waits.
	poll.Until(t, 2*time.Minute, "the pasting connection waits for room", func() bool { return ts.srv.InputWaits() > 0 })

	// Another connection of the owner, on another terminal, is not held up.
	b := ts.dial(t)
	b.Initialize("1.0.0", "other-tab")
	other, _ := b.CreateTerminal("other", "other-tab", nil)
	b.Dispatch(other, map[string]any{"type": ahp.TerminalInput, "data": "echo oth''er-$((6*7))\r"})
	b.WaitOutput(other, "other-42")
	if ts.srv.InputWaits() == 0 {
		t.Fatal("the pasting connection went on before its program read")
	}

	goOn()
	select {
	case err := <-sent:
		if err != nil {
			t.Fatalf("pasting: %v", err)
		}
	case <-time.After(5 * time.Minute):
		t.Fatal("the paste was not taken within 5 minutes of the program reading")
	}
	last := int64(1000 + len(frames) - 1)
	a.WaitAction("the paste's last dispatch answered", func(e ahp.Envelope) bool {
		return e.Channel == uri && e.Origin != nil && e.Origin.ClientSeq == last
	})
	if r := rejections(a, uri); len(r) > 0 {
		t.Fatalf("%d dispatches of the paste refused, the first: %q", len(r), r[0].RejectionReason)
	}
	sum := sha256.Sum256([]byte(text))
	a.WaitOutput(uri, hex.EncodeToString(sum[:]))
	echoed := 0
	for _, e := range a.Envelopes() {
		if e.Channel == uri && e.Action.Type == ahp.TerminalInput && e.Origin != nil && e.Origin.ClientSeq >= 1000 {
			echoed++
		}
	}
	if echoed != len(frames) {
		t.Errorf("%d of %d dispatches of the paste echoed", echoed, len(frames))
	}
	if got := ts.metric(t, "termhost_paced_input_total"); got < 1 {
		t.Errorf("termhost_paced_input_total = %v, want at least 1", got)
	}
}

// TestInputToStalledProgramRefused: input to a program that takes nothing
// from its full input queue waits for Config.InputStall, and is then
// refused with a reason that says so; so is every input after it while
// the program still does not read. Once it reads again, input is accepted.
func TestInputToStalledProgramRefused(t *testing.T) {
	const stall = 500 * time.Millisecond
	ts := newServer(t, testserver.Terminals(func(c *terminalsConfig) {
		c.InputQueue = 64 << 10
		c.InputStall = stall
	}))
	a := ts.dial(t)
	a.Initialize("1.0.0", "paster")
	uri, _ := a.CreateTerminal("stalled", "paster", nil)
	goOn := notReading(t, a, uri, "cat > /dev/null")

	// 256 KiB: four times what the queue holds.
	frames := pasteFrames(t, uri, pasteText(256<<10), 1000)
	start := time.Now()
	sent := sendFrames(t, a, frames)
	if err := <-sent; err != nil {
		t.Fatalf("pasting: %v", err)
	}
	last := int64(1000 + len(frames) - 1)
	a.WaitAction("the last dispatch answered", func(e ahp.Envelope) bool {
		return e.Channel == uri && e.Origin != nil && e.Origin.ClientSeq == last
	})
	refused := rejections(a, uri)
	if len(refused) == 0 {
		t.Fatal("nothing refused: the queue is not bounded")
	}
	first := refused[0]
	if want := terminals.StalledInput(stall); first.RejectionReason != want {
		t.Fatalf("rejection reason %q, want %q", first.RejectionReason, want)
	}
	if !strings.Contains(first.RejectionReason, "has read no input for 500ms") {
		t.Errorf("the reason does not say how long the program has not read: %q", first.RejectionReason)
	}
	// Refused only after the connection waited the whole bound for the
	// program to read (its reader was paused).
	if waited := time.Since(start); waited < stall {
		t.Errorf("refused %v after the paste began, before the %v bound", waited, stall)
	}
	if got := ts.metric(t, "termhost_paced_input_total"); got < 1 {
		t.Errorf("termhost_paced_input_total = %v: the input was refused without waiting", got)
	}
	// Everything up to the first refusal was accepted (it filled the
	// queue); what came after it is refused at once, for the same reason,
	// while the program does not read.
	accepted := int(first.Origin.ClientSeq - 1000)
	if accepted*pasteChunk < 64<<10-pasteChunk {
		t.Errorf("refused after %d KiB accepted, before the 64 KiB queue was full", accepted*pasteChunk>>10)
	}
	for _, e := range refused {
		if e.RejectionReason != first.RejectionReason {
			t.Errorf("dispatch %d refused with %q", e.Origin.ClientSeq, e.RejectionReason)
		}
	}

	// The program reads again: once it has taken some of the queue, input
	// is accepted again (until then it is still refused as stalled).
	goOn()
	poll.Until(t, time.Minute, "input accepted once the program reads", func() bool {
		seq := a.Dispatch(uri, map[string]any{"type": ahp.TerminalInput, "data": pasteText(pasteChunk)})
		e := a.WaitAction("the input after the program read", func(e ahp.Envelope) bool {
			return e.Channel == uri && e.Origin != nil && e.Origin.ClientSeq == seq
		})
		if e.RejectionReason != "" && e.RejectionReason != first.RejectionReason {
			t.Fatalf("input after the program read again refused: %q", e.RejectionReason)
		}
		return e.RejectionReason == ""
	})
}
