package shellint

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// collect runs steps on one processor with a test clock. A step is a read,
// a clock advance, a pin, a hint, or the end of the stream.
type step struct {
	read    string
	advance time.Duration
	pin     *string
	hint    *string
	eof     bool
}

func strp(s string) *string { return &s }

func runSteps(t *testing.T, opts Options, steps []step) ([]Event, *Processor) {
	t.Helper()
	clk := &testClock{t: epoch}
	opts.Clock = clk
	p := NewProcessor(opts)
	var got []Event
	emit := func(e Event) { got = append(got, e) }
	for _, s := range steps {
		clk.t = clk.t.Add(s.advance)
		switch {
		case s.pin != nil:
			p.PinTitle(*s.pin)
		case s.hint != nil:
			p.SetServerHint(*s.hint)
		case s.eof:
			p.Close(emit)
		default:
			p.Write([]byte(s.read), emit)
		}
	}
	return got, p
}

func TestProcessorRules(t *testing.T) {
	N := func(p string) string { return osc(p + ";N1") }
	tests := []struct {
		name     string
		opts     Options
		steps    []step
		want     []Event
		wantMode Mode
	}{
		{
			name: "pending becomes strict on the first trusted sequence",
			opts: Options{Mode: Pending, Nonce: "N1"},
			steps: []step{
				{read: osc("633;C") + "forged"},
				{read: N("633;A")},
			},
			want:     []Event{evData("forged"), evDetect()},
			wantMode: Strict,
		},
		{
			name: "pending falls back to lenient after 10 s",
			opts: Options{Mode: Pending, Nonce: "N1"},
			steps: []step{
				{read: osc("133;A"), advance: 9 * time.Second},
				{read: osc("133;A"), advance: time.Second},
			},
			want:     []Event{evDetect()},
			wantMode: Lenient,
		},
		{
			name: "late trusted sequence after the fallback finishes the lenient command",
			opts: Options{Mode: Pending, Nonce: "N1"},
			steps: []step{
				{read: osc("133;C;cmdline_url=make"), advance: 11 * time.Second},
				{read: "out", advance: 100 * time.Millisecond},
				{read: N("633;A"), advance: 100 * time.Millisecond},
				{read: osc("133;D;0")},
			},
			want:     []Event{evDetect(), evExec("cmd-1", "make"), evData("out"), evFin("cmd-1", nil, 200)},
			wantMode: Strict,
		},
		{
			name: "strict mode never falls back",
			opts: Options{Mode: Strict, Nonce: "N1"},
			steps: []step{
				{read: osc("133;A"), advance: time.Minute},
			},
			want:     nil,
			wantMode: Strict,
		},
		{
			name: "lenient accepts 633 and then ignores 133",
			opts: Options{Mode: Lenient},
			steps: []step{
				{read: osc("633;C")},
				{read: osc("133;D;5"), advance: 100 * time.Millisecond},
				{read: osc("633;D;3"), advance: 100 * time.Millisecond},
			},
			want:     []Event{evDetect(), evExec("cmd-1", ""), evFin("cmd-1", code(3), 200)},
			wantMode: Lenient,
		},
		{
			name: "lenient E and P do not count as detection",
			opts: Options{Mode: Lenient},
			steps: []step{
				{read: osc("633;E;ls") + osc("633;P;Cwd=/x")},
			},
			want:     []Event{evCwd("file:///x")},
			wantMode: Lenient,
		},
		{
			name: "server hint used when no E",
			opts: Options{Mode: Strict, Nonce: "N1"},
			steps: []step{
				{hint: strp("make test")},
				{read: N("633;C")},
			},
			want:     []Event{evDetect(), evExec("cmd-1", "make test")},
			wantMode: Strict,
		},
		{
			name: "trusted E wins over the server hint",
			opts: Options{Mode: Strict, Nonce: "N1"},
			steps: []step{
				{hint: strp("make test")},
				{read: N("633;E;make\\x20all") + N("633;C")},
			},
			want:     []Event{evDetect(), evExec("cmd-1", "make all")},
			wantMode: Strict,
		},
		{
			name: "A forgets the server hint",
			opts: Options{Mode: Strict, Nonce: "N1"},
			steps: []step{
				{hint: strp("make test")},
				{read: N("633;A") + N("633;C") + N("633;D;")},
			},
			want:     []Event{evDetect()},
			wantMode: Strict,
		},
		{
			name: "keep empty announces empty commands at C",
			opts: Options{Mode: Strict, Nonce: "N1", KeepEmpty: true},
			steps: []step{
				{read: N("633;E;") + N("633;C") + N("633;D;")},
			},
			want:     []Event{evDetect(), evExec("cmd-1", ""), evFin("cmd-1", nil, 0)},
			wantMode: Strict,
		},
		{
			name: "phantoms do not consume ids",
			opts: Options{Mode: Strict, Nonce: "N1"},
			steps: []step{
				{read: N("633;E;") + N("633;C") + N("633;D;")},
				{read: N("633;E;ls") + N("633;C") + N("633;D;0")},
			},
			want:     []Event{evDetect(), evExec("cmd-1", "ls"), evFin("cmd-1", code(0), 0)},
			wantMode: Strict,
		},
		{
			name: "pin stops titles, empty pin unpins",
			opts: Options{Mode: Strict, Nonce: "N1"},
			steps: []step{
				{read: osc("2;a")},
				{pin: strp("mine")},
				{read: osc("2;b")},
				{pin: strp("")},
				{read: osc("2;b")},
			},
			want:     []Event{evData(osc("2;a")), evTitle("a"), evData(osc("2;b")), evData(osc("2;b")), evTitle("b")},
			wantMode: Strict,
		},
		{
			name: "title cut to 256 code points and trimmed",
			opts: Options{Mode: Strict, Nonce: "N1"},
			steps: []step{
				{read: osc("0;  " + strings.Repeat("é", 300) + " ")},
			},
			want:     []Event{evData(osc("0;  " + strings.Repeat("é", 300) + " ")), evTitle(strings.Repeat("é", 256))},
			wantMode: Strict,
		},
		{
			name: "title of only controls gives no event",
			opts: Options{Mode: Strict, Nonce: "N1"},
			steps: []step{
				{read: osc("2;\t \u0085 ")},
			},
			want:     []Event{evData(osc("2;\t \u0085 "))},
			wantMode: Strict,
		},
		{
			name: "osc 7 with the local host name",
			opts: Options{Mode: Lenient, Hostname: "MyHost"},
			steps: []step{
				{read: osc("7;file://myhost/srv/x") + osc("7;file://LOCALHOST/srv/y") + osc("7;file://other/srv/z")},
			},
			want:     []Event{evCwd("file:///srv/x"), evCwd("file:///srv/y")},
			wantMode: Lenient,
		},
		{
			name: "1337 without = is stripped, no cwd",
			opts: Options{Mode: Lenient},
			steps: []step{
				{read: "a" + osc("1337;CurrentDirX") + osc("1337;CurrentDir=rel") + "b"},
			},
			want:     []Event{evData("ab")},
			wantMode: Lenient,
		},
		{
			name: "close finishes a running command without exit code",
			opts: Options{Mode: Strict, Nonce: "N1"},
			steps: []step{
				{read: N("633;E;vim") + N("633;C")},
				{read: "x", advance: 1500 * time.Millisecond},
				{eof: true, advance: 500 * time.Millisecond},
				{read: "ignored after close"},
			},
			want:     []Event{evDetect(), evExec("cmd-1", "vim"), evData("x"), evFin("cmd-1", nil, 2000)},
			wantMode: Strict,
		},
		{
			name: "duration uses the clock, not the shell",
			opts: Options{Mode: Strict, Nonce: "N1"},
			steps: []step{
				{read: N("633;E;sleep\\x201") + N("633;C")},
				{read: N("633;D;0"), advance: 1234 * time.Millisecond},
			},
			want:     []Event{evDetect(), evExec("cmd-1", "sleep 1"), evFin("cmd-1", code(0), 1234)},
			wantMode: Strict,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, p := runSteps(t, tc.opts, tc.steps)
			if g, w := normalize(got, true), normalize(tc.want, true); !slices.Equal(g, w) {
				t.Fatalf("steps %+v:\n got  %v\n want %v", tc.steps, g, w)
			}
			if p.Mode() != tc.wantMode {
				t.Fatalf("mode = %v, want %v", p.Mode(), tc.wantMode)
			}
		})
	}
}

