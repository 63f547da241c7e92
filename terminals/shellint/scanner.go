package shellint

import "bytes"

// Bytes the scanner acts on. None of them occurs inside a UTF-8 multi-byte
// sequence, so the scanner can work on bytes.
const (
	bel = 0x07
	can = 0x18
	sub = 0x1a
	esc = 0x1b
)

// Capture caps: payload bytes kept for an OSC we interpret.
const (
	capMarker = 65536 // OSC 633 and OSC 133
	capCwd    = 16384 // OSC 7 and OSC 1337;CurrentDir
	capTitle  = 4096  // OSC 0 and OSC 2
)

// maxDigits is how many significant identifier digits are kept; a longer
// identifier is not one of ours.
const maxDigits = 8

// Constant pieces the scanner forwards. They are never modified, so the
// data sink may keep references to them until the end of the current read.
var (
	escBytes   = []byte{esc}
	belBytes   = []byte{bel}
	canBytes   = []byte{can}
	stBytes    = []byte{esc, '\\'}
	oscBytes   = []byte{esc, ']'}
	semiBytes  = []byte{';'}
	zeroBytes  = bytes.Repeat([]byte{'0'}, 64)
	currentDir = []byte("CurrentDir")
)

// oscKind says which captured OSC an item is.
type oscKind uint8

const (
	kindNone  oscKind = iota
	kind633           // OSC 633 (VS Code style), stripped
	kind133           // OSC 133 (FinalTerm), stripped
	kindCwd7          // OSC 7, stripped
	kindITerm         // OSC 1337;CurrentDir, stripped
	kindTitle         // OSC 0 and 2, forwarded and reported
)

// itemSink receives the scanner's items in stream order.
type itemSink interface {
	// data receives bytes to forward. stable reports whether b stays
	// unchanged until the end of the current scanner write (it is a
	// sub-slice of the input or a constant); otherwise it must be copied.
	data(b []byte, stable bool)
	// osc receives a complete captured OSC payload (after "id;"). The
	// payload must not be retained.
	osc(k oscKind, payload []byte)
}

type scanState uint8

const (
	sGround scanState = iota
	sEsc
	sOscID
	sOscIDEsc
	sITerm // after "1337;", matching "CurrentDir"
	sCapture
	sCaptureEsc
	sPass
	sPassEsc
	sDiscard
	sDiscardEsc
)

// scanner is the streaming escape scanner: it splits valid UTF-8
// into data and captured OSCs, strips the shell-integration families and
// passes everything else through. Memory held between writes is bounded by
// the largest capture cap plus a few bytes.
type scanner struct {
	st    scanState
	sink  itemSink
	escAt int // index in the current input of the held ESC, or -1

	// OSC identifier: leading zeros are only counted (they do not change
	// the value), significant digits are kept.
	zeros  int
	digits [maxDigits]byte
	nd     int
	val    int

	kind    oscKind
	limit   int
	match   int // bytes of "CurrentDir" matched in sITerm
	payload []byte

	trk tracker
}

func newScanner(sink itemSink) *scanner {
	return &scanner{sink: sink, escAt: -1}
}

// fwd forwards bytes to the sink and to the client-parser tracker.
func (s *scanner) fwd(b []byte, stable bool) {
	if len(b) == 0 {
		return
	}
	s.trk.feed(b)
	s.sink.data(b, stable)
}

// fwdPrefix forwards the held "ESC ] <identifier>".
func (s *scanner) fwdPrefix() {
	s.fwd(oscBytes, true)
	for z := s.zeros; z > 0; {
		n := min(z, len(zeroBytes))
		s.fwd(zeroBytes[:n], true)
		z -= n
	}
	s.fwd(s.digits[:s.nd], false)
}

// fwdHeldEsc forwards the held ESC followed by in[i].
func (s *scanner) fwdHeldEsc(in []byte, i int) {
	if s.escAt >= 0 && s.escAt == i-1 {
		s.fwd(in[s.escAt:i+1], true)
		return
	}
	s.fwd(escBytes, true)
	s.fwd(in[i:i+1], true)
}

// hole is called when the scanner strips a sequence: if the client's parser
// is in the middle of an escape sequence, a CAN aborts it so the bytes after
// the hole are read as in the original stream: `ESC [ 3` + a stripped OSC +
// `1m` must not reach the client as `ESC [ 3 1 m` (red text).
func (s *scanner) hole() {
	if s.trk.mid() {
		s.fwd(canBytes, true)
	}
}

