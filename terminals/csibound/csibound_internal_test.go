package csibound

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"testing"
)

var term = Size{Cols: 80, Rows: 24}

// rewrite runs in through a fresh Rewriter in one write, and flushes.
func rewrite(in string, s Size) string {
	var w Rewriter
	out := w.Append(nil, []byte(in), s, s)
	return string(w.Flush(out))
}

// rewriteSplit writes in one byte at a time.
func rewriteSplit(in string, s Size) string {
	var w Rewriter
	var out []byte
	for i := range len(in) {
		out = w.Append(out, []byte(in[i:i+1]), s, s)
	}
	return string(w.Flush(out))
}

func TestBounds(t *testing.T) {
	zeros := strings.Repeat("0", 200)
	semis := strings.Repeat(";", 200)
	// REP on 80×24: cells 1920; a count above 2000 lands on the same column.
	rep := func(n int) string { return fmt.Sprint(1920 + (n-1920)%80) }
	for _, tc := range []struct{ in, want string }{
		// the measured freezes
		{"x\x1b[10000000b", "x\x1b[" + rep(10000000) + "b"},
		{"x\x1b[30000000b", "x\x1b[" + rep(30000000) + "b"},
		{"x\x1b[2147483647b", "x\x1b[" + rep(2147483647) + "b"},
		{"x\x1b[99999999999999999999b", "x\x1b[" + rep(2147483647) + "b"}, // saturates as xterm.js
		{"x\x1b[2000b", "x\x1b[2000b"},
		{"x\x1b[2001b", "x\x1b[1921b"},
		// counts bounded by max(cols, rows)
		{"\x1b[2147483647L", "\x1b[80L"},
		{"\x1b[2147483647M", "\x1b[80M"},
		{"\x1b[2147483647S", "\x1b[80S"},
		{"\x1b[2147483647T", "\x1b[80T"},
		{"\x1b[2147483647I", "\x1b[80I"},
		{"\x1b[2147483647Z", "\x1b[80Z"},
		{"\x1b[2147483647@", "\x1b[80@"},
		{"\x1b[2147483647P", "\x1b[80P"},
		{"\x1b[2147483647X", "\x1b[80X"},
		{"\x1b[2147483647 @", "\x1b[80 @"},
		{"\x1b[2147483647 A", "\x1b[80 A"},
		{"\x1b[2147483647'}", "\x1b[80'}"},
		{"\x1b[2147483647'~", "\x1b[80'~"},
		{"\x1b[80L", "\x1b[80L"},
		{"\x1b[81L", "\x1b[80L"},
		{"\x1b[L\x1b[;5L", "\x1b[L\x1b[;5L"},
		{"\x1b[99999;7L", "\x1b[80;7L"},
		{"\x1b[99999:7L", "\x1b[80:7L"},
		{"\x1b[0000099999L", "\x1b[80L"},
		// left alone: positions, other finals, prefixes, intermediates
		{"\x1b[99999;99999H", "\x1b[99999;99999H"},
		{"\x1b[99999A\x1b[99999d\x1b[99999G", "\x1b[99999A\x1b[99999d\x1b[99999G"},
		{"\x1b[99999m", "\x1b[99999m"},
		{"\x1b[?99999b\x1b[>99999L", "\x1b[?99999b\x1b[>99999L"},
		{"\x1b[99999!L\x1b[99999  @\x1b[99999 'L", "\x1b[99999!L\x1b[99999  @\x1b[99999 'L"},
		{"\x1b[99?99L", "\x1b[99?99L"}, // CSI_IGNORE: xterm.js dispatches nothing
		{"\x1b[99999 5L", "\x1b[99999 5L"},
		// introducers
		{"\xc2\x9b99999L", "\xc2\x9b80L"},                                    // C1 CSI, as UTF-8
		{"\x1b\n\x7f[99999L", "\x1b\n\x7f[80L"},                              // C0 and DEL inside ESC [
		{"\x1b(\x1b[99999L", "\x1b(\x1b[80L"},                                // after another escape
		{"\x1b]0;t\x1b[99999L", "\x1b]0;t\x1b[80L"},                          // ESC ends an OSC
		{"\x1bP1$q\x1b[99999L", "\x1bP1$q\x1b[80L"},                          // and a DCS
		{"\x1b(0[99999L", "\x1b(0[99999L"},                                   // not a CSI
		{"\xc3\x9b99999L", "\xc3\x9b99999L"},                                 // 9B inside another character
		{"°±é\xc2\xa0\x1b[99999L", "°±é\xc2\xa0\x1b[80L"},                    // C2 of text
		{"\x1b[99\n9\x7f99\rL", "\x1b[80\n\x7f\rL"},                          // executed and ignored inside
		{"\x1b[99999\x18L\x1b[99999\x1aL", "\x1b[99999\x18L\x1b[99999\x1aL"}, // CAN, SUB abort
		{"\x1b[99999\x1b[99999L", "\x1b[99999\x1b[80L"},                      // ESC restarts
		{"\x1b[99999\xc2\x9b99999L", "\x1b[99999\xc2\x9b80L"},                // so does C1 CSI
		{"\x1b[99999éL", "\x1b[99999éL"},                                     // non-ASCII aborts
		// held past holdMax: carried parsed, written in shortest form
		{"\x1b[" + zeros + "99999L", "\x1b[80L"},
		{"\x1b[" + zeros + "5L", "\x1b[5L"},
		{"\x1b[" + zeros + "5;" + zeros + "7m", "\x1b[5;" + zeros + "7m"}, // nothing to bound: the rest as written
		{"\x1b[99999" + semis + "L", "\x1b[80" + strings.Repeat(";", 32) + "L"},
		{"\x1b[99999" + semis + "5L", "\x1b[80" + strings.Repeat(";", 32) + "L"},
		{"\x1b[" + zeros + "99999\a" + zeros + "\x7f:3 @", "\x1b[\a80:3 @"},
		{"\x1b[" + zeros + "?5h", "\x1b[0?5h"}, // still CSI_IGNORE
		{"\x1b[" + zeros + "1\x18L", "\x1b[1\x18L"},
		{"\x1b[" + zeros, "\x1b[0"}, // the program ended mid-sequence
		// incomplete at the end: as written
		{"\x1b[99999", "\x1b[99999"},
		{"\x1b", "\x1b"},
		{"\xc2", "\xc2"},
	} {
		if got := rewrite(tc.in, term); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
		if got := rewriteSplit(tc.in, term); got != tc.want {
			t.Errorf("%q byte by byte: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSize: the bound follows the size, and the larger of the current
// and the previous one (output in flight when a terminal shrinks).
func TestSize(t *testing.T) {
	var w Rewriter
	if got := string(w.Append(nil, []byte("\x1b[999L"), Size{200, 50}, Size{200, 50})); got != "\x1b[200L" {
		t.Errorf("200×50: %q", got)
	}
	if got := string(w.Append(nil, []byte("\x1b[999L"), Size{10, 5}, Size{200, 50})); got != "\x1b[200L" {
		t.Errorf("shrunk from 200×50: %q", got)
	}
	if got := string(w.Append(nil, []byte("\x1b[999L"), Size{10, 5}, Size{10, 5})); got != "\x1b[10L" {
		t.Errorf("10×5: %q", got)
	}
	// REP: the whole screen of the larger size, landing on the current width's column.
	got := string(w.Append(nil, []byte("x\x1b[100000b"), Size{10, 5}, Size{20, 6}))
	if want := fmt.Sprintf("x\x1b[%db", 120+(100000-120)%10); got != want {
		t.Errorf("REP 10×5 after 20×6: %q, want %q", got, want)
	}
	// A sequence held across writes is bounded by the size at its end.
	w.Append(nil, []byte("\x1b[9999"), Size{200, 50}, Size{200, 50})
	if got := string(w.Append(nil, []byte("9L"), Size{30, 5}, Size{30, 5})); got != "30L" {
		t.Errorf("held across a resize: %q", got)
	}
}

// TestPlainNoAllocation: text goes through as it is, without allocating.
func TestPlainNoAllocation(t *testing.T) {
	var w Rewriter
	src := bytes.Repeat([]byte("plain text, ünïcødé ° ± and tabs\t\r\n"), 1000)
	dst := make([]byte, 0, 2*len(src))
	if got := w.Append(dst, src, term, term); !bytes.Equal(got, src) {
		t.Fatal("plain text changed")
	}
	mixed := []byte("\x1b[1;31mred\x1b[0m \x1b[2J\x1b[H\x1b[99999L")
	if n := testing.AllocsPerRun(100, func() {
		dst = w.Append(dst[:0], src, term, term)
		dst = w.Append(dst, mixed, term, term)
	}); n != 0 {
		t.Errorf("%v allocations per write", n)
	}
}

func benchmark(b *testing.B, chunk []byte) {
	var w Rewriter
	dst := make([]byte, 0, 2*len(chunk))
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	before := cpuTime()
	for b.Loop() {
		dst = w.Append(dst[:0], chunk, term, term)
	}
	// CPU time rather than wall time: the latter counts the time other
	// processes of a busy machine took.
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N)/float64(len(chunk)), "cpu-ns/byte")
}

// cpuTime is the process's CPU time so far, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkPlain: a 32 KiB read of text (ls -l, logs).
func BenchmarkPlain(b *testing.B) {
	benchmark(b, bytes.Repeat([]byte("-rw-r--r-- 1 user user  4096 Dec  7 04:53 file.go\r\n"), 32<<10/52))
}

// BenchmarkMixed: a 32 KiB read of a full-screen program's output (colours,
// cursor moves, erases; one bounded count in ten lines).
func BenchmarkMixed(b *testing.B) {
	line := "\x1b[1;34mdir\x1b[0m \x1b[38;5;208mfile\x1b[0m \x1b[K\x1b[12;40H°C \x1b[2@x\r\n"
	var s strings.Builder
	for i := 0; s.Len() < 32<<10; i++ {
		s.WriteString(line)
		if i%10 == 0 {
			s.WriteString("\x1b[99999L")
		}
	}
	benchmark(b, []byte(s.String()))
}
