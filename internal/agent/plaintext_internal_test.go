package agent

import (
	"context"
	"strings"
	"testing"
	"time"
)

var plainCases = []struct {
	name, raw, want string
}{
	{"empty", "", ""},
	{"plain lines", "a\r\nb\r\n", "a\nb"},
	{"carriage return rewrites", "10%\r50%\r100%\r\ndone\r\n", "100%\ndone"},
	{"colours removed", "\x1b[31merror\x1b[0m: bad\r\n", "error: bad"},
	{"erase line", "progress 1/3\r\x1b[Kok\r\n", "ok"},
	{"backspace", "ab\bc\r\n", "ac"},
	{"no trailing newline", "Password: ", "Password:"},
	{"many lines", strings.Repeat("line\r\n", 500), strings.TrimSuffix(strings.Repeat("line\n", 500), "\n")},
	{"binary", "\x00\x01\xff\xfe ok\r\n", "ok"},
	{"title and hyperlink", "\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ end\r\n", "link end"},
}

func TestPlain(t *testing.T) {
	for _, tt := range plainCases {
		t.Run(tt.name, func(t *testing.T) {
			got, simplified := Plain(context.Background(), tt.raw)
			if simplified {
				t.Fatalf("Plain(%q) simplified without a deadline", tt.raw)
			}
			if tt.name == "binary" {
				if !strings.HasSuffix(got, "ok") {
					t.Fatalf("Plain(%q) = %q, want it to end with ok", tt.raw, got)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("Plain(%q) = %q, want %q", tt.raw, got, tt.want)
			}
		})
	}
}

// TestStrip: the cheap rendering past the emulator's budget gives the
// emulator's text for what it handles (text, CR, BS, erase in line,
// colours and other sequences dropped).
func TestStrip(t *testing.T) {
	for _, tt := range plainCases {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.TrimRight(strip(tt.raw), "\n")
			if tt.name == "binary" {
				if !strings.HasSuffix(got, "ok") {
					t.Fatalf("strip(%q) = %q, want it to end with ok", tt.raw, got)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("strip(%q) = %q, want %q", tt.raw, got, tt.want)
			}
		})
	}
	for raw, want := range map[string]string{
		"a\tb\r\n":                     "a       b",
		"abc\x1b[2Kx\r\n":              "x",
		"abc\x1b[2K\x1b[1Gx\r\n":       "x",
		"abcdef\r\x1b[3C\x1b[0Kx\r\n":  "abcx",
		"ab\x1b[99Cc\x1b[9Dd\r\n":      "dbc", // moves stay within the line
		"\x1b[999999bx\x1b[2J!\n":      "x!",
		"unfinished \x1b]0;title":      "unfinished",
		"unfinished \x1b[1;2":          "unfinished",
		"\x1b(0q\x1b(B \x1bM\x1b7ok\n": "q ok",
		"\x1b]0;a\x1b[31mred\x1b[0m\n": "red", // an ESC ends an unterminated string
	} {
		if got := strings.TrimRight(strip(raw), "\n"); got != want {
			t.Errorf("strip(%q) = %q, want %q", raw, got, want)
		}
	}
}

// worstOutput is size bytes of the costliest output for the emulator:
// counts it would work through one at a time without the clamps, screen
// erases, line insertions and line feeds (each moves every cell).
func worstOutput(size int) string {
	unit := "x\x1b[999999b\x1b[2J\x1b[999999L\x1b[H\x1b[999999X\n\n\n\n"
	return strings.Repeat(unit, size/len(unit)+1)[:size]
}

// TestPlainWithinBudget: the emulator stops at the deadline and the rest
// is stripped, so 64 KiB of the costliest output takes about the budget
// (9 s with vtbound's clamps alone, BenchmarkPlain/worst; hours without);
// the text is marked simplified and keeps what the output printed last.
func TestPlainWithinBudget(t *testing.T) {
	raw := worstOutput(64<<10) + "\r\nthe end\r\n"
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	got, simplified := Plain(ctx, raw)
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("Plain of %d bytes with a 10 ms budget took %v", len(raw), d)
	}
	if !simplified || !strings.HasSuffix(got, "the end") {
		t.Fatalf("Plain: simplified %v, text ending %q", simplified, got[max(len(got)-40, 0):])
	}
	// Past the deadline at once (or cancelled): one piece is emulated, the
	// rest stripped.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	got, simplified = Plain(ctx, "\x1b[31mred\x1b[0m\r\n"+strings.Repeat("y", 1000)+"\r\nlast\r\n")
	if !simplified || !strings.HasPrefix(got, "red\n") || !strings.HasSuffix(got, "\nlast") {
		t.Fatalf("Plain past its deadline: simplified %v, %q", simplified, got)
	}
}

// TestStripIsLinear: strip's cost grows with its input alone, whatever
// the sequences (checked by the work it does: its output is at most eight
// runes per input byte, a tab's spaces).
func TestStripIsLinear(t *testing.T) {
	for _, raw := range []string{worstOutput(1 << 20), strings.Repeat("\t", 1<<16), strings.Repeat("abc\x1b[2Kx", 1<<16), strings.Repeat("\x1b]", 1<<16)} {
		if got := strip(raw); len(got) > 8*len(raw) {
			t.Fatalf("strip of %d bytes gave %d", len(raw), len(got))
		}
	}
}

// BenchmarkPlain: 64 KiB of ordinary coloured lines and of the costliest
// output, through the emulator (without and with a budget) and through
// strip alone.
func BenchmarkPlain(b *testing.B) {
	lines := strings.Builder{}
	for i := 0; lines.Len() < 64<<10; i++ {
		lines.WriteString("\x1b[32mok\x1b[0m   some/package/path/file.go:123: a line of ordinary output\r\n")
	}
	for _, bc := range []struct {
		name   string
		raw    string
		budget time.Duration // 0: none
		strip  bool
	}{
		{name: "lines", raw: lines.String()},
		{name: "worst", raw: worstOutput(64 << 10)},
		{name: "worst-budget-100ms", raw: worstOutput(64 << 10), budget: 100 * time.Millisecond},
		{name: "lines-strip", raw: lines.String(), strip: true},
		{name: "worst-strip", raw: worstOutput(64 << 10), strip: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.raw)))
			for b.Loop() {
				switch {
				case bc.strip:
					strip(bc.raw)
				case bc.budget > 0:
					ctx, cancel := context.WithTimeout(context.Background(), bc.budget)
					Plain(ctx, bc.raw)
					cancel()
				default:
					Plain(context.Background(), bc.raw)
				}
			}
		})
	}
}
