package ahp

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// Shape selects the wire form of terminal states, catalogue entries and session
// claims, which changed in protocol 0.9.0.
type Shape int

const (
	// Current is the ≥ 0.9.0 shape: lifecycle objects, session claims with chat.
	Current Shape = iota
	// Legacy is the ≤ 0.8.x shape: optional exitCode, no lifecycle, no chat.
	Legacy
)

// shaped is implemented by values whose JSON depends on the Shape.
type shaped interface {
	wire(Shape) any
}

// Marshal encodes v as JSON in the given shape. Values that do not depend on the
// shape are encoded as encoding/json would, without HTML escaping.
func Marshal(v any, shape Shape) ([]byte, error) {
	if s, ok := v.(shaped); ok {
		v = s.wire(shape)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// AppendString appends s as a JSON string, byte for byte as encoding/json
// writes it without HTML escaping: `"` and `\` escaped, control characters as
// \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 as
// \u2028 and \u2029, everything else verbatim. It is the hot path of
// terminal output (valid UTF-8 full of ESC), so the common bytes are looked
// up in one table.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time up to the next byte that needs a look (most
		// terminal text is plain ASCII). UTF-8 is checked here, rune by rune,
		// not in a pass of its own.
		if i+8 <= len(s) {
			w := s[i : i+8]
			m := specialMask(uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
				uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56)
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendEscape(dst, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

const hexDigits = "0123456789abcdef"

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialMask flags the bytes of x (little endian) that need a look:
// control characters, '"', '\\' and every byte of a multi-byte character.
// Only the lowest flag is exact (a borrow may flag bytes above it), which is
// all the caller uses.
func specialMask(x uint64) uint64 {
	lt := (x - 0x20*ones) &^ x
	q := x ^ ('"' * ones)
	b := x ^ ('\\' * ones)
	return (lt | (q-ones)&^q | (b-ones)&^b | x) & highs
}

// plain marks the ASCII bytes a JSON string holds verbatim.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

// appendInt appends a JSON number.
func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }
