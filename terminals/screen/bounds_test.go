package screen

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// alternatingLinks paints every cell of a cols×rows screen with one of two
// urlLen-byte hyperlinks, alternating from cell to cell (two 64 KiB URLs
// on 80×24 once made a 126 MB redraw).
func alternatingLinks(cols, rows, urlLen int) string {
	u := [2]string{"https://a/" + strings.Repeat("a", urlLen), "https://b/" + strings.Repeat("b", urlLen)}
	var b strings.Builder
	b.WriteString("\x1b[H")
	for i := range cols * rows {
		fmt.Fprintf(&b, "\x1b]8;;%s\x1b\\x", u[i%2])
	}
	b.WriteString("\x1b]8;;\x1b\\")
	return b.String()
}

// perCellColours gives every cell its own truecolour foreground and
// background.
func perCellColours(cols, rows int) string {
	var b strings.Builder
	b.WriteString("\x1b[H")
	for i := range cols * rows {
		fmt.Fprintf(&b, "\x1b[38;2;%d;%d;%d;48;2;%d;%d;%dm▀", i%256, i/256%256, 7, 255-i%256, 3, i/7%256)
	}
	return b.String()
}

// checkBound fails unless st's redraw is within the budget of its screen,
// or absent and said so.
func checkBound(t testing.TB, st State) {
	t.Helper()
	budget := RedrawBudget(st.Cols, st.Rows)
	if n := JSONLen(string(st.Redraw)); n > budget || len(st.Redraw) > budget {
		t.Fatalf("redraw of %d×%d: %d bytes (%d as JSON), budget %d", st.Cols, st.Rows, len(st.Redraw), n, budget)
	}
	if st.OverBudget != (st.Redraw == nil) {
		t.Fatalf("OverBudget %v with a redraw of %d bytes", st.OverBudget, len(st.Redraw))
	}
	text := 0
	for _, l := range st.Lines {
		text += len(l)
	}
	if limit := st.Cols * st.Rows * maxCellText; text > limit || len(st.Lines) != st.Rows {
		t.Fatalf("%d lines, %d bytes of text on %d×%d (limit %d)", len(st.Lines), text, st.Cols, st.Rows, limit)
	}
}

// TestRedrawIsBounded: whatever a program prints, the redraw stays within
// RedrawBudget (a small multiple of the screen's cells) or is not built.
func TestRedrawIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cols, rows int
		data       string
		overBudget bool
	}{
		// Before: 960 KB of output made a ~1 MB redraw of 480 cells (×2000).
		{"two 2 KiB links on alternating cells", 40, 12, alternatingLinks(40, 12, 2<<10), true},
		{"a 64 KiB link on every line", 40, 12, "\x1b]8;;https://x/" + strings.Repeat("x", 64<<10) + "\x1b\\" + strings.Repeat("link\r\n", 12), true},
		{"a 1 MiB title", 40, 12, "\x1b]2;" + strings.Repeat("t", 1<<20) + "\x07$ ", false},
		{"per-cell colours", 80, 24, perCellColours(80, 24), false},
		{"per-cell colours on the largest screen", 256, 256, perCellColours(256, 256), true},
		{"combining marks in one cell", 40, 12, "e" + strings.Repeat("\u0301", 256<<10), true},
		{"a short link is kept", 40, 12, "\x1b]8;;https://example.com/\x1b\\site\x1b]8;;\x1b\\", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(tc.cols, tc.rows)
			run(t, m)
			m.Feed(tc.data)
			st := wait(t, m)
			checkBound(t, st)
			if st.OverBudget != tc.overBudget {
				t.Fatalf("OverBudget %v, want %v (redraw %d bytes, %d cells)", st.OverBudget, tc.overBudget, len(st.Redraw), tc.cols*tc.rows)
			}
		})
	}
}

// TestTitleIsClipped: a huge OSC title is kept clipped, not whole.
func TestTitleIsClipped(t *testing.T) {
	e := newEmulator(20, 3)
	e.write([]byte("\x1b]2;" + strings.Repeat("é", 1<<19) + "\x07"))
	if len(e.title) > maxTitle || !strings.HasPrefix(strings.Repeat("é", maxTitle), e.title) {
		t.Fatalf("title of %d bytes kept, want at most %d bytes of é", len(e.title), maxTitle)
	}
}

// TestHugeResizeIsClamped: a 1000×1000 resize does not make a million-cell
// emulator; the model says it is not exact any more.
func TestHugeResizeIsClamped(t *testing.T) {
	m := New(80, 24)
	run(t, m)
	m.Feed("$ ")
	m.Resize(1000, 1000)
	m.Feed(perCellColours(100, 10))
	st := wait(t, m)
	if st.Cols*st.Rows > MaxCells || st.Exact {
		t.Fatalf("model at %d×%d exact %v, want at most %d cells and not exact", st.Cols, st.Rows, st.Exact, MaxCells)
	}
	checkBound(t, st)
	if m.NeedsRedraw(0) {
		t.Fatal("NeedsRedraw after a clamped resize: joiners would wait for a redraw that is not exact")
	}
	if m2 := New(1<<20, 1<<20); m2.cols*m2.rows > MaxCells || !m2.behind {
		t.Fatalf("New(1<<20, 1<<20): %d×%d behind %v", m2.cols, m2.rows, m2.behind)
	}
}

