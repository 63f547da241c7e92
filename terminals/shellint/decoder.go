package shellint

import "unicode/utf8"

// replacement is U+FFFD encoded as UTF-8.
var replacement = []byte("\uFFFD")

// utf8Status classifies the bytes at the start of a slice.
type utf8Status uint8

const (
	utf8Valid      utf8Status = iota // a complete, valid sequence
	utf8Invalid                      // a maximal subpart to replace by one U+FFFD
	utf8Incomplete                   // a valid prefix that the slice cuts short
)

// classify looks at the sequence starting at b[0] (b[0] >= 0x80) and
// returns its status and length: the full sequence length when valid, the
// maximal subpart when invalid, the available prefix when incomplete.
// Second-byte ranges are the strict ones (no overlongs, no surrogates, no
// code points above U+10FFFF).
func classify(b []byte) (int, utf8Status) {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c < 0xC2: // continuation byte without lead, or C0/C1 overlong lead
		return 1, utf8Invalid
	case c < 0xE0:
		need = 1
	case c < 0xF0:
		need = 2
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
	case c < 0xF5:
		need = 3
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
	default:
		return 1, utf8Invalid
	}
	for j := 1; j <= need; j++ {
		if j >= len(b) {
			return j, utf8Incomplete
		}
		if x := b[j]; x < lo || x > hi {
			return j, utf8Invalid
		}
		lo, hi = 0x80, 0xBF
	}
	return need + 1, utf8Valid
}

// decoder turns a byte stream cut at arbitrary points into valid UTF-8.
// Incomplete trailing sequences (at most 3 bytes) are carried to the next
// call; invalid input becomes U+FFFD by the maximal-subpart rule.
type decoder struct {
	carry [4]byte
	n     int
	buf   []byte // output buffer, used only when the input must be changed
}

// decode returns the valid UTF-8 for src. The result aliases src or the
// decoder's buffer and is valid until the next call.
func (d *decoder) decode(src []byte) []byte {
	var out []byte // nil while the result is a sub-slice of src
	if d.n > 0 {
		out = d.buf[:0]
		k := 0
		for {
			n, st := classify(d.carry[:d.n])
			if st == utf8Incomplete {
				if k == len(src) {
					return out // everything went into the carry
				}
				d.carry[d.n] = src[k]
				d.n++
				k++
				continue
			}
			if st == utf8Valid {
				out = append(out, d.carry[:n]...)
			} else {
				out = append(out, replacement...)
				// The carry was a valid prefix, so only the byte just
				// added broke it: hand it back to the main loop.
				k -= d.n - n
			}
			d.n = 0
			break
		}
		src = src[k:]
	}
	if out == nil && utf8.Valid(src) {
		return src
	}
	start, i := 0, 0
	for i < len(src) {
		if src[i] < utf8.RuneSelf {
			i++
			continue
		}
		n, st := classify(src[i:])
		switch st {
		case utf8Valid:
			i += n
			continue
		case utf8Incomplete:
			d.n = copy(d.carry[:], src[i:])
			if out == nil {
				return src[start:i]
			}
			out = append(out, src[start:i]...)
			d.buf = out
			return out
		}
		if out == nil {
			out = d.buf[:0]
		}
		out = append(out, src[start:i]...)
		out = append(out, replacement...)
		i += n
		start = i
	}
	if out == nil {
		return src
	}
	out = append(out, src[start:]...)
	d.buf = out
	return out
}

// flush returns U+FFFD if an incomplete sequence is pending, else nil.
func (d *decoder) flush() []byte {
	if d.n == 0 {
		return nil
	}
	d.n = 0
	return replacement
}

// held reports how many input bytes the decoder keeps between calls.
func (d *decoder) held() int { return d.n }

// decodeString decodes a complete byte string (no carrying) into valid UTF-8.
func decodeString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var d decoder
	out := d.decode(b)
	if d.flush() != nil {
		out = append(out, replacement...)
	}
	return string(out)
}
