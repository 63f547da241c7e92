package shellint

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// confCase is one conformance case: the events a Processor must produce for
// reads, the output in the pieces the pty delivered it in; eof means the
// process exits after the last read. exited(n) is not listed: reporting the
// exit is the caller's job.
type confCase struct {
	num      int
	mode     Mode // Strict (nonce N1) or Lenient
	pin      string
	reads    []string
	eof      bool
	want     []Event
	readData []string // if set: the data each read must emit during that read
}

const nonce1 = "N1"

var (
	S = Strict
	L = Lenient
)

func r(s ...string) []string { return s }

func conformanceCases() []confCase {
	A70k := strings.Repeat("A", 70000)
	t5k := strings.Repeat("t", 5000)
	return []confCase{
		// Stripping and pass-through
		{num: 1, mode: S, reads: r("hello\r\n"), want: []Event{evData("hello\r\n")}},
		{num: 2, mode: S, reads: r("\x1b[31mred\x1b[0m"), want: []Event{evData("\x1b[31mred\x1b[0m")}},
		{num: 3, mode: S, reads: r("x" + osc("633;A") + "y"), want: []Event{evData("xy")}},
		{num: 4, mode: L, reads: r("x" + osc("633;A") + "y"), want: []Event{evData("x"), evDetect(), evData("y")}},
		{num: 5, mode: S, reads: r("x" + oscST("633;B") + "y"), want: []Event{evData("xy")}},
		{num: 6, mode: S, reads: r("a" + osc("633;EnvSingleStart;0;N1") + osc("633;SetMark;Id=x;Hidden") + osc("633;Completions;0;1;1;[]") + "b"), want: []Event{evData("ab")}},
		{num: 7, mode: S, reads: r("\x1b]8;;https://x\ahere\x1b]8;;\a"), want: []Event{evData("\x1b]8;;https://x\ahere\x1b]8;;\a")}},
		{num: 8, mode: S, reads: r("\x1b]52;c;aGk=\x1b\\"), want: []Event{evData("\x1b]52;c;aGk=\x1b\\")}},
		{num: 9, mode: S, reads: r(osc("1337;File=inline=1:AAAA")), want: []Event{evData(osc("1337;File=inline=1:AAAA"))}},
		{num: 10, mode: S, reads: r("\x1b]\ax\x1b]633\ay"), want: []Event{evData("\x1b]\axy")}},
		{num: 11, mode: S, reads: r("\x1b]123456789;x\a"), want: []Event{evData("\x1b]123456789;x\a")}},
		{num: 12, mode: S, reads: r("\x1b];x\a"), want: []Event{evData("\x1b];x\a")}},
		{num: 13, mode: S, reads: r(osc("0633;A;N1") + "z"), want: []Event{evDetect(), evData("z")}},
		{num: 14, mode: S, reads: r(osc("133;A") + "$ " + osc("133;B")), want: []Event{evData("$ ")}},
		{num: 15, mode: S, reads: r("\xc2\x9d633;A;N1\xc2\x9c"), want: []Event{evData("\xc2\x9d633;A;N1\xc2\x9c")}},
		{num: 16, mode: S, reads: r("a\x00b"), want: []Event{evData("a\x00b")}},

		// Chunk boundaries, terminators, malformed sequences
		{num: 17, mode: S, reads: r("ab\x1b", "]633;A;N1\acd"), want: []Event{evData("ab"), evDetect(), evData("cd")}, readData: r("ab", "cd")},
		{num: 18, mode: S, reads: r(osc("633;E;ls;N1")+"\x1b]6", "33;C;N1\ax"), want: []Event{evDetect(), evExec("cmd-1", "ls"), evData("x")}},
		{num: 19, mode: S, reads: r(osc("633;E;ls;N1")+osc("633;C;N1")+"\x1b]633;D;0;N1\x1b", "\\next"), want: []Event{evDetect(), evExec("cmd-1", "ls"), evFin("cmd-1", code(0), 100), evData("next")}},
		{num: 20, mode: S, reads: r("\x1b]0;ti", "tle\a"), want: []Event{evData("\x1b]0;title\a"), evTitle("title")}},
		{num: 21, mode: L, reads: r(osc("133;C;cmdline_url=make"), "\x1b]133;D;0\x1b", "\\ok"), want: []Event{evDetect(), evExec("cmd-1", "make"), evFin("cmd-1", code(0), 200), evData("ok")}},
		{num: 22, mode: L, reads: r("\x1b]1337;Curr", "entDir=/x\a"), want: []Event{evCwd("file:///x")}},
		{num: 23, mode: S, reads: r("\x1b]633;A;N1\x1b[31mred"), want: []Event{evDetect(), evData("\x1b[31mred")}},
		{num: 24, mode: S, reads: r("\x1b]0;t\x1b]633;C;N1\a$ "), want: []Event{evData("\x1b]0;t\a"), evTitle("t"), evDetect(), evExec("cmd-1", ""), evData("$ ")}},
		{num: 25, mode: S, reads: r("\x1b]8;;u\x1b]633;C;N1\ax"), want: []Event{evData("\x1b]8;;u\a"), evDetect(), evExec("cmd-1", ""), evData("x")}},
		{num: 26, mode: S, reads: r("\x1b]633;C;N1\x18after"), want: []Event{evData("after")}},
		{num: 27, mode: S, reads: r("\x1b]8;;u\x18x"), want: []Event{evData("\x1b]8;;u\x18x")}},
		{num: 28, mode: S, reads: r("a\x1b\x1b]633;A;N1\ab"), want: []Event{evData("a"), evDetect(), evData("b")}},
		{num: 29, mode: S, reads: r("\x1b]633;A;N1\x1b\x1b\\z"), want: []Event{evDetect(), evData("\x1b\\z")}},
		{num: 30, mode: S, reads: r("\x1b[3" + osc("633;A;N1") + "1m"), want: []Event{evData("\x1b[3\x18"), evDetect(), evData("1m")}},
		{num: 31, mode: S, reads: r("\x1b[3" + osc("633;B") + "1m"), want: []Event{evData("\x1b[3\x181m")}},
		{num: 32, mode: S, reads: r("\x1b]633;E;"+A70k, strings.Repeat("B", 10)+"\aafter"), want: []Event{evData("after")}},
		{num: 33, mode: S, reads: r("\x1b]8;;http://a", "xxxx", "yyyy"), want: []Event{evData("\x1b]8;;http://axxxxyyyy")}, readData: r("\x1b]8;;http://a", "xxxx", "yyyy")},
		{num: 34, mode: S, reads: r("\x1b]foo bar\r\n"), want: []Event{evData("\x1b]foo bar\r\n")}, readData: r("\x1b]foo bar\r\n")},
		{num: 35, mode: S, reads: r("\x1b]2;" + t5k + "\a"), want: []Event{evData("\x1b]2;" + t5k + "\a")}},
		{num: 36, mode: S, reads: r("a\x1b"), eof: true, want: []Event{evData("a\x1b")}},

		// Command lifecycle and trust
		{num: 37, mode: S, reads: r(osc("633;P;Cwd=/home/u;N1")+osc("633;A;N1")+"$ "+osc("633;B;N1"), osc("633;E;ls\\x20-la;N1")+osc("633;C;N1"), "file1\r\n", osc("633;D;0;N1")),
			want: []Event{evDetect(), evCwd("file:///home/u"), evData("$ "), evExec("cmd-1", "ls -la"), evData("file1\r\n"), evFin("cmd-1", code(0), 200)}},
		{num: 38, mode: S, reads: r(osc("633;E;echo\\x20hi;N1") + osc("633;C;N1") + "hi\r\n" + osc("633;D;0;N1")), want: []Event{evDetect(), evExec("cmd-1", "echo hi"), evData("hi\r\n"), evFin("cmd-1", code(0), 0)}},
		{num: 39, mode: S, reads: r("a" + osc("633;E;x;N1") + osc("633;C;N1") + "b"), want: []Event{evData("a"), evDetect(), evExec("cmd-1", "x"), evData("b")}},
		{num: 40, mode: S, reads: r(osc("633;E;nope;N1")+osc("633;C;N1"), "bash: nope: command not found\r\n"+osc("633;D;127;N1")), want: []Event{evDetect(), evExec("cmd-1", "nope"), evData("bash: nope: command not found\r\n"), evFin("cmd-1", code(127), 100)}},
		{num: 41, mode: S, reads: r(osc("633;E;x;N1")+osc("633;C;N1"), osc("633;D;abc;N1")), want: []Event{evDetect(), evExec("cmd-1", "x"), evFin("cmd-1", nil, 100)}},
		{num: 42, mode: S, reads: r(osc("633;E;x;N1")+osc("633;C;N1"), osc("633;D;4294967296;N1")), want: []Event{evDetect(), evExec("cmd-1", "x"), evFin("cmd-1", nil, 100)}},
		{num: 43, mode: S, reads: r(osc("633;E;x;N1")+osc("633;C;N1"), osc("633;D;-1;N1")), want: []Event{evDetect(), evExec("cmd-1", "x"), evFin("cmd-1", code(-1), 100)}},
		{num: 44, mode: S, reads: r(osc("633;E;x;N1")+osc("633;C;N1"), osc("633;D;N1")), want: []Event{evDetect(), evExec("cmd-1", "x")}},
		{num: 45, mode: S, reads: r(osc("633;E;rm\\x20-rf\\x20/;BAD")+osc("633;C;N1"), "x", osc("633;D;0;N1")), want: []Event{evDetect(), evExec("cmd-1", ""), evData("x"), evFin("cmd-1", code(0), 200)}},
		{num: 46, mode: S, reads: r(osc("633;C") + "out"), want: []Event{evData("out")}},
		{num: 47, mode: S, reads: r(osc("633;E;make;N1")+osc("633;C;N1"), "building\r\n"+osc("633;D;0")+"more\r\n", osc("633;D;2;N1")), want: []Event{evDetect(), evExec("cmd-1", "make"), evData("building\r\nmore\r\n"), evFin("cmd-1", code(2), 200)}},
		{num: 48, mode: S, reads: r(osc("633;P;Cwd=/etc")), want: nil},
		{num: 49, mode: S, reads: r(osc("633;D;0;N1")), want: []Event{evDetect()}},
		{num: 50, mode: S, reads: r(osc("633;A;N1") + osc("633;B;N1") + osc("633;A;N1")), want: []Event{evDetect()}},
		{num: 51, mode: S, reads: r(osc("633;P;HasRichCommandDetection=True;N1")), want: []Event{evDetect()}},
		{num: 52, mode: S, reads: r(osc("633;E;one;N1") + osc("633;E;two;N1") + osc("633;C;N1")), want: []Event{evDetect(), evExec("cmd-1", "two")}},
		{num: 53, mode: S, reads: r(osc("633;E;stale;N1") + osc("633;A;N1") + osc("633;C;N1") + "x"), want: []Event{evDetect(), evExec("cmd-1", ""), evData("x")}},
		{num: 54, mode: S, reads: r(osc("633;E;a;b;N1") + osc("633;C;N1") + "x"), want: []Event{evDetect(), evExec("cmd-1", ""), evData("x")}},
		{num: 55, mode: S, reads: r(osc("633;E;;N1") + osc("633;C;N1") + osc("633;D;;N1") + osc("633;P;Cwd=/home/u;N1") + osc("633;A;N1") + "$ " + osc("633;B;N1")), want: []Event{evDetect(), evCwd("file:///home/u"), evData("$ ")}},
		{num: 56, mode: S, reads: r("^C\r\n" + osc("633;E;;N1") + osc("633;C;N1") + osc("633;D;;N1") + osc("633;A;N1") + "$ "), want: []Event{evData("^C\r\n"), evDetect(), evData("$ ")}},
		{num: 57, mode: S, reads: r(osc("633;E;sleep\\x2010;N1")+osc("633;C;N1"), "^C\r\n"+osc("633;D;130;N1")), want: []Event{evDetect(), evExec("cmd-1", "sleep 10"), evData("^C\r\n"), evFin("cmd-1", code(130), 100)}},
		{num: 58, mode: S, reads: r(osc("633;E;true;N1") + osc("633;C;N1") + osc("633;D;0;N1")), want: []Event{evDetect(), evExec("cmd-1", "true"), evFin("cmd-1", code(0), 0)}},
		{num: 59, mode: S, reads: r(osc("633;E;;N1")+osc("633;C;N1"), "out", osc("633;D;;N1")), want: []Event{evDetect(), evExec("cmd-1", ""), evData("out"), evFin("cmd-1", nil, 200)}},
		{num: 60, mode: S, reads: r(osc("633;E;;N1")+osc("633;C;N1"), osc("633;D;0;N1")), want: []Event{evDetect(), evExec("cmd-1", ""), evFin("cmd-1", code(0), 100)}},
		{num: 61, mode: S, reads: r(osc("633;E;a;N1")+osc("633;C;N1"), "x", osc("633;E;b;N1")+osc("633;C;N1")), want: []Event{evDetect(), evExec("cmd-1", "a"), evData("x"), evFin("cmd-1", nil, 200), evExec("cmd-2", "b")}},
		{num: 62, mode: S, reads: r(osc("633;E;bash;N1")+osc("633;C;N1"), osc("633;A")+"$ "+osc("633;E;ls")+osc("633;C")+"f\r\n"+osc("633;D;0"), osc("633;D;0;N1")), want: []Event{evDetect(), evExec("cmd-1", "bash"), evData("$ f\r\n"), evFin("cmd-1", code(0), 200)}},
		{num: 63, mode: L, reads: r(osc("133;C;cmdline_url=ssh%20h"), "remote$ "+osc("133;A")+osc("133;C")+"r\r\n"+osc("133;D;0"), osc("133;D;255")), want: []Event{evDetect(), evExec("cmd-1", "ssh h"), evData("remote$ r\r\n"), evFin("cmd-1", code(255), 200)}},
		{num: 64, mode: S, reads: r(osc("633;A;N1") + "$ " + osc("633;B;N1") + "\r" + osc("633;A;N1") + "$ " + osc("633;B;N1")), want: []Event{evDetect(), evData("$ \r$ ")}},
		{num: 65, mode: S, reads: r(osc("633;E;exit\\x203;N1")+osc("633;C;N1"), "logout\r\n"), eof: true, want: []Event{evDetect(), evExec("cmd-1", "exit 3"), evData("logout\r\n"), evFin("cmd-1", nil, 100)}},
		{num: 66, mode: S, reads: r(osc("633;E;;N1") + osc("633;C;N1")), eof: true, want: []Event{evDetect()}},
		{num: 67, mode: L, reads: r(osc("133;A;click_events=1")+"$ "+osc("133;B"), osc("133;C;cmdline_url=echo%20hi")+"hi\r\n"+osc("133;D;0")), want: []Event{evDetect(), evData("$ "), evExec("cmd-1", "echo hi"), evData("hi\r\n"), evFin("cmd-1", code(0), 0)}},
		{num: 68, mode: L, reads: r(osc("133;C"), osc("133;D;2;aid=123")), want: []Event{evDetect(), evExec("cmd-1", ""), evFin("cmd-1", code(2), 100)}},
		{num: 69, mode: L, reads: r(osc("633;E;make;")+osc("633;C"), osc("633;D;0")), want: []Event{evDetect(), evExec("cmd-1", "make"), evFin("cmd-1", code(0), 100)}},
		{num: 70, mode: L, reads: r(osc("133;A")+osc("633;A")+"$ "+osc("633;E;ls")+osc("633;C")+osc("133;C"), "f"+osc("133;D;0")+osc("633;D;0")), want: []Event{evDetect(), evData("$ "), evExec("cmd-1", "ls"), evData("f"), evFin("cmd-1", code(0), 100)}},
		{num: 71, mode: S, reads: r(osc("633;E;echo\\x20\xc3\xa9;N1")+osc("633;C;N1"), osc("633;D;0;N1")+osc("633;E;\\xc3\\xa9;N1")+osc("633;C;N1")), want: []Event{evDetect(), evExec("cmd-1", "echo é"), evFin("cmd-1", code(0), 100), evExec("cmd-2", "é")}},
		{num: 72, mode: S, reads: r(osc("633;E;a\\\\b\\x0ac\\X3B\\q\\x4;N1") + osc("633;C;N1")), want: []Event{evDetect(), evExec("cmd-1", "a\\b\nc;\\q\\x4")}},
		{num: 73, mode: S, reads: r(osc("633;E;for\\x20i\\x20in\\x201\\x202\\x0ado\\x20echo\\x20$i\\x0adone;N1") + osc("633;C;N1")), want: []Event{evDetect(), evExec("cmd-1", "for i in 1 2\ndo echo $i\ndone")}},
		{num: 74, mode: S, reads: r(osc("633;E;echo 1\necho 2;N1") + osc("633;C;N1")), want: []Event{evDetect(), evExec("cmd-1", "echo 1\necho 2")}},
		{num: 75, mode: S, reads: r(osc("633;E;printf\\x20\\x1b[31m;N1") + osc("633;C;N1")), want: []Event{evDetect(), evExec("cmd-1", "printf \x1b[31m")}},

		// cwd, title, UTF-8
		{num: 76, mode: S, reads: r(osc("633;P;Cwd=/w;N1") + osc("633;P;Cwd=/w;N1")), want: []Event{evDetect(), evCwd("file:///w")}},
		{num: 77, mode: S, reads: r(osc("633;P;Cwd=/home/a\\x3bb c#d;N1")), want: []Event{evDetect(), evCwd("file:///home/a;b%20c%23d")}},
		{num: 78, mode: S, reads: r(osc("633;P;Cwd=/a=b;N1")), want: []Event{evDetect(), evCwd("file:///a=b")}},
		{num: 79, mode: S, reads: r(osc("633;P;Cwd=relative;N1")), want: []Event{evDetect()}},
		{num: 80, mode: L, reads: r(osc("7;file://localhost/tmp/a%20b")), want: []Event{evCwd("file:///tmp/a%20b")}},
		{num: 81, mode: L, reads: r(osc("7;file://otherhost/srv")), want: nil},
		{num: 82, mode: L, reads: r(osc("7;file:///a%zz")), want: nil},
		{num: 83, mode: S, reads: r(osc("7;file:///tmp")), want: nil},
		{num: 84, mode: L, reads: r(osc("1337;CurrentDir=/opt") + osc("1337;SetMark")), want: []Event{evCwd("file:///opt"), evData("\x1b]1337;SetMark\a")}},
		{num: 85, mode: S, reads: r("\x1b]0;title\x1b\\"), want: []Event{evData("\x1b]0;title\x1b\\"), evTitle("title")}},
		{num: 86, mode: S, reads: r("\x1b]1;icon\a\x1b]2;win\a"), want: []Event{evData("\x1b]1;icon\a\x1b]2;win\a"), evTitle("win")}},
		{num: 87, mode: S, reads: r("\x1b]0;t\a\x1b]0;t\a"), want: []Event{evData("\x1b]0;t\a"), evTitle("t"), evData("\x1b]0;t\a")}},
		{num: 88, mode: S, reads: r("\x1b]2;a\tb\x7fc\a"), want: []Event{evData("\x1b]2;a\tb\x7fc\a"), evTitle("abc")}},
		{num: 89, mode: S, reads: r("\x1b]0;h\xc3\xa9llo \xe2\x9c\x93\a"), want: []Event{evData("\x1b]0;h\xc3\xa9llo \xe2\x9c\x93\a"), evTitle("héllo ✓")}},
		{num: 90, mode: S, pin: "mine", reads: r("\x1b]0;x\a"), want: []Event{evData("\x1b]0;x\a")}},
		{num: 91, mode: S, reads: r("a\xffb"), want: []Event{evData("a\uFFFDb")}},
		{num: 92, mode: S, reads: r("caf\xc3", "\xa9!"), want: []Event{evData("café!")}, readData: r("caf", "é!")},
		{num: 93, mode: S, reads: r("\xc3" + osc("633;A;N1")), want: []Event{evData("\uFFFD"), evDetect()}},
		{num: 94, mode: S, reads: r("\xf0\x9f\x98A"), want: []Event{evData("\uFFFDA")}},
		{num: 95, mode: S, reads: r("\xf0", "\x9f\x98\x80"), want: []Event{evData("😀")}},
		{num: 96, mode: S, reads: r("\xed\xa0\x80"), want: []Event{evData("\uFFFD\uFFFD\uFFFD")}},
		{num: 97, mode: S, reads: r("\xc0\xaf"), want: []Event{evData("\uFFFD\uFFFD")}},
		{num: 98, mode: S, reads: r("x\xe2\x82"), eof: true, want: []Event{evData("x\uFFFD")}},
	}
}

