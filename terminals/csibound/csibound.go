// Package csibound bounds the counts of the escape sequences that make a
// terminal emulator work, or allocate, in proportion to a number: a program
// that prints ESC[2147483647b (13 bytes) asks for two billion repetitions
// of a character, which froze a browser tab for seconds and every later
// page load that replayed it. A Rewriter sits in a terminal's output path
// before fan-out and rewrites such counts to what the terminal's size can
// show, so every consumer (browsers live and replaying history, the screen
// model, recordings, agents, termhost attach) inherits the bound.
//
// Which sequences, and how far (checked against xterm.js 6's InputHandler,
// the emulator of the browser app; the first parameter is the count):
//
//   - REP (CSI n b) allocates and prints n characters: a count above
//     cells+cols (cells = cols×rows) becomes cells + (n−cells) mod cols,
//     the screen is then all that character and the cursor lands where it
//     would have.
//   - IL, DL, SU, SD (CSI n L/M/S/T) and CHT, CBT (CSI n I/Z) loop n
//     times; ICH, DCH, ECH (CSI n @/P/X), SL, SR (CSI n SP @, CSI n SP A)
//     and DECIC, DECDC (CSI n ' }, CSI n ' ~) are bounded by the line in
//     xterm.js but may loop elsewhere: a count above max(cols, rows)
//     becomes max(cols, rows), which changes nothing on the screen.
//
// Cursor positioning (CUP, CUU…, HPA…) is left alone: every emulator clamps
// it to the screen at no cost.
//
// The screen model (terminals/screen, emulator.go) bounds the same counts
// with the same meaning on its own parser: the two must agree, so that the
// model and the browsers draw the same screen.
//
// The parser follows xterm.js's (ECMA-48 / DEC VT500 state machine):
// ESC [ or the C1 CSI U+009B (C2 9B in UTF-8; xterm.js decodes UTF-8 and
// treats the code point as CSI) starts a sequence from any state; C0
// controls inside it are executed, DEL is ignored, CAN, SUB, ESC, C1
// controls and other non-ASCII abort it; at most 32 parameters and 32
// sub-parameters are kept, each saturating at 2³¹−1. A sequence that may
// need a rewrite is held back (across writes) until its final byte; one
// held for more than holdMax bytes is carried as its parsed parameters
// and written out in their shortest form, which xterm.js reads the same
// (C0 controls inside it go out at once, before it), so the carry is
// bounded whatever a program writes.
//
// Plain text costs two bytes.IndexByte scans and a copy: no allocation.
package csibound

import (
	"bytes"
	"strconv"
)

// Size is a terminal size, in cells.
type Size struct{ Cols, Rows int }

const (
	holdMax   = 128       // raw bytes of a sequence held back before it is carried parsed
	maxParams = 32        // xterm.js keeps this many parameters…
	maxSubs   = 32        // …and sub-parameters
	maxValue  = 1<<31 - 1 // each saturates here
	esc       = 0x1b
	c1Lead    = 0xc2 // U+009B in UTF-8 is C2 9B
	c1CSI     = 0x9b
	noDigit   = -1 // hold index: param 0 has no digit yet
)

// states of a Rewriter.
const (
	stGround = iota // text
	stEscape        // after ESC
	stC1            // after a C2 byte of text: a 9B next is CSI
	stCSI           // inside a CSI that may need a rewrite
)

// sub-states of a CSI, as xterm.js's.
const (
	csiEntry = iota
	csiParam
	csiInter
)

// Rewriter rewrites one terminal's output stream. It is owned by one
// goroutine (the terminal's reader); its zero value is ready.
type Rewriter struct {
	st  int8
	sub int8

	// The held sequence: raw bytes after the introducer, while not over.
	hold [holdMax]byte
	n    int
	over bool // past holdMax: the parsed parameters are the carry
	d0   int  // index in hold of param 0's first digit, or noDigit
	e0   int  // index in hold where param 0 ended, or -1 while it goes on

	collect byte // the one intermediate (0: none)

	// xterm.js's Params.
	params     [maxParams]int32
	np         int
	subs       [maxSubs]int32
	nsub       int
	subEnd     [maxParams]uint8 // subs[subEnd[i-1]:subEnd[i]] belong to params[i]
	rejectDig  bool
	rejectSub  bool
	digitIsSub bool
}

