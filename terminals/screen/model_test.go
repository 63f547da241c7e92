package screen

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// run starts m until the test ends.
func run(t testing.TB, m *Model) {
	m.Start()
	t.Cleanup(m.Close)
}

func wait(t *testing.T, m *Model) State {
	t.Helper()
	s, ok := m.Mark().Wait(t.Context())
	if !ok {
		t.Fatal("no state")
	}
	return s
}

// TestMarkIsOrdered: a mark sees exactly what was fed before it.
func TestMarkIsOrdered(t *testing.T) {
	m := New(20, 3)
	m.Feed("one")
	p := m.Mark()
	m.Feed("\r\ntwo")
	run(t, m)
	s, _ := p.Wait(t.Context())
	if got, want := strings.Join(s.Lines, "|"), "one||"; got != want || s.Fed != 3 {
		t.Fatalf("lines %q fed %d, want %q fed 3", got, s.Fed, want)
	}
}

// TestOverflowMarksBehind: past MaxLag, Feed drops the queue instead of
// blocking and the model says it is not exact.
func TestOverflowMarksBehind(t *testing.T) {
	m := New(20, 3)
	chunk := strings.Repeat("x", 1<<20)
	for range MaxLag>>20 + 1 { // nothing drains: Run is not started yet
		m.Feed(chunk)
	}
	run(t, m)
	if s := wait(t, m); s.Exact || s.Fed != int64(MaxLag+1<<20) {
		t.Fatalf("exact %v fed %d, want false and %d", s.Exact, s.Fed, MaxLag+1<<20)
	}
}

// TestCheckpointRestores: an idle model's checkpoint (its redraw) gives
// the same screen back: written to a fresh model, the redraw redraws the same.
func TestCheckpointRestores(t *testing.T) {
	m := New(30, 5)
	run(t, m)
	m.Feed("\x1b[?1049h\x1b[?1h\x1b]2;t\a\x1b[2;4r\x1b[1;31mred\x1b[0m \x1b[48;2;1;2;3mrgb\x1b[0m\x1b[3;5H\x1b[4 q")
	before := wait(t, m)
	// A checkpoint is restored by writing it to a fresh emulator.
	m2 := New(30, 5)
	run(t, m2)
	m2.Feed(string(before.Redraw))
	after := wait(t, m2)
	if !bytes.Equal(before.Redraw, after.Redraw) || !after.AltScreen {
		t.Fatalf("redraw of the redraw:\n got %q\nwant %q", after.Redraw, before.Redraw)
	}
}

func TestCarry(t *testing.T) {
	for _, tc := range []struct{ name, tail, want string }{
		{"complete", "ab\x1b[31mc", ""},
		{"csi", "ab\x1b[3", "\x1b[3"},
		{"osc", "x\x1b]2;tit", "\x1b]2;tit"},
		{"osc st", "x\x1b]2;t\x1b\\", ""},
		{"utf8", "a\xe2\x9c", "\xe2\x9c"},
		{"utf8 done", "a\xe2\x9c\x93", ""},
		{"esc", "a\x1b", "\x1b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(carry([]byte(tc.tail))); got != tc.want {
				t.Fatalf("carry(%q) = %q, want %q", tc.tail, got, tc.want)
			}
		})
	}
}

// mixed is output like the bench's workload: text, SGR colours, UTF-8.
func mixed(size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "\x1b[38;5;%dmline %d\x1b[0m plain text, \x1b[1mbold\x1b[0m, é ✓ 界 \x1b[38;2;10;20;30mrgb\x1b[0m\r\n", i%256, i)
	}
	return b.Bytes()[:size]
}

// TestFastForwardIsExact: skipping what scrolls off gives the screen
// writing everything gives.
func TestFastForwardIsExact(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"mixed", string(mixed(64 << 10))},
		{"region", "\x1b[2;4r" + string(mixed(8<<10))},
		{"bare LF", strings.Repeat("text\n", 500)},
		{"after cursor moves", "\x1b[3;3Hx\x1b[41m" + string(mixed(8<<10)) + "\x1b[Hend"},
		{"osc", string(mixed(8<<10)) + "\x1b]2;t\x07" + string(mixed(8<<10))},
		{"background at line ends", strings.Repeat("\x1b[0mrow \x1b[44mblue to the end\r\n", 300)},
		{"background from before", "\x1b[41m" + strings.Repeat("no reset here\r\n", 300)},
		{"background as 48;5", strings.Repeat("\x1b[0;48;5;3mx\r\n\x1b[m", 300)},
		{"colour arguments", strings.Repeat("\x1b[0;38;5;41mx\x1b[38;2;44;45;46my\x1b[38:5:42mz\r\n", 300)},
		{"wrapped lines", strings.Repeat("\x1b[0m"+strings.Repeat("long ", 30)+"\r\n", 300)},
		{"tabs and backspaces", strings.Repeat("\x1b[m\ta\tb\bc\r\n", 300)},
		{"partial last line", strings.Repeat("\x1b[0mline\r\n", 300) + "tail"},
		{"a prompt after the flood", string(mixed(8<<10)) + "\x1b[?2004h$ \x1b[?2004l\r\n" + string(mixed(8<<10)) + "\x1b[?2004h$ "},
		{"floods between cursor moves", "\x1b[5;5H" + string(mixed(8<<10)) + "\x1b[2;2H\x1b[K" + string(mixed(8<<10)) + "\x1b[3A"},
		{"unfinished sequence at the end", string(mixed(8<<10)) + "\x1b[38;5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slow, fast := newEmulator(40, 10), newEmulator(40, 10)
			slow.write([]byte(tc.data))
			fast.feed([]byte(tc.data))
			s, _ := slow.snapshot(nil)
			if f, _ := fast.snapshot(nil); !bytes.Equal(s, f) {
				t.Fatalf("fast-forwarded screen differs:\n got %q\nwant %q", f, s)
			}
		})
	}
}

// BenchmarkFeed is the model's cost per MiB of output (on its own
// goroutine, off the pty reader's path).
func BenchmarkFeed(b *testing.B) {
	data := mixed(1 << 20)
	e := newEmulator(120, 40)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		e.feed(data)
	}
}

// BenchmarkFeedQueue is what the pty reader pays: Feed's append to the queue.
func BenchmarkFeedQueue(b *testing.B) {
	chunk := string(mixed(32 << 10))
	m := New(120, 40)
	run(b, m)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		m.Feed(chunk)
	}
}

func BenchmarkSnapshot(b *testing.B) {
	e := newEmulator(120, 40)
	e.write(mixed(64 << 10))
	for b.Loop() {
		_, _ = e.snapshot(nil)
	}
}

// BenchmarkModelFlood is a flood as the pty delivers it (4 KiB reads)
// through the whole model, up to a snapshot at its end: the CPU the model
// adds per byte of output.
func BenchmarkModelFlood(b *testing.B) {
	data := mixed(4 << 20)
	var reads []string // output arrives as strings (ahp.Action.Data)
	for c := range slices.Chunk(data, 4<<10) {
		reads = append(reads, string(c))
	}
	m := New(120, 40)
	run(b, m)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for _, r := range reads {
			m.Feed(r)
		}
		if _, ok := m.Mark().Wait(b.Context()); !ok {
			b.Fatal("no state")
		}
	}
}

// TestSkipPlain: every byte value at every position of a word.
func TestSkipPlain(t *testing.T) {
	for c := range 256 {
		for pos := range 20 {
			b := bytes.Repeat([]byte("é a\tb\r\n"), 3)[:20]
			b[pos] = byte(c)
			want := len(b)
			for i, x := range b {
				if !plain[x] {
					want = i
					break
				}
			}
			if got := skipPlain(b, 0); got != want {
				t.Fatalf("byte %#x at %d: skipPlain = %d, want %d", c, pos, got, want)
			}
		}
	}
}

// BenchmarkNextItem is the scan for what plain text may not hold.
func BenchmarkNextItem(b *testing.B) {
	data := mixed(1 << 20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		nextItem(data, 0)
	}
}

