package screen

import (
	"bytes"

	"github.com/charmbracelet/x/ansi"
)

// feed writes b to the emulator, skipping output that scrolls off anyway.
//
// vt moves every cell of the screen on each scroll, so a flood of plain
// lines costs it about 0.4 s/MiB at 120×40. When the end of b is plain text
// (printable characters, UTF-8, CR, LF, TAB, BS, BEL and SGR colours, no
// other control or sequence) over a full-screen scroll region, and it holds
// more than twice rows CRLFs, the part before the last rows+1 CRLFs only
// decides the pen and pushes what was on screen out: it is replaced by its
// SGR sequences and rows CRLFs, which leave the same cursor (bottom row,
// column 0), the same pen and nothing of the old screen, since the rest
// scrolls every row once more. (Not kept: the character REP would repeat.)
func (e *emulator) feed(b []byte) {
	q, end := plainSpan(b)
	e.write(b[:q])
	e.fastForward(b[q:end])
	e.write(b[end:])
}

// fastForward writes plain text, skipping what scrolls off.
func (e *emulator) fastForward(rest []byte) {
	if e.margins[e.screenIndex()] != (region{}) || e.modes[ansi.ModeLeftRightMargin] || e.modes[ansi.ModeOrigin] {
		e.write(rest)
		return
	}
	rows := e.vt.Height()
	cut := afterLastCRLFs(rest, rows+1)
	if cut < 0 || bytes.Count(rest[:cut], crlf) < rows {
		e.write(rest)
		return
	}
	e.write(sgrs(rest[:cut]))
	e.write(bytes.Repeat(crlf, rows))
	e.write(rest[cut:])
}

var crlf = []byte("\r\n")

// afterLastCRLFs returns the index just after the n-th CRLF from the end
// of b, or -1.
func afterLastCRLFs(b []byte, n int) int {
	end := len(b)
	for range n {
		i := bytes.LastIndex(b[:end], crlf)
		if i < 0 {
			return -1
		}
		end = i
	}
	return end + 2
}

// plainSpan returns where the plain text at the end of b starts, just
// after its last control or escape sequence other than CR, LF, TAB, BS,
// BEL and SGR, and where it ends: len(b), or where b ends with an
// unfinished sequence.
func plainSpan(b []byte) (start, end int) {
	q := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= 0x20 && c != 0x7f, c == '\r', c == '\n', c == '\t', c == '\b', c == '\a':
		case c == 0x1b:
			end, sgr := escEnd(b, i)
			if end < 0 {
				return q, i
			}
			if !sgr {
				q = end
			}
			i = end - 1
		default:
			q = i + 1
		}
	}
	return q, len(b)
}

// escEnd returns the index after the escape sequence at b[i] and whether
// it is an SGR, or -1 when it is not finished within b.
func escEnd(b []byte, i int) (int, bool) {
	if i+1 >= len(b) {
		return -1, false
	}
	switch b[i+1] {
	case '[':
		j := i + 2
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == ';' || b[j] == ':') {
			j++
		}
		if j < len(b) && b[j] == 'm' {
			return j + 1, true
		}
		for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
			if b[j] == 0x1b || b[j] == 0x18 || b[j] == 0x1a { // ESC, CAN, SUB end it unfinished
				return j, false
			}
			j++
		}
		if j >= len(b) {
			return -1, false
		}
		return j + 1, false
	case ']', 'P', '_', '^', 'X':
		for j := i + 2; j < len(b); j++ {
			if b[j] == 0x07 {
				return j + 1, false
			}
			if b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\' {
				return j + 2, false
			}
		}
		return -1, false
	}
	for j := i + 1; j < len(b); j++ {
		if b[j] == 0x1b || b[j] == 0x18 || b[j] == 0x1a {
			return j, false
		}
		if b[j] >= 0x30 && b[j] <= 0x7e {
			return j + 1, false
		}
	}
	return -1, false
}

// sgrs returns the SGR sequences of plain text, in order.
func sgrs(b []byte) []byte {
	var out []byte
	for {
		i := bytes.Index(b, []byte("\x1b["))
		if i < 0 {
			return out
		}
		end, _ := escEnd(b, i)
		out = append(out, b[i:end]...)
		b = b[end:]
	}
}
