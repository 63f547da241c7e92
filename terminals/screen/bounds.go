package screen

import (
	"time"
	"unicode/utf8"
)

// Bounds on what a program's output can make the model do: the
// emulator's size, the redraw's size and the title are capped, so that the
// model's memory and the redraw it builds stay a small multiple of the
// screen's cells whatever the stream.
const (
	// MaxCells is the largest screen (cols×rows) the model emulates. A
	// bigger size is clamped to fit and the model is marked behind for good
	// (Exact false): joiners get the history alone.
	MaxCells = 1 << 16
	// MaxRedraw bounds a redraw's JSON-encoded size on any screen, far below
	// a connection's send queue (at least 4 MiB, see handlers.Config).
	MaxRedraw = 1 << 20
	// redrawPerCell and redrawFixed make the budget of a cols×rows screen:
	// room for a truecolour foreground and background on every cell plus
	// the modes, title and carry.
	redrawPerCell = 64
	redrawFixed   = 16 << 10
	// maxTitle: the longest title kept (as ahp.MaxTitle for a rename).
	maxTitle = 1024
	// maxCellText: a preview line keeps this much of a cell's text (a cell
	// can gather any number of combining marks).
	maxCellText = 32
)

// The time the emulator may take for output. vt moves every cell of the
// screen on each scroll, erase or line insertion, so output made of those
// costs it O(cells) per byte: a MiB of bare line feeds takes about 50 s at
// 120×40, half an hour at 256×256. Plain floods are skipped (fastForward)
// and ordinary output takes milliseconds per MiB; past feedTime plus
// feedTimePerMiB a MiB, the model gives up on the screen for good.
const (
	feedTime       = 2 * time.Second
	feedTimePerMiB = 4 * time.Second
	writeSlice     = 256 // a few ms of vt even for the costliest bytes
)

// feedDeadline is when feeding n bytes that start now must be over.
func feedDeadline(now time.Time, n int) time.Time {
	return now.Add(feedTime + time.Duration(int64(feedTimePerMiB)*int64(n)>>20))
}

// RedrawBudget is the most JSON-encoded bytes a redraw of a cols×rows
// screen may take; over it the model gives no redraw (State.OverBudget).
func RedrawBudget(cols, rows int) int {
	return min(redrawPerCell*cols*rows+redrawFixed, MaxRedraw)
}

// fit clamps a size to MaxCells, keeping the columns when it can; ok is
// false when it had to clamp.
func fit(cols, rows int) (c, r int, ok bool) {
	cols, rows = max(cols, 1), max(rows, 1)
	if cols*rows <= MaxCells && cols <= MaxCells && rows <= MaxCells {
		return cols, rows, true
	}
	c = min(cols, MaxCells)
	return c, max(min(rows, MaxCells/c), 1), false
}

// clip cuts s to at most n bytes at a UTF-8 boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// JSONLen is an upper bound of s's length as a JSON string's contents
// (encoding/json: controls and <, >, & as \u00XX, invalid UTF-8 and
// U+2028/U+2029 as \uXXXX).
func JSONLen(s string) int {
	b, n := s, 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			switch {
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			case c == '"' || c == '\\':
				n += 2
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(b[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