// TestPeekBuildsNoRedraw: a preview gets the lines, never a redraw.
func TestPeekBuildsNoRedraw(t *testing.T) {
	m := New(40, 12)
	run(t, m)
	m.Feed(alternatingLinks(40, 12, 2<<10))
	st, ok := m.Peek().Wait(t.Context())
	if !ok || st.Redraw != nil || st.OverBudget || !strings.HasPrefix(st.Lines[0], "xxxx") {
		t.Fatalf("peek: ok %v redraw %d bytes overBudget %v line 0 %q", ok, len(st.Redraw), st.OverBudget, st.Lines[0])
	}
}

// TestIdleResizeKeepsScreen: an idle model keeps a checkpoint instead of
// its emulator and holds no goroutine; a resize then must not lose the
// screen.
func TestIdleResizeKeepsScreen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := New(40, 5)
		run(t, m)
		m.Feed("first line\r\n$ ")
		wait(t, m)
		time.Sleep(idleAfter + time.Second) // fake time: the model goes idle
		synctest.Wait()
		m.mu.Lock()
		idle := m.emu == nil && m.checkpoint != nil
		m.mu.Unlock()
		if !idle {
			t.Fatal("the model did not go idle")
		}
		if m.worker.Running() {
			t.Fatal("an idle model still holds its goroutine")
		}
		m.Resize(50, 6)
		m.Feed("ls\r\n")
		st := wait(t, m)
		if got := strings.Join(st.Lines[:2], "|"); got != "first line|$ ls" || st.Cols != 50 || st.Rows != 6 {
			t.Fatalf("after idle and resize: %d×%d lines %q", st.Cols, st.Rows, st.Lines)
		}
		// More output while the goroutine runs: it still ends idleAfter after it.
		m.Feed("a\r\n")
		wait(t, m)
		m.Feed("b\r\n")
		synctest.Wait()
		time.Sleep(idleAfter + time.Second)
		synctest.Wait()
		if m.worker.Running() {
			t.Fatal("the model's goroutine outlived idleAfter after its last step")
		}
	})
}

// Each run stays fast: vt moves every cell on a scroll, so a fuzzed stream
// of line feeds costs input × cells.
const maxFuzzInput = 8 << 10

// FuzzRedrawBound: any stream, at any size, gives a redraw within the
// budget of its screen (or none, said so) and bounded preview lines.
func FuzzRedrawBound(f *testing.F) {
	// Small screens keep each run fast; the budget's fixed part is then
	// what the hostile streams must beat.
	f.Add(uint8(3), uint8(3), []byte(alternatingLinks(3, 3, 800)))
	f.Add(uint8(80), uint8(24), []byte("\x1b]2;"+strings.Repeat("t", 4<<10)+"\x07"))
	f.Add(uint8(20), uint8(8), []byte(perCellColours(20, 8)))
	f.Add(uint8(10), uint8(2), []byte("\x1b]8;;u\x1b\\"+strings.Repeat("\x1b]8;;https://x\x1b\\a\x1b]8;id=1;https://y\x07b", 40)))
	f.Add(uint8(20), uint8(3), []byte("e"+strings.Repeat("\u0301", 8<<10)+"\x1b[?1049h\x1b[2;3r\x1b[5 q"))
	f.Fuzz(func(t *testing.T, cols, rows uint8, data []byte) {
		data = data[:min(len(data), maxFuzzInput)] // keeps each run (and minimizing) fast
		e := newEmulator(int(cols%80)+1, int(rows%24)+1)
		e.feed(data)
		if j, _ := json.Marshal(string(data)); len(j)-2 > JSONLen(string(data)) {
			t.Fatalf("JSONLen %d, encoding/json %d", JSONLen(string(data)), len(j)-2)
		}
		redraw, ok := e.snapshot(carry(data[max(len(data)-tailKeep, 0):]))
		checkBound(t, State{Cols: e.vt.Width(), Rows: e.vt.Height(), Redraw: redraw, OverBudget: !ok, Lines: e.lines()})
	})
}

// TestCostlyOutputGivesUp: output that takes the emulator longer than its
// feed deadline (vt moves every cell on each scroll: bare line feeds on a
// large screen cost half an hour a MiB) makes the model give up for good
// instead of holding a core: not exact, no redraw wanted, no more work.
func TestCostlyOutputGivesUp(t *testing.T) {
	t.Run("line feeds on a large screen", func(t *testing.T) {
		m := New(128, 128)
		run(t, m)
		m.Feed(strings.Repeat("\n", 64<<10)) // about 30 s of vt's work
		if st := wait(t, m); st.Exact || m.NeedsRedraw(0) {
			t.Fatalf("exact %v, needs redraw %v after a flood of line feeds: want neither", st.Exact, m.NeedsRedraw(0))
		}
	})
	t.Run("a clock past the deadline", func(t *testing.T) {
		m := New(40, 5)
		clock := time.Unix(0, 0)
		m.now = func() time.Time { clock = clock.Add(time.Hour); return clock }
		run(t, m)
		m.Feed("before\r\n")
		first := wait(t, m)
		m.Feed("after")
		st := wait(t, m)
		if first.Exact || st.Exact || strings.Join(st.Lines, "") != "" || st.Fed != int64(len("before\r\nafter")) {
			t.Fatalf("exact %v/%v lines %q fed %d: want a blank, inexact screen that counts what it skipped", first.Exact, st.Exact, st.Lines, st.Fed)
		}
	})
}
