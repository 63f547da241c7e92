package screen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// feed writes b to the emulator, skipping output that scrolls off anyway.
//
// vt moves every cell of the screen on each scroll, so a flood of plain
// lines costs it about 0.4 s/MiB at 120×40. In a run of plain text
// (printable characters, UTF-8, CR, LF, TAB, BS, BEL and SGR colours, no
// other control or sequence) over a full-screen scroll region that holds
// more than twice rows CRLFs, the part before the last rows+1 CRLFs only
// decides the pen: what it drew is pushed off the screen by the rows lines
// that follow. It is replaced by the SGR sequences that decide the pen and
// a cursor move to where it left the cursor (bottom row, column 0). (Not
// kept: the character REP would repeat.) Everything else is written as is.
func (e *emulator) feed(b []byte) {
	written := 0
	for i := 0; i < len(b); {
		start, end := nextItem(b, i)
		if run := b[i:start]; e.worthSkipping(run) {
			e.write(b[written:i])
			e.fastForward(run)
			written = start
		}
		i = end
	}
	e.write(b[written:])
}

// worthSkipping reports whether a plain run holds more than twice rows
// CRLFs (its last rows+1 lines then draw the whole screen).
func (e *emulator) worthSkipping(run []byte) bool {
	rows := e.vt.Height()
	if len(run) < 4*rows+2 {
		return false
	}
	cut := afterLastCRLFs(run, rows+1)
	return cut >= 0 && hasCRLFs(run[:cut], rows)
}

// fastForward writes plain text, skipping what scrolls off.
//
// The rows lines kept then scroll the screen rows times, each scroll
// moving every cell. When no blank line can get a background colour (vt
// fills scrolled-in lines with the pen's background, as xterm does), they
// are drawn from the top of a cleared screen instead, which scrolls once
// and leaves the same cells: the last rows lines of the text.
func (e *emulator) fastForward(rest []byte) {
	if e.margins[e.screenIndex()] != (region{}) || e.modes[ansi.ModeLeftRightMargin] || e.modes[ansi.ModeOrigin] {
		e.write(rest)
		return
	}
	rows := e.vt.Height()
	cut := afterLastCRLFs(rest, rows+1) // worthSkipping: there is one
	pen, kept := sgrs(rest[:cut]), rest[cut:]
	e.write(pen)
	if resetsFirst(pen) && !setsBackground(pen) && !setsBackground(kept) {
		e.write([]byte("\x1b[H\x1b[J")) // ED 0: vt does not copy the lines into its scrollback
	} else {
		e.write(fmt.Appendf(nil, "\x1b[%dH", rows))
	}
	e.write(kept)
}

// hasCRLFs reports whether b holds at least n CRLFs.
func hasCRLFs(b []byte, n int) bool {
	for ; n > 0; n-- {
		i := bytes.Index(b, crlf)
		if i < 0 {
			return false
		}
		b = b[i+2:]
	}
	return true
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

// nextItem returns the next control or escape sequence from i on other
// than those plain text may hold (CR, LF, TAB, BS, BEL and SGR): b[start:end].
// An unfinished sequence at the end of b runs to len(b); with none,
// start = end = len(b).
func nextItem(b []byte, i int) (start, end int) {
	for i = skipPlain(b, i); i < len(b); i = skipPlain(b, i) {
		if b[i] != 0x1b {
			return i, i + 1
		}
		end, sgr := escEnd(b, i)
		if end < 0 {
			return i, len(b)
		}
		if !sgr {
			return i, end
		}
		i = end
	}
	return len(b), len(b)
}

// plain: the bytes plain text may hold.
var plain = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != 0x7f
	}
	for _, c := range "\r\n\t\b\a" {
		t[c] = true
	}
	return t
}()

