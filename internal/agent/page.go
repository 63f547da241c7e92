package agent

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/termhost/termhost/ahp"
)

// Every tool result's text is at most maxBytes: read_terminal, run_command
// and wait_for take it as an argument (default defaultMaxBytes, from
// minMaxBytes to maxMaxBytes); the other tools' texts are short and have
// the default bound. Output longer than a result may carry is cut, and the
// result says so and gives the cursor from which read_terminal (mode
// output, since) reads on, a page at a time: the pages' texts, one after
// the other, are the output's text.
const (
	defaultMaxBytes = 16 << 10
	minMaxBytes     = 2 << 10
	maxMaxBytes     = 128 << 10
	// noteBytes of maxBytes are kept for the sentences around the output
	// (status, cut and simplification notes).
	noteBytes = 1 << 10
)

// limited is a tool input with a maxBytes argument.
type limited interface{ limit() int }

// maxBytesOf reads a maxBytes argument.
func maxBytesOf(n int) (int, error) {
	switch {
	case n == 0:
		return defaultMaxBytes, nil
	case n < minMaxBytes || n > maxMaxBytes:
		return 0, fmt.Errorf("maxBytes must be between %d and %d (got %d); output longer than a result carries is read in pages with read_terminal", minMaxBytes, maxMaxBytes, n)
	}
	return n, nil
}

// clampMaxBytes is maxBytes within its bounds (the handler has refused a
// value outside them already).
func clampMaxBytes(n int) int {
	if n == 0 {
		return defaultMaxBytes
	}
	return min(max(n, minMaxBytes), maxMaxBytes)
}

// capText bounds a result's text, the last guard: the tools cut their
// output (and say where to read on) before this is ever needed.
func capText(text string, limit int) string {
	const note = "\n[Cut: this result's text is longer than maxBytes.]"
	if len(text) <= limit {
		return text
	}
	return ahp.Truncate(text, limit-len(note)) + note
}

// pageLen is how much of raw a page of at most limit bytes takes: all of
// it, or up to the last line feed within limit; failing that, not into an
// escape sequence or a character. At least one byte of a non-empty raw.
func pageLen(raw string, limit int) int {
	limit = max(limit, 1)
	if len(raw) <= limit {
		return len(raw)
	}
	w := raw[:limit]
	if i := strings.LastIndexByte(w, '\n'); i >= 0 {
		return i + 1
	}
	if i := strings.LastIndexByte(w, 0x1b); i > 0 {
		w = w[:i]
	}
	for n := len(w); n > 0 && n > len(w)-utf8.UTFMax; n-- {
		if utf8.RuneStart(raw[n]) {
			return n
		}
	}
	return len(w)
}

// tailFrom is where the last limit bytes of raw begin, moved on to the
// next line start when there is one among them (else to a character's
// start).
func tailFrom(raw string, limit int) int {
	if len(raw) <= limit {
		return 0
	}
	i := len(raw) - max(limit, 1)
	if j := strings.IndexByte(raw[i:], '\n'); j >= 0 && i+j+1 < len(raw) {
		return i + j + 1
	}
	for i < len(raw)-1 && !utf8.RuneStart(raw[i]) {
		i++
	}
	return i
}

// renderPage renders the first page of raw whose text is at most budget
// bytes: the text and how many bytes of raw it shows. The text keeps its
// final line end, so that pages rendered one after the other join into
// the text of the whole (see plainPage). Output whose text is longer than
// its bytes (tabs, repeats) gets a shorter page.
func renderPage(ctx context.Context, raw string, budget int) (text string, n int, simplified bool) {
	n = pageLen(raw, budget)
	for {
		text, simplified = plainPage(ctx, raw[:n])
		if len(text) <= budget || n <= 1 {
			return text, n, simplified
		}
		n = pageLen(raw, n/2)
	}
}

// renderTail renders the last page of raw whose text is at most budget
// bytes: the text and where in raw it begins.
func renderTail(ctx context.Context, raw string, budget int) (text string, from int, simplified bool) {
	limit := budget
	for {
		from = tailFrom(raw, limit)
		text, simplified = plainPage(ctx, raw[from:])
		if len(text) <= budget || len(raw)-from <= 1 {
			return text, from, simplified
		}
		limit = (len(raw) - from) / 2
	}
}

// tailText is the end of text within limit bytes, from a line start when
// one is in it, and whether it was cut.
func tailText(text string, limit int) (string, bool) {
	if len(text) <= limit {
		return text, false
	}
	return text[tailFrom(text, limit):], true
}