func (s *scanner) hasID() bool { return s.zeros > 0 || s.nd > 0 }

// isMarker reports whether the identifier is 633 or 133 (always stripped).
func (s *scanner) isMarker() bool { return s.hasID() && (s.val == 633 || s.val == 133) }

func (s *scanner) startCapture(k oscKind, limit int) {
	s.st = sCapture
	s.kind = k
	s.limit = limit
	s.payload = s.payload[:0]
}

// classify runs on the ';' that ends the identifier.
func (s *scanner) classify() {
	if s.nd > 0 || s.zeros > 0 {
		switch s.val {
		case 633:
			s.hole()
			s.startCapture(kind633, capMarker)
			return
		case 133:
			s.hole()
			s.startCapture(kind133, capMarker)
			return
		case 7:
			s.hole()
			s.startCapture(kindCwd7, capCwd)
			return
		case 0, 2:
			s.startCapture(kindTitle, capTitle)
			return
		case 1337:
			s.st = sITerm
			s.match = 0
			return
		}
	}
	s.fwdPrefix()
	s.fwd(semiBytes, true)
	s.st = sPass
}

// inEsc handles in[i] with one ESC held (state sEsc).
func (s *scanner) inEsc(in []byte, i int) {
	switch in[i] {
	case ']':
		s.st = sOscID
		s.zeros, s.nd, s.val = 0, 0, 0
	case esc:
		s.escAt = i // drop the held ESC, hold the new one
		s.st = sEsc
	default:
		s.fwdHeldEsc(in, i)
		s.st = sGround
	}
}

// complete finishes a capture. term is the terminator: BEL, ST, or nil when
// an ESC that is not part of ST ended it.
func (s *scanner) complete(term []byte) {
	s.st = sGround
	if s.kind == kindTitle {
		s.fwdPrefix()
		s.fwd(semiBytes, true)
		s.fwd(s.payload, false)
		if term == nil {
			term = belBytes // a BEL ends the client's OSC where ours ended
		}
		s.fwd(term, true)
	}
	s.sink.osc(s.kind, s.payload)
}

// forwardTitle forwards an unfinished title capture as is.
func (s *scanner) forwardTitle() {
	s.fwdPrefix()
	s.fwd(semiBytes, true)
	s.fwd(s.payload, false)
}

// isSpecial reports the bytes that end a run in capture, pass and discard.
func isSpecial(c byte) bool { return c == bel || c == esc || c == can || c == sub }

// scanRun returns the index of the first special byte in in[i:], or len(in).
func scanRun(in []byte, i int) int {
	for ; i < len(in); i++ {
		if c := in[i]; c <= esc && isSpecial(c) {
			return i
		}
	}
	return i
}