func TestMayToggleAltScreen(t *testing.T) {
	for s, want := range map[string]bool{
		"plain \x1b[1mtext\x1b[0m\r\n": false,
		"\x1b[?1049h":                  true,
		"\x1b[?1047l":                  true,
		"\x1b[?1;47h":                  true,
		"\x1b[?25l\x1b[?1h":            false,
		"\x1bc":                        true,
		"ends in \x1b":                 true,
		"ends in \x1b[":                true,
		"ends in \x1b[?10":             true,
		"\x1b[?104h":                   false,
	} {
		if got := mayToggleAltScreen(s); got != want {
			t.Errorf("mayToggleAltScreen(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestNeedsRedraw: a quiet terminal on the main screen needs no emulator
// to be joined; one that switched screens, or output more than the
// scrollback, does.
func TestNeedsRedraw(t *testing.T) {
	m := New(20, 3)
	run(t, m)
	m.Feed("$ ls\r\nfile\r\n")
	if m.NeedsRedraw(1 << 10) {
		t.Fatal("a short main-screen stream needs no redraw")
	}
	if !m.NeedsRedraw(4) {
		t.Fatal("more than the scrollback needs a redraw")
	}
	m.Feed("\x1b[?1049hvim")
	if !m.NeedsRedraw(1 << 10) {
		t.Fatal("the alternate screen (queued) needs a redraw")
	}
	wait(t, m) // applied: now known from the emulator
	if !m.NeedsRedraw(1 << 10) {
		t.Fatal("the alternate screen (applied) needs a redraw")
	}
	m.Feed("\x1b[?1049l")
	wait(t, m)
	if m.NeedsRedraw(1 << 10) {
		t.Fatal("back on the main screen: no redraw")
	}
}

// TestStoppedModelAnswersLater: output queued when the model stops (the
// shell exited) is applied only when someone asks, and then exactly.
func TestStoppedModelAnswersLater(t *testing.T) {
	m := New(20, 3)
	m.Start()
	m.Feed("\x1b[?1049hfull screen")
	m.Close()
	m.Feed("\r\nlast words")
	m.Resize(30, 4)
	if !m.NeedsRedraw(1 << 10) {
		t.Fatal("the queued switch to the alternate screen is not seen")
	}
	s, ok := m.Mark().Wait(t.Context())
	if !ok {
		t.Fatal("no state from a stopped model")
	}
	if got := strings.Join(s.Lines, "|"); !s.AltScreen || s.Cols != 30 || got != "full screen|last words||" {
		t.Fatalf("alt %v cols %d lines %q", s.AltScreen, s.Cols, got)
	}
}

// TestMarkOnlyQueues: Mark (and Peek) never emulate, even on a stopped
// model, so that a hub may call them under its lock: the waiter applies
// the queue, and two waiters get their own points of the stream.
func TestMarkOnlyQueues(t *testing.T) {
	m := New(20, 3)
	m.Start()
	m.Feed("before")
	m.Close()
	m.Feed("\r\nafter")
	first := m.Mark()
	m.Feed("\r\nlast")
	peek := m.Peek()
	m.mu.Lock()
	queued, emu := len(m.ops), m.emu
	m.mu.Unlock()
	if emu != nil || queued != 4 {
		t.Fatalf("after Mark and Peek: emulator %v, %d steps queued; want none built, 4 queued", emu != nil, queued)
	}
	s, ok := peek.Wait(t.Context())
	if got := strings.Join(s.Lines, "|"); !ok || got != "before|after|last" || s.Redraw != nil {
		t.Fatalf("peek: %v, lines %q, redraw %v; want before|after|last, no redraw", ok, got, s.Redraw != nil)
	}
	s, ok = first.Wait(t.Context())
	if got := strings.Join(s.Lines, "|"); !ok || got != "before|after|" || s.Redraw == nil {
		t.Fatalf("mark: %v, lines %q, redraw %v; want before|after|, with its redraw", ok, got, s.Redraw != nil)
	}
}

// TestCommandStart: a mark gives the redraw of the screen where the last
// command before it started, and the output since; written before that
// output, it draws the same screen as the mark's own redraw.
func TestCommandStart(t *testing.T) {
	m := New(30, 4)
	m.Feed("$ make\r\n")
	m.CommandStart()
	m.Feed("step 1\r\n")
	first := m.Mark()
	m.Feed("$ top\r\n")
	m.CommandStart()
	m.Feed("\x1b[?1049h\x1b[Htop")
	run(t, m)
	for i, tc := range []struct {
		p     *Pending
		since string
	}{{first, "step 1\r\n"}, {m.Mark(), "\x1b[?1049h\x1b[Htop"}} {
		st, _ := tc.p.Wait(t.Context())
		if st.Start == nil || st.SinceStart != int64(len(tc.since)) {
			t.Fatalf("mark %d: start %q since %d, want a redraw and %d", i, st.Start, st.SinceStart, len(tc.since))
		}
		a, b := New(30, 4), New(30, 4)
		run(t, a)
		run(t, b)
		a.Feed(string(st.Start) + tc.since)
		b.Feed(string(st.Redraw))
		if sa, sb := wait(t, a), wait(t, b); !slices.Equal(sa.Lines, sb.Lines) || sa.AltScreen != sb.AltScreen {
			t.Fatalf("mark %d: start redraw + output gives %q, the redraw %q", i, sa.Lines, sb.Lines)
		}
	}
}

// TestResizeDropsCommandStart: after a resize, the start's redraw (at the
// old size) followed by the output does not give the screen: none is kept.
func TestResizeDropsCommandStart(t *testing.T) {
	m := New(30, 4)
	run(t, m)
	m.CommandStart()
	m.Feed("step 1\r\n")
	m.Resize(20, 4)
	m.Feed("step 2\r\n")
	if st := wait(t, m); st.Start != nil {
		t.Fatalf("a start redraw of %d bytes across a resize", len(st.Start))
	}
}

// TestCommandStartsStayBounded: command starts nobody asks about do not
// pile up in the queue: past maxStarts the model drains on its own.
func TestCommandStartsStayBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := New(30, 4)
		run(t, m)
		for i := range 10 * maxStarts {
			m.Feed(fmt.Sprintf("$ cmd %d\r\n", i))
			m.CommandStart()
			synctest.Wait()
			m.mu.Lock()
			queued := len(m.ops)
			m.mu.Unlock()
			if queued > 2*maxStarts {
				t.Fatalf("%d steps queued after %d command starts", queued, i+1)
			}
		}
	})
}