// Append appends src, rewritten, to dst and returns it. Bytes of a
// sequence that may need a rewrite are kept until it ends (in a later call
// if need be); Flush gives them back. cur is the terminal's size; prev the
// size before its last resize (or cur): counts are bounded by the larger
// of the two, so output written for either keeps its meaning.
func (w *Rewriter) Append(dst, src []byte, cur, prev Size) []byte {
	nextEsc := -2 // index of the next ESC in src at or after p; -1: none; -2: not looked for
	nextC2 := -2  // the same for C2
	start := -1   // text from here to p is still to be appended (-1: none)
	for p := 0; p < len(src); {
		switch w.st {
		case stGround:
			if start < 0 {
				start = p
			}
			if nextEsc == -2 || (nextEsc >= 0 && nextEsc < p) {
				nextEsc = bytes.IndexByte(src[p:], esc)
				if nextEsc >= 0 {
					nextEsc += p
				}
			}
			if nextC2 == -2 || (nextC2 >= 0 && nextC2 < p) {
				nextC2 = bytes.IndexByte(src[p:], c1Lead)
				if nextC2 >= 0 {
					nextC2 += p
				}
			}
			j := nextEsc
			if nextC2 >= 0 && (j < 0 || nextC2 < j) {
				j = nextC2
			}
			if j < 0 {
				return append(dst, src[start:]...)
			}
			if src[j] == esc {
				if k := plainCSI(src[j+1:], cur, prev); k > 0 {
					p = j + 1 + k // as it is: goes out with the text around it
					continue
				}
			}
			dst = append(dst, src[start:j+1]...)
			start = -1
			if src[j] == esc {
				w.st = stEscape
			} else {
				w.st = stC1
			}
			p = j + 1
		case stC1:
			w.st = stGround
			if src[p] == c1CSI {
				dst = append(dst, c1CSI)
				p++
				w.begin()
			}
		case stEscape:
			c := src[p]
			switch {
			case c == '[':
				dst = append(dst, c)
				p++
				w.begin()
			case c == esc || c == 0x7f || (c < 0x20 && c != 0x18 && c != 0x1a):
				dst = append(dst, c) // executed (or ignored) in ESCAPE: still an escape
				p++
			default:
				w.st = stGround // anything else: read again as text
			}
		case stCSI:
			var used int
			dst, used = w.csi(dst, src[p:], cur, prev)
			p += used
		}
	}
	if start >= 0 {
		dst = append(dst, src[start:]...)
	}
	return dst
}