func TestTimestampIsWallTimeOfC(t *testing.T) {
	got, _ := runSteps(t, Options{Mode: Strict, Nonce: "N1"}, []step{
		{read: osc("633;E;;N1")},
		{read: osc("633;C;N1"), advance: 700 * time.Millisecond},
		{read: "late output", advance: time.Second},
	})
	for _, e := range got {
		if e.Kind == CommandExecuted {
			if want := epoch.Add(700 * time.Millisecond).UnixMilli(); e.Timestamp != want {
				t.Fatalf("timestamp = %d, want %d (time of C, not of the delayed announcement)", e.Timestamp, want)
			}
			return
		}
	}
	t.Fatalf("no CommandExecuted in %v", normalize(got, true))
}

func TestParseExit(t *testing.T) {
	tests := []struct {
		in   string
		want *int
	}{
		{"0", code(0)}, {"127", code(127)}, {"-1", code(-1)}, {"2147483647", code(2147483647)},
		{"-2147483648", code(-2147483648)}, {"2147483648", nil}, {"4294967296", nil},
		{"", nil}, {"-", nil}, {"abc", nil}, {"1a", nil}, {"+1", nil}, {" 1", nil}, {"00000000001", nil},
	}
	for _, tc := range tests {
		got := parseExit([]byte(tc.in))
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("parseExit(%q) = %v, want %v", tc.in, fmtPtr(got), fmtPtr(tc.want))
		}
	}
}