func (c confCase) opts() Options {
	o := Options{Mode: c.mode}
	if c.mode != Lenient {
		o.Nonce = nonce1
	}
	return o
}

func (c confCase) name() string {
	return strconv.Itoa(c.num) + "_" + c.mode.String()
}

// splitPositions returns the single-split positions to try for an input of
// length n: all of them for small inputs; for large ones every position
// within 16 bytes of either end, of a byte that differs from its
// predecessor (c), or of c plus a capture cap, plus every 509th.
func splitPositions(in string) []int {
	n := len(in)
	if n <= 4096 {
		ps := make([]int, n+1)
		for i := range ps {
			ps[i] = i
		}
		return ps
	}
	const w = 16
	mark := make([]bool, n+1)
	near := func(c int) {
		for i := max(0, c-w); i <= min(n, c+w); i++ {
			mark[i] = true
		}
	}
	near(0)
	near(n)
	for i := 1; i < n; i++ {
		if in[i] != in[i-1] {
			near(i)
			for _, c := range []int{capTitle, capCwd, capMarker} {
				if i+c < n {
					near(i + c)
				}
			}
		}
	}
	var ps []int
	for i := 0; i <= n; i++ {
		if mark[i] || i%509 == 0 {
			ps = append(ps, i)
		}
	}
	return ps
}

