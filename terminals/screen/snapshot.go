package screen

import (
	"bytes"
	"fmt"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
)

// Modes the redraw sets itself, in its own order: the screen switch, the
// cursor save that goes with it, origin mode (after the scroll region) and
// cursor visibility (last).
var handled = map[ansi.Mode]bool{
	ansi.ModeAltScreen: true, ansi.ModeAltScreenSaveCursor: true, ansi.ModeSaveCursor: true,
	ansi.DECMode(47): true, ansi.ModeOrigin: true, ansi.ModeTextCursorEnable: true,
}

// snapshot returns the bytes that, written to a terminal of the same size
// after the stream so far, reproduce the screen: written to a fresh
// terminal they reproduce it too. In order:
//
//   - CAN, ending an escape sequence the stream left unfinished;
//   - back to the main screen, no scroll region, no origin mode, and the
//     lines on screen pushed into the scrollback (the history stays);
//   - the alternate screen if it is active, then every cell with its
//     attributes and hyperlinks (vt's own line renderer);
//   - the scroll region, the modes vt tracks (cursor keys, keypad, bracketed
//     paste, mouse modes, auto wrap, focus, insert…), origin mode, the
//     title, the cursor position, style and visibility;
//   - carry: the unfinished sequence again, for the stream to complete.
//
// Written by hand because vt renders cells but not modes or the cursor.
// Not reproduced (vt does not expose them): the main screen under an active
// alternate screen (the joiner's is blank), the cursor saved by DECSC, the
// pen (SGR) the program will print with next, tab stops and character sets.
//
// ok is false, and the bytes nil, when the redraw would be larger than
// RedrawBudget (long hyperlinks changing from cell to cell, cells heavy
// with combining marks): the work stops at the first line past it.
func (e *emulator) snapshot(carry []byte) (redraw []byte, ok bool) {
	var b bytes.Buffer
	cols, rows := e.vt.Width(), e.vt.Height()
	budget := RedrawBudget(cols, rows)
	b.WriteString("\x18\x1b[0m\x1b[?1049l\x1b[r\x1b[?6l")
	fmt.Fprintf(&b, "\x1b[%d;1H%s\x1b[H", rows, strings.Repeat("\n", rows))
	alt := e.vt.IsAltScreen()
	if alt {
		b.WriteString("\x1b[?1049h")
	}
	for y := range rows {
		line := e.line(y)
		if b.Len()+heavy(line) > budget { // raw bytes never exceed their JSON
			return nil, false
		}
		fmt.Fprintf(&b, "\x1b[%d;1H", y+1)
		b.WriteString(line.Render())
	}
	b.WriteString("\x1b[0m")
	if r := e.margins[e.screenIndex()]; r != (region{}) {
		fmt.Fprintf(&b, "\x1b[%d;%dr", r.top, r.bottom)
	}
	for _, m := range e.order {
		if handled[m] {
			continue
		}
		if e.modes[m] {
			b.WriteString(ansi.SetMode(m))
		} else {
			b.WriteString(ansi.ResetMode(m))
		}
	}
	pos := e.vt.CursorPosition()
	y := pos.Y
	if e.modes[ansi.ModeOrigin] {
		b.WriteString("\x1b[?6h")
		y -= max(e.margins[e.screenIndex()].top-1, 0)
	}
	if e.title != "" {
		b.WriteString(ansi.SetWindowTitle(e.title))
	}
	fmt.Fprintf(&b, "\x1b[%d;%dH", y+1, min(pos.X, cols-1)+1)
	if style, blink := e.vt.CursorStyle(); style != 0 || !blink {
		n := int(style)*2 + 2
		if blink {
			n--
		}
		fmt.Fprintf(&b, "\x1b[%d q", n)
	}
	if e.vt.CursorHidden() {
		b.WriteString("\x1b[?25l")
	} else {
		b.WriteString("\x1b[?25h")
	}
	b.Write(carry)
	if JSONLen(b.String()) > budget {
		return nil, false
	}
	return b.Bytes(), true
}

// heavy is what a line's render costs beyond a bounded number of bytes per
// cell: the cells' text and the hyperlinks, written again at each change.
func heavy(line uv.Line) int {
	n := 0
	var link uv.Link
	for _, c := range line {
		n += len(c.Content)
		if c.Link != link {
			n += len(c.Link.URL) + len(c.Link.Params) + len(link.URL) + 16
			link = c.Link
		}
	}
	return n
}

// carry returns the end of tail that is an unfinished escape sequence or
// UTF-8 character, or nil. A sequence longer than tail is not found.
func carry(tail []byte) []byte {
	if esc := bytes.LastIndexByte(tail, 0x1b); esc >= 0 && !finished(tail[esc:]) {
		return bytes.Clone(tail[esc:])
	}
	// An unfinished UTF-8 character: a lead byte at most 3 from the end
	// without all its continuation bytes.
	for i := len(tail) - 1; i >= 0 && i >= len(tail)-3; i-- {
		c := tail[i]
		if c < 0x80 {
			return nil
		}
		if c >= 0xc0 {
			need := 2
			switch {
			case c >= 0xf0:
				need = 4
			case c >= 0xe0:
				need = 3
			}
			if len(tail)-i < need {
				return bytes.Clone(tail[i:])
			}
			return nil
		}
	}
	return nil
}

// finished reports whether seq (starting with ESC, no other ESC in it but
// an ST's) is a complete escape sequence.
func finished(seq []byte) bool {
	if len(seq) < 2 {
		return false
	}
	switch seq[1] {
	case '[': // CSI: parameters and intermediates, then a final byte
		for _, c := range seq[2:] {
			if c >= 0x40 && c <= 0x7e {
				return true
			}
		}
		return false
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: up to BEL or ST
		return bytes.IndexByte(seq, 0x07) >= 0 || bytes.HasSuffix(seq, []byte("\x1b\\"))
	case '\\': // the ST of a string whose start was looked at before
		return true
	}
	// ESC, intermediates (0x20–0x2f), then a final byte.
	for _, c := range seq[1:] {
		if c >= 0x30 && c <= 0x7e {
			return true
		}
	}
	return false
}