// skipPlain returns the index of the first byte from i on that is not
// plain, or len(b). Eight bytes at a time: only the controls among them
// (and DEL) are looked up.
func skipPlain(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		del := w ^ 0x7f*ones
		// High bits of the bytes below 0x20 or equal to 0x7f (and maybe of
		// some bytes above one of those: a borrow; the lookup sorts them out).
		for m := ((w-0x20*ones)&^w | (del-ones)&^del) & highs; m != 0; m &= m - 1 {
			if j := i + bits.TrailingZeros64(m)/8; !plain[b[j]] {
				return j
			}
		}
	}
	for ; i < len(b); i++ {
		if !plain[b[i]] {
			return i
		}
	}
	return i
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

// sgrs returns the SGR sequences of plain text that still decide the pen:
// those from the last one that starts with a reset (SGR 0 or an empty
// SGR) on, in order. Plain text holds no other sequence.
func sgrs(b []byte) []byte {
	var rev [][]byte
	for {
		i := bytes.LastIndex(b, []byte("\x1b["))
		if i < 0 {
			break
		}
		sgr := b[i : i+bytes.IndexByte(b[i:], 'm')+1]
		rev = append(rev, sgr)
		if resets(sgr[2 : len(sgr)-1]) {
			break
		}
		b = b[:i]
	}
	var out []byte
	for _, s := range slices.Backward(rev) {
		out = append(out, s...)
	}
	return out
}

// resets reports whether SGR parameters start with a reset of the pen.
func resets(params []byte) bool {
	first, _, _ := bytes.Cut(params, []byte(";"))
	return len(first) == 0 || string(first) == "0"
}

// resetsFirst reports whether SGR sequences start with a reset, so that
// they alone decide the pen.
func resetsFirst(seqs []byte) bool {
	if !bytes.HasPrefix(seqs, []byte("\x1b[")) {
		return false
	}
	end := bytes.IndexByte(seqs, 'm')
	return resets(seqs[2:end])
}

// setsBackground reports whether plain text (whose only sequences are SGRs)
// may set a background colour: SGR 40–48 or 100–107, outside the colour
// arguments of 38 and 58. Unsure counts as yes.
func setsBackground(text []byte) bool {
	for {
		i := bytes.Index(text, []byte("\x1b["))
		if i < 0 {
			return false
		}
		end := i + bytes.IndexByte(text[i:], 'm')
		if sgrSetsBackground(text[i+2 : end]) {
			return true
		}
		text = text[end+1:]
	}
}

func sgrSetsBackground(params []byte) bool {
	ps := bytes.Split(params, []byte(";"))
	for k := 0; k < len(ps); k++ {
		p, _, colon := bytes.Cut(ps[k], []byte(":"))
		n, err := strconv.Atoi(string(p))
		switch {
		case len(p) == 0:
			continue // an empty parameter is 0
		case err != nil:
			return true
		case (n >= 40 && n <= 48) || (n >= 100 && n <= 107):
			return true
		case (n == 38 || n == 58) && !colon: // 38;5;n or 38;2;r;g;b
			if k+1 < len(ps) && string(ps[k+1]) == "5" {
				k += 2
			} else if k+1 < len(ps) && string(ps[k+1]) == "2" {
				k += 4
			} else {
				return true
			}
		}
	}
	return false
}

// mayToggleAltScreen reports whether output may switch the alternate
// screen: it holds a DEC private mode set or reset of 47, 1047 or 1049, a
// reset (RIS), or ends with a sequence that could still become one.
func mayToggleAltScreen(s string) bool {
	for {
		i := strings.IndexByte(s, 0x1b)
		if i < 0 {
			return false
		}
		s = s[i+1:]
		switch {
		case s == "" || s == "[" || strings.HasPrefix(s, "c"):
			return true
		case strings.HasPrefix(s, "[?"):
			end := strings.IndexFunc(s[2:], func(r rune) bool { return r < '0' || r > ';' })
			if end < 0 {
				return true // unfinished
			}
			for p := range strings.SplitSeq(s[2:2+end], ";") {
				if p == "47" || p == "1047" || p == "1049" {
					return true
				}
			}
		}
	}
}