func oneByteReads(in string) []string {
	out := make([]string, len(in))
	for i := 0; i < len(in); i++ {
		out[i] = in[i : i+1]
	}
	return out
}

func TestConformance(t *testing.T) {
	for _, c := range conformanceCases() {
		t.Run(c.name(), func(t *testing.T) {
			t.Parallel()
			input := strings.Join(c.reads, "")
			want := normalize(c.want, true)

			// With the reads as listed, read k at 100·k ms.
			got, perRead := run(t, c.opts(), c.pin, c.reads, c.eof)
			if g := normalize(got, true); !slices.Equal(g, want) {
				t.Fatalf("reads %q:\n got  %v\n want %v", c.reads, g, want)
			}
			if c.readData != nil && !slices.Equal(perRead, c.readData) {
				t.Fatalf("reads %q: data per read %q, want %q", c.reads, perRead, c.readData)
			}
			checkInvariants(t, c, input, got)

			// The same events (durations aside) for every single split of the
			// input and for one byte per read.
			wantNoDur := normalize(c.want, false)
			check := func(reads []string, what string) {
				got, _ := run(t, c.opts(), c.pin, reads, c.eof)
				if g := normalize(got, false); !slices.Equal(g, wantNoDur) {
					t.Fatalf("input %q %s:\n got  %v\n want %v", input, what, g, wantNoDur)
				}
				checkInvariants(t, c, input, got)
			}
			for _, k := range splitPositions(input) {
				check([]string{input[:k], input[k:]}, "split at "+strconv.Itoa(k))
			}
			check(oneByteReads(input), "one byte per read")
		})
	}
}

// checkInvariants checks what must hold for any input: no stripped
// sequence left in the data, and the data equal to the input byte for byte
// when fidelityApplies (run checks valid UTF-8 and the memory bound).
func checkInvariants(t *testing.T, c confCase, input string, got []Event) {
	t.Helper()
	data := joinData(got)
	if v := markerViolation(data); v != "" {
		t.Fatalf("input %q: data %q contains %s", input, data, v)
	}
	if fidelityApplies([]byte(input)) {
		// Fidelity needs the end-of-stream flush (an unterminated title is
		// held until then).
		all, _ := run(t, c.opts(), c.pin, []string{input}, true)
		if d := joinData(all); d != input {
			t.Fatalf("input %q qualifies for fidelity but data is %q", input, d)
		}
	}
}
