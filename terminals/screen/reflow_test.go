package screen

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// wrapped cuts s into rows of cols cells, as a terminal wraps it.
func wrapped(s string, cols int) []string {
	var rows []string
	for len(s) > cols {
		rows, s = append(rows, s[:cols]), s[cols:]
	}
	return append(rows, s)
}

// screenOf pads lines with blank rows to a screen of rows rows.
func screenOf(rows int, lines ...[]string) []string {
	out := slices.Concat(lines...)
	for len(out) < rows {
		out = append(out, "")
	}
	return out
}

// TestResizeReflows: a line that wrapped is rewrapped at the new width, as
// xterm.js reflows it: joined on one row when the screen
// widens, cut into more rows when it narrows. vt's resize alone keeps the
// rows as they were cut at 46 columns.
func TestResizeReflows(t *testing.T) {
	cmd := "$ echo " + strings.Repeat("x", 61)
	out := strings.Repeat("y", 61)
	m := New(46, 10)
	run(t, m)
	m.Feed(cmd + "\r\n" + out + "\r\n$ ")
	if got, want := wait(t, m).Lines, screenOf(10, wrapped(cmd, 46), wrapped(out, 46), []string{"$"}); !slices.Equal(got, want) {
		t.Fatalf("at 46 columns:\n%q\nwant\n%q", got, want)
	}
	for _, cols := range []int{123, 30, 46} {
		m.Resize(cols, 10)
		st := wait(t, m)
		want := screenOf(10, wrapped(cmd, cols), wrapped(out, cols), []string{"$"})
		if !slices.Equal(st.Lines, want) || !st.Exact {
			t.Fatalf("at %d columns (exact %v):\n%q\nwant\n%q", cols, st.Exact, st.Lines, want)
		}
	}
	m.Feed("ls")
	if got := wait(t, m).Lines[4]; got != "$ ls" {
		t.Fatalf("prompt row %q, want %q", got, "$ ls")
	}
}

// TestResizeUnderAltScreenReflowsOnLeaving: the alternate screen is resized
// as is (xterm.js does not reflow it); the main screen under it is
// rewrapped once the program leaves it.
func TestResizeUnderAltScreenReflowsOnLeaving(t *testing.T) {
	line := strings.Repeat("z", 50)
	m := New(40, 6)
	run(t, m)
	m.Feed(line + "\r\n\x1b[?1049h\x1b[H" + strings.Repeat("a", 40))
	m.Resize(60, 6)
	st := wait(t, m)
	if want := screenOf(6, []string{strings.Repeat("a", 40)}); !slices.Equal(st.Lines, want) || !st.AltScreen {
		t.Fatalf("alternate screen at 60 columns:\n%q\nwant\n%q", st.Lines, want)
	}
	m.Feed("\x1b[?1049l")
	if got, want := wait(t, m).Lines, screenOf(6, []string{line}); !slices.Equal(got, want) {
		t.Fatalf("main screen after leaving:\n%q\nwant\n%q", got, want)
	}
}

// TestResizeWithoutReplayIsInexact: past maxReplay bytes of output the
// model keeps none, and a change of columns makes its main screen inexact
// (joiners get the history alone) instead of passing vt's cut rows as
// exact.
func TestResizeWithoutReplayIsInexact(t *testing.T) {
	m := New(40, 6)
	run(t, m)
	m.Feed(strings.Repeat(strings.Repeat("w", 30)+"\r\n", maxReplay/32+1)) // fast-forwarded
	if st := wait(t, m); !st.Exact {
		t.Fatal("inexact before any resize")
	}
	m.Resize(40, 8) // rows only: no rewrapping
	if st := wait(t, m); !st.Exact {
		t.Fatal("inexact after a change of rows")
	}
	m.Resize(60, 8)
	if st := wait(t, m); st.Exact {
		t.Fatal("exact after a change of columns it could not reflow")
	}
	// The alternate screen, which xterm.js does not reflow, stays exact.
	m.Feed("\x1b[?1049h\x1b[Hfull screen")
	if st := wait(t, m); !st.Exact || !st.AltScreen {
		t.Fatalf("alternate screen: exact %v, alt %v", st.Exact, st.AltScreen)
	}
	m.Feed("\x1b[?1049l")
	if st := wait(t, m); st.Exact {
		t.Fatal("exact back on the main screen it could not reflow")
	}
}

// TestClearRestartsReplay: past maxReplay bytes, `clear` (home, erase the
// screen and the scrollback) starts the output kept anew: a later resize
// reflows again, exactly, keeping the modes and title set before the clear.
func TestClearRestartsReplay(t *testing.T) {
	m := New(40, 6)
	run(t, m)
	m.Feed(strings.Repeat(strings.Repeat("w", 30)+"\r\n", maxReplay/32+1))
	m.Feed("\x1b[?2004h\x1b]0;kept\x07")
	line := strings.Repeat("q", 50)
	m.Feed(string(clearAll) + line + "\r\n$ ")
	m.Resize(60, 6)
	st := wait(t, m)
	if want := screenOf(6, []string{line, "$"}); !slices.Equal(st.Lines, want) || !st.Exact {
		t.Fatalf("after the clear and a resize (exact %v):\n%q\nwant\n%q", st.Exact, st.Lines, want)
	}
	for _, want := range []string{"\x1b[?2004h", "\x1b]2;kept\x07"} {
		if !strings.Contains(string(st.Redraw), want) {
			t.Errorf("redraw lacks %q", want)
		}
	}
}

func TestLastClear(t *testing.T) {
	c := string(clearAll)
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", -1},
		{"plain text\r\n", -1},
		{c, 0},
		{"ab" + c + "cd", 2},
		{c + "x" + c + "yz", len(c) + 1},
		{"\x1b[H\x1b[2J" + c, 7},      // a clear without scrollback, then a full one
		{c[:len(c)-1] + "\x1b[3", -1}, // cut short
	} {
		if got := lastClear([]byte(tc.in)); got != tc.want || got != bytes.LastIndex([]byte(tc.in), clearAll) {
			t.Errorf("lastClear(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// BenchmarkLastClear searches a flood's chunk (coloured text, no clear),
// the search every applied chunk gets.
func BenchmarkLastClear(b *testing.B) {
	chunk := bytes.Repeat([]byte("\x1b[32mok\x1b[0m build/JSON.go:42: compiled\r\n"), 64<<10/44)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		if lastClear(chunk) >= 0 {
			b.Fatal("found a clear")
		}
	}
}

// BenchmarkLastIndexClear is the search lastClear replaced, for comparison.
func BenchmarkLastIndexClear(b *testing.B) {
	chunk := bytes.Repeat([]byte("\x1b[32mok\x1b[0m build/JSON.go:42: compiled\r\n"), 64<<10/44)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		if bytes.LastIndex(chunk, clearAll) >= 0 {
			b.Fatal("found a clear")
		}
	}
}
