package shellint

import (
	"bytes"
	"math"
	"strings"
	"unicode/utf8"
)

// cut splits b at its first ';'.
func cut(b []byte) (head, rest []byte, found bool) {
	if i := bytes.IndexByte(b, ';'); i >= 0 {
		return b[:i], b[i+1:], true
	}
	return b, nil, false
}

// parseExit parses an exit code: -?[0-9]{1,10} that fits in int32.
// Anything else (including an empty field) is "no exit code".
func parseExit(b []byte) *int {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) < 1 || len(b) > 10 {
		return nil
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return nil
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return nil
	}
	x := int(v)
	return &x
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// unescape633 decodes a 633 value as the shells escape it: `\\` is a
// backslash, `\xHH` (or `\XHH`) is the byte HH, any other backslash stays.
// The bytes are then decoded as UTF-8 with replacement.
func unescape633(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return decodeString(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\\' && i+1 < len(b) {
			switch n := b[i+1]; {
			case n == '\\':
				out = append(out, '\\')
				i++
				continue
			case (n == 'x' || n == 'X') && i+3 < len(b):
				hi, ok1 := hexVal(b[i+2])
				lo, ok2 := hexVal(b[i+3])
				if ok1 && ok2 {
					out = append(out, hi<<4|lo)
					i += 3
					continue
				}
			}
		}
		out = append(out, c)
	}
	return decodeString(out)
}

// percentDecode decodes %HH escapes; a malformed escape fails.
func percentDecode(s string) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			out = append(out, c)
			continue
		}
		if i+2 >= len(s) {
			return nil, false
		}
		hi, ok1 := hexVal(s[i+1])
		lo, ok2 := hexVal(s[i+2])
		if !ok1 || !ok2 {
			return nil, false
		}
		out = append(out, hi<<4|lo)
		i += 2
	}
	return out, true
}

// parseOSC7 extracts the local path from an OSC 7 payload
// (file://host/path; host must be this machine).
func parseOSC7(payload []byte, isLocal func(host string) bool) (string, bool) {
	rest, ok := strings.CutPrefix(string(payload), "file://")
	if !ok {
		return "", false
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return "", false
	}
	host, path := rest[:slash], rest[slash:]
	if host != "" && !strings.EqualFold(host, "localhost") && !isLocal(host) {
		return "", false // a remote shell: not a local path
	}
	b, ok := percentDecode(path)
	if !ok {
		return "", false
	}
	return decodeString(b), true
}

// maxTitle is the longest title in code points.
const maxTitle = 256

// sanitizeTitle removes C0, DEL and C1 controls, trims white space and cuts
// the title to maxTitle code points. b is valid UTF-8.
func sanitizeTitle(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			continue
		}
		sb.WriteRune(r)
	}
	s := strings.TrimSpace(sb.String())
	n := 0
	for i := range s {
		if n == maxTitle {
			return s[:i]
		}
		n++
	}
	return s
}