// write scans one chunk of valid UTF-8.
func (s *scanner) write(in []byte) {
	s.escAt = -1
	i := 0
	for i < len(in) {
		switch s.st {
		case sGround:
			// Forward the longest run up to an ESC that may start an
			// OSC: "ESC b" with b neither ']' nor ESC stays in the run.
			j := i
			for {
				k := bytes.IndexByte(in[j:], esc)
				if k < 0 {
					s.fwd(in[i:], true)
					return
				}
				j += k
				if j+1 < len(in) && in[j+1] != ']' && in[j+1] != esc {
					j += 2
					continue
				}
				break
			}
			s.fwd(in[i:j], true)
			s.escAt = j
			s.st = sEsc
			i = j + 1

		case sEsc:
			s.inEsc(in, i)
			i++

		case sOscID:
			c := in[i]
			switch {
			case c >= '0' && c <= '9':
				if s.nd == 0 && c == '0' {
					s.zeros++
				} else if s.nd < maxDigits {
					s.digits[s.nd] = c
					s.nd++
					s.val = s.val*10 + int(c-'0')
				} else {
					// Too long to be ours: forward, then Pass takes the digit.
					s.fwdPrefix()
					s.st = sPass
					continue
				}
			case c == ';' && s.hasID():
				s.classify()
			case c == bel || c == can || c == sub:
				if s.isMarker() {
					s.hole()
				} else {
					s.fwdPrefix()
					s.fwd(in[i:i+1], true)
				}
				s.st = sGround
			case c == esc:
				s.escAt = i
				s.st = sOscIDEsc
			default:
				// Not an identifier we know: forward, Pass takes the byte.
				s.fwdPrefix()
				s.st = sPass
				continue
			}
			i++

		case sOscIDEsc:
			if in[i] == '\\' {
				if s.isMarker() {
					s.hole()
				} else {
					s.fwdPrefix()
					s.fwdHeldEsc(in, i)
				}
				s.st = sGround
			} else {
				if s.isMarker() {
					s.hole()
				} else {
					s.fwdPrefix()
					s.fwd(belBytes, true)
				}
				s.inEsc(in, i)
			}
			i++

		case sITerm:
			if in[i] == currentDir[s.match] {
				s.match++
				i++
				if s.match == len(currentDir) {
					s.hole()
					s.startCapture(kindITerm, capCwd)
					s.payload = append(s.payload, currentDir...)
				}
				continue
			}
			s.fwdPrefix()
			s.fwd(semiBytes, true)
			s.fwd(currentDir[:s.match], true)
			s.st = sPass // Pass takes the byte that differed

		case sCapture:
			j := scanRun(in, i)
			if len(s.payload)+(j-i) > s.limit {
				if s.kind == kindTitle {
					s.forwardTitle()
					s.st = sPass // Pass forwards the rest
				} else {
					s.payload = s.payload[:0]
					s.st = sDiscard
				}
				continue
			}
			s.payload = append(s.payload, in[i:j]...)
			i = j
			if i == len(in) {
				return
			}
			switch c := in[i]; c {
			case bel:
				s.complete(belBytes)
			case esc:
				s.escAt = i
				s.st = sCaptureEsc
			default: // CAN, SUB: aborted
				if s.kind == kindTitle {
					s.forwardTitle()
					s.fwd(in[i:i+1], true)
				}
				s.st = sGround
			}
			i++

		case sCaptureEsc:
			if in[i] == '\\' {
				s.complete(stBytes)
			} else {
				s.complete(nil)
				s.inEsc(in, i)
			}
			i++

		case sPass:
			j := scanRun(in, i)
			if j == len(in) {
				s.fwd(in[i:], true)
				return
			}
			if in[j] == esc {
				s.fwd(in[i:j], true)
				s.escAt = j
				s.st = sPassEsc
			} else { // BEL, CAN, SUB end it and are forwarded
				s.fwd(in[i:j+1], true)
				s.st = sGround
			}
			i = j + 1

		case sPassEsc:
			if in[i] == '\\' {
				s.fwdHeldEsc(in, i)
				s.st = sGround
			} else {
				// This ESC is not ST: end the OSC with a BEL, or the client's
				// parser stays in it and swallows what the ESC starts.
				s.fwd(belBytes, true)
				s.inEsc(in, i)
			}
			i++

		case sDiscard:
			j := scanRun(in, i)
			if j == len(in) {
				return
			}
			if in[j] == esc {
				s.escAt = j
				s.st = sDiscardEsc
			} else {
				s.st = sGround
			}
			i = j + 1

		case sDiscardEsc:
			if in[i] == '\\' {
				s.st = sGround
			} else {
				s.inEsc(in, i)
			}
			i++
		}
	}
}

// close flushes the scanner at the end of the stream.
func (s *scanner) close() {
	s.escAt = -1
	switch s.st {
	case sEsc, sPassEsc:
		s.fwd(escBytes, true)
	case sOscID, sOscIDEsc:
		if !s.isMarker() {
			s.fwdPrefix()
			if s.st == sOscIDEsc {
				s.fwd(escBytes, true)
			}
		}
	case sITerm:
		s.fwdPrefix()
		s.fwd(semiBytes, true)
		s.fwd(currentDir[:s.match], true)
	case sCapture, sCaptureEsc:
		if s.kind == kindTitle {
			s.forwardTitle()
			if s.st == sCaptureEsc {
				s.fwd(escBytes, true)
			}
		}
	}
	s.st = sGround
	s.payload = s.payload[:0]
}

// held reports how many stream bytes the scanner keeps between writes.
// Leading zeros of an identifier are counted, not kept.
func (s *scanner) held() int {
	switch s.st {
	case sEsc, sPassEsc, sDiscardEsc:
		return 1
	case sOscID:
		return 2 + s.nd
	case sOscIDEsc:
		return 3 + s.nd
	case sITerm:
		return 3 + s.nd + s.match
	case sCapture:
		return 3 + s.nd + len(s.payload)
	case sCaptureEsc:
		return 4 + s.nd + len(s.payload)
	}
	return 0
}