func fmtPtr(p *int) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func TestTrackerHoles(t *testing.T) {
	// A stripped OSC inside another escape sequence gets a CAN before it.
	tests := []struct {
		name, in, want string
	}{
		{"after ESC intermediate", "\x1b(" + osc("633;A") + "B", "\x1b(\x18B"},
		{"inside DCS", "\x1bPq#0" + osc("633;A") + "x", "\x1bPq#0\x18x"},
		{"after complete CSI no CAN", "\x1b[31m" + osc("633;A") + "x", "\x1b[31mx"},
		{"after CAN no CAN", "\x1b[3\x18" + osc("633;A") + "x", "\x1b[3\x18x"},
		{"identifier-only marker", "\x1b[3\x1b]633\a1m", "\x1b[3\x181m"},
		{"osc 7 hole", "\x1b[3" + osc("7;file:///x") + "1m", "\x1b[3\x181m"},
		{"iterm hole", "\x1b[3" + osc("1337;CurrentDir=/x") + "1m", "\x1b[3\x181m"},
		{"title is not a hole", "\x1b[3" + osc("0;t") + "1m", "\x1b[3" + osc("0;t") + "1m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := runSteps(t, Options{Mode: Strict, Nonce: "N1"}, []step{{read: tc.in}})
			if d := joinData(got); d != tc.want {
				t.Fatalf("data for %q = %q, want %q", tc.in, d, tc.want)
			}
		})
	}
}

// TestBoundedMemory feeds large unterminated sequences in small reads and
// checks what the scanner holds and that pass-through OSCs are streamed.
func TestBoundedMemory(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	tests := []struct {
		name       string
		in         string
		streamed   bool // all input bytes but a few must have been emitted
		wantSuffix string
	}{
		{"stray ESC ] then text", "\x1b]" + big + "\aend", true, "end"},
		{"osc 8 hyperlink", "\x1b]8;;" + big + "\aend", true, "end"},
		{"osc 52 clipboard", "\x1b]52;c;" + big + "\x1b\\end", true, "end"},
		{"long 633", "\x1b]633;E;" + big + "\aend", false, "end"},
		{"long 7", "\x1b]7;" + big + "\aend", false, "end"},
		{"long title", "\x1b]0;" + big + "\aend", true, "end"},
		{"leading zeros", "\x1b]" + strings.Repeat("0", 100000) + "633;A\aend", false, "end"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProcessor(Options{Mode: Strict, Nonce: "N1"})
			var emitted int
			var last string
			emit := func(e Event) {
				if e.Kind == Data {
					emitted += len(e.Text)
					last = e.Text
				}
			}
			in := []byte(tc.in)
			for i := 0; i < len(in); i += 4096 {
				p.Write(in[i:min(i+4096, len(in))], emit)
				if h := p.held(); h > capMarker+64 {
					t.Fatalf("after %d bytes: held %d bytes", i+4096, h)
				}
				if tc.streamed && i+4096 < len(in) && emitted < i+4096-capTitle-16 {
					t.Fatalf("after %d bytes only %d emitted: not streamed", i+4096, emitted)
				}
			}
			if !strings.HasSuffix(last, tc.wantSuffix) {
				t.Fatalf("last data %q, want suffix %q", last, tc.wantSuffix)
			}
		})
	}
}

// TestPlainTextAllocs checks the hot path: one plain read costs one
// allocation (the string of the data event).
func TestPlainTextAllocs(t *testing.T) {
	p := NewProcessor(Options{Mode: Strict, Nonce: "N1"})
	in := bytes.Repeat([]byte("plain text with \x1b[31mcolour\x1b[0m and é\r\n"), 500)
	emit := func(Event) {}
	p.Write(in, emit)
	allocs := testing.AllocsPerRun(100, func() { p.Write(in, emit) })
	if allocs > 1 {
		t.Fatalf("Write of %d plain bytes: %.1f allocations, want <= 1", len(in), allocs)
	}
}

func BenchmarkWritePlain(b *testing.B) {
	p := NewProcessor(Options{Mode: Strict, Nonce: "N1"})
	in := bytes.Repeat([]byte("plain text with \x1b[31mcolour\x1b[0m and é\r\n"), 800)
	emit := func(Event) {}
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		p.Write(in, emit)
	}
}

// TestRawDataMatchesText: with RawData, Data events carry the same bytes
// (copied during the call, as the terminal's reader does) and every other
// event is unchanged, for every conformance case.
func TestRawDataMatchesText(t *testing.T) {
	for _, c := range conformanceCases() {
		opts := Options{Mode: c.mode, Nonce: "N1", Clock: &testClock{t: epoch}, Hostname: "myhost"}
		events := func(raw bool) []Event {
			o := opts
			o.RawData = raw
			p := NewProcessor(o)
			var got []Event
			emit := func(e Event) {
				if raw {
					if e.Text != "" {
						t.Fatalf("case %d: Text %q set with RawData", c.num, e.Text)
					}
					e.Text, e.Raw = string(e.Raw), nil
				}
				got = append(got, e)
			}
			for _, r := range c.reads {
				p.Write([]byte(r), emit)
			}
			p.Close(emit)
			return got
		}
		if text, raw := events(false), events(true); !reflect.DeepEqual(text, raw) {
			t.Fatalf("case %d: with RawData\n got %+v\nwant %+v", c.num, raw, text)
		}
	}
}