// plainCSI is the length of the CSI sequence at the start of b (after its
// ESC) when it is whole and needs no rewrite, in the form most are: '['
// then digits and ';' then the final byte. Else 0: the state machine reads
// it.
func plainCSI(b []byte, cur, prev Size) int {
	if len(b) < 2 || b[0] != '[' {
		return 0
	}
	v, first := 0, true
	for i := 1; i < len(b) && i < 64; i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			if first {
				if v >= 1e8 {
					return 0
				}
				v = v*10 + int(c-'0')
			}
		case c == ';':
			first = false
		case c >= 0x40 && c <= 0x7e:
			if bound(c, 0, v, cur, prev) != v {
				return 0
			}
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

// Held reports whether bytes are held back (Flush gives them).
func (w *Rewriter) Held() bool { return w.st == stCSI && (w.n > 0 || w.over) }

// Flush appends what is held back (the program ended, or the stream is
// handed over) as it would have gone out unrewritten, and resets w.
func (w *Rewriter) Flush(dst []byte) []byte {
	if w.st == stCSI {
		dst = w.release(dst)
	}
	w.st = stGround
	return dst
}

// begin starts a CSI, after its introducer (already written).
func (w *Rewriter) begin() {
	w.st, w.sub = stCSI, csiEntry
	w.n, w.over, w.d0, w.e0 = 0, false, noDigit, -1
	w.collect = 0
	w.np, w.nsub = 1, 0
	w.params[0], w.subEnd[0] = 0, 0
	w.rejectDig, w.rejectSub, w.digitIsSub = false, false, false
}

// csi takes bytes of a held CSI; it returns how many it used.
func (w *Rewriter) csi(dst, src []byte, cur, prev Size) ([]byte, int) {
	if w.n == 0 && w.sub == csiEntry && !w.over {
		// The common case at once: a few digits, then a separator or the
		// final byte, all in this write, with nothing to bound.
		v, i := 0, 0
		for ; i < len(src) && i < 9 && src[i] >= '0' && src[i] <= '9'; i++ {
			v = v*10 + int(src[i]-'0')
		}
		if i < len(src) {
			c := src[i]
			if (c == ';' || c == ':') && v <= limit(cur, prev) ||
				c >= 0x40 && c <= 0x7e && bound(c, 0, v, cur, prev) == v {
				w.st = stGround
				return append(dst, src[:i+1]...), i + 1
			}
		}
	}
	for i, c := range src {
		switch {
		case c >= '0' && c <= ';':
			if w.sub == csiInter {
				return w.passOn(dst), i // CSI_IGNORE: nothing dispatches
			}
			w.sub = csiParam
			w.param(c)
			if w.np > 1 || w.digitIsSub {
				if w.e0 < 0 {
					w.e0 = w.n // param 0 ended at this byte
				}
				if w.params[0] <= int32(limit(cur, prev)) {
					return w.passOn(w.keep(dst, c)), i + 1 // nothing to bound
				}
			} else if w.d0 == noDigit {
				w.d0 = w.n
			}
			dst = w.keep(dst, c)
		case c >= '<' && c <= '?':
			// A prefix (no bounded sequence has one) or, after a
			// parameter, CSI_IGNORE: either way nothing to bound.
			return w.passOn(dst), i
		case c >= 0x20 && c <= 0x2f:
			if w.collect != 0 {
				return w.passOn(dst), i // two intermediates: nothing to bound
			}
			if w.e0 < 0 {
				w.e0 = w.n
			}
			w.sub, w.collect = csiInter, c
			dst = w.keep(dst, c)
		case c >= 0x40 && c <= 0x7e:
			return w.final(dst, c, cur, prev), i + 1
		case c == 0x7f || (c < 0x20 && c != 0x18 && c != 0x1a && c != esc):
			// executed (or ignored) where it stands: no change of state
			if w.over {
				if c != 0x7f {
					dst = append(dst, c)
				}
			} else {
				dst = w.keep(dst, c)
			}
		default:
			// CAN, SUB, ESC, and any byte ≥ 0x80 (a C1 control or other
			// non-ASCII) end the sequence without dispatch: read again as text.
			return w.passOn(dst), i
		}
	}
	return dst, len(src)
}

// keep holds c, raw while the sequence fits in hold; past it the held C0
// controls go out at once and the parameters are the carry.
func (w *Rewriter) keep(dst []byte, c byte) []byte {
	if w.over {
		return dst
	}
	if w.n == holdMax {
		for _, h := range w.hold[:w.n] {
			if h < 0x20 {
				dst = append(dst, h)
			}
		}
		w.over = true
		if c < 0x20 {
			dst = append(dst, c)
		}
		return dst
	}
	w.hold[w.n] = c
	w.n++
	return dst
}

// passOn writes the held sequence out unrewritten and goes back to text:
// the rest of it needs no rewrite, whatever it turns out to be.
func (w *Rewriter) passOn(dst []byte) []byte {
	dst = w.release(dst)
	w.st = stGround
	return dst
}

// release writes the held bytes as they came, or, past holdMax, the
// parameters in a form xterm.js reads the same (the rest of the sequence
// may follow it).
func (w *Rewriter) release(dst []byte) []byte {
	if !w.over {
		return append(dst, w.hold[:w.n]...)
	}
	return w.canonical(dst, w.params[0])
}

// param is xterm.js's PARAM action (Params.addParam/addSubParam/addDigit).
func (w *Rewriter) param(c byte) {
	switch c {
	case ';':
		w.digitIsSub = false
		if w.np >= maxParams {
			w.rejectDig = true
			return
		}
		w.params[w.np] = 0
		w.subEnd[w.np] = uint8(w.nsub)
		w.np++
	case ':':
		w.digitIsSub = true
		if w.rejectDig || w.nsub >= maxSubs {
			w.rejectSub = true
			return
		}
		w.subs[w.nsub] = -1
		w.nsub++
		w.subEnd[w.np-1] = uint8(w.nsub)
	default:
		d := int64(c - '0')
		if w.rejectDig || (w.digitIsSub && w.rejectSub) {
			return
		}
		if w.digitIsSub {
			if w.nsub == 0 {
				return
			}
			p := &w.subs[w.nsub-1]
			if *p == -1 {
				*p = int32(d)
			} else {
				*p = int32(min(int64(*p)*10+d, maxValue))
			}
			return
		}
		p := &w.params[w.np-1]
		*p = int32(min(int64(*p)*10+d, maxValue))
	}
}

// limit is the count past which a sequence other than REP changes nothing.
func limit(cur, prev Size) int {
	return max(cur.Cols, cur.Rows, prev.Cols, prev.Rows, 1)
}

// bound is the count a bounded sequence is rewritten to, or n itself.
func bound(final, collect byte, n int, cur, prev Size) int {
	switch collect {
	case 0:
		switch final {
		case 'b':
			cols := max(cur.Cols, 1)
			cells := max(cur.Cols, prev.Cols, 1) * max(cur.Rows, prev.Rows, 1)
			cells = (cells + cols - 1) / cols * cols // whole lines of the current width
			if n > cells+cols {
				return cells + (n-cells)%cols
			}
			return n
		case '@', 'P', 'X', 'L', 'M', 'S', 'T', 'I', 'Z':
		default:
			return n
		}
	case ' ':
		if final != '@' && final != 'A' {
			return n
		}
	case '\'':
		if final != '}' && final != '~' {
			return n
		}
	default:
		return n
	}
	return min(n, limit(cur, prev))
}

// final ends the held sequence with its final byte c.
func (w *Rewriter) final(dst []byte, c byte, cur, prev Size) []byte {
	w.st = stGround
	n := int(w.params[0])
	b := bound(c, w.collect, n, cur, prev)
	switch {
	case w.over:
		dst = w.canonical(dst, int32(b))
	case b == n:
		dst = append(dst, w.hold[:w.n]...)
	default:
		// Param 0's digits replaced: the new count where its first digit
		// was, its other digits dropped (only C0 controls and DEL can sit
		// among them, and stay).
		e0 := w.e0
		if e0 < 0 {
			e0 = w.n
		}
		dst = append(dst, w.hold[:w.d0]...)
		dst = strconv.AppendInt(dst, int64(b), 10)
		for _, h := range w.hold[w.d0:e0] {
			if h < '0' || h > '9' {
				dst = append(dst, h)
			}
		}
		dst = append(dst, w.hold[e0:w.n]...)
	}
	return append(dst, c)
}

// canonical writes the parsed sequence so far (param 0 as p0) in its
// shortest form: parameters without leading zeros (0 as nothing),
// sub-parameters after ':' (an empty one as nothing), then the
// intermediate. A trailing separator carries xterm.js's rejection of
// further digits, so that what may follow is read as it was.
func (w *Rewriter) canonical(dst []byte, p0 int32) []byte {
	sub := 0
	for i := 0; i < w.np; i++ {
		if i > 0 {
			dst = append(dst, ';')
		}
		v := w.params[i]
		if i == 0 {
			v = p0
		}
		if v != 0 || (i == 0 && w.sub == csiParam) { // "0", not "": still in the parameters
			dst = strconv.AppendInt(dst, int64(v), 10)
		}
		for ; sub < int(w.subEnd[i]); sub++ {
			dst = append(dst, ':')
			if s := w.subs[sub]; s >= 0 {
				dst = strconv.AppendInt(dst, int64(s), 10)
			}
		}
	}
	switch {
	case w.rejectDig:
		dst = append(dst, ';')
	case w.rejectSub && w.digitIsSub:
		dst = append(dst, ':')
	}
	if w.collect != 0 {
		dst = append(dst, w.collect)
	}
	return dst
}
