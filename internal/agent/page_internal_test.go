package agent

import (
	"context"
	"strings"
	"testing"
)

func TestPageLen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw string
		limit     int
		want      int
	}{
		{"all of it", "ab\r\ncd", 10, 6},
		{"after the last line feed", "ab\r\ncd\r\nef", 9, 8},
		{"no line feed: not into a sequence", "abc\x1b[31mdef", 6, 3},
		{"no line feed: not into a character", "aé", 2, 1}, // é is 2 bytes
		{"one byte at least", "\x1b[31m", 0, 1},
	}
	for _, tt := range tests {
		if got := pageLen(tt.raw, tt.limit); got != tt.want {
			t.Errorf("%s: pageLen(%q, %d) = %d, want %d", tt.name, tt.raw, tt.limit, got, tt.want)
		}
	}
}

// TestPagesJoin: pages of output whose text is longer than its bytes (tabs)
// or shorter (colours), cut after line feeds, each within the budget, join
// into the text of the whole; and so do a head and a tail that meet.
func TestPagesJoin(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		// Each a few pages of the 1 KiB budget: every line is a scroll of
		// the emulator, which the race detector makes slow.
		strings.Repeat("\t\t\t\tx\r\n", 100),
		strings.Repeat("\x1b[31mred\x1b[0m and plain\r\n", 100) + "prompt$ ",
		strings.Repeat("é😀\r\n", 300),
	} {
		whole, _ := plainPage(context.Background(), raw)
		const budget = 1024
		var joined strings.Builder
		for rest := raw; rest != ""; {
			text, n, _ := renderPage(context.Background(), rest, budget)
			if len(text) > budget || n == 0 {
				t.Fatalf("a page of %d bytes of text (budget %d), showing %d bytes", len(text), budget, n)
			}
			joined.WriteString(text)
			rest = rest[n:]
		}
		if joined.String() != whole {
			t.Fatalf("pages join into %d bytes, the whole is %d", joined.Len(), len(whole))
		}
		text, from, _ := renderTail(context.Background(), raw, budget)
		if len(text) > budget || !strings.HasSuffix(whole, text) || from == 0 || raw[from-1] != '\n' {
			t.Fatalf("tail from %d: %d bytes of text, a suffix of the whole: %v", from, len(text), strings.HasSuffix(whole, text))
		}
	}
}
