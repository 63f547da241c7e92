package ahp

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeDataFrame decodes an `action` notification carrying terminal/data or
// terminal/input when the frame is laid out exactly as AppendEnvelope writes
// it, in one pass over the bytes. It is the receiving half of the data fast
// path: encoding/json scans a frame once per nesting level (message,
// envelope, action), several times over the data for a 64 KiB output frame.
// ok is false for anything else (another action, another field order,
// anything it is not sure of); decode those with the general path. When ok,
// the envelope is what json.Unmarshal into Message and then Envelope gives
// (FuzzDecodeDataFrame checks that).
func DecodeDataFrame(frame []byte) (e Envelope, ok bool) {
	p := frameParser{b: frame}
	if !p.lit(`{"jsonrpc":"2.0","method":"action","params":{"channel":`) {
		return Envelope{}, false
	}
	e.Channel, ok = p.str()
	if !ok || !p.lit(`,"action":{"type":`) {
		return Envelope{}, false
	}
	e.Action.Type, ok = p.str()
	if !ok || (e.Action.Type != TerminalData && e.Action.Type != TerminalInput) || !p.lit(`,"data":`) {
		return Envelope{}, false
	}
	e.Action.Data, ok = p.str()
	if !ok || !p.lit(`},"serverSeq":`) {
		return Envelope{}, false
	}
	e.ServerSeq, ok = p.int()
	if !ok {
		return Envelope{}, false
	}
	if p.lit(`,"origin":{"clientId":`) {
		o := &Origin{}
		o.ClientID, ok = p.str()
		if !ok || !p.lit(`,"clientSeq":`) {
			return Envelope{}, false
		}
		if o.ClientSeq, ok = p.int(); !ok || !p.lit(`}`) {
			return Envelope{}, false
		}
		e.Origin = o
	}
	if p.lit(`,"rejectionReason":`) {
		if e.RejectionReason, ok = p.str(); !ok {
			return Envelope{}, false
		}
	}
	if !p.lit(`}}`) || p.i != len(p.b) {
		return Envelope{}, false
	}
	return e, true
}

type frameParser struct {
	b []byte
	i int
}

// lit consumes s if the input continues with it.
func (p *frameParser) lit(s string) bool {
	if !bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		return false
	}
	p.i += len(s)
	return true
}

// int parses a JSON integer that fits an int64 (no fraction or exponent).
func (p *frameParser) int() (int64, bool) {
	j := p.i
	if j < len(p.b) && p.b[j] == '-' {
		j++
	}
	start := j
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	if j == start || (p.b[start] == '0' && j > start+1) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p.b[p.i:j]), 10, 64)
	if err != nil {
		return 0, false
	}
	p.i = j
	return n, true
}

// str parses a JSON string as encoding/json decodes it. Raw bytes must be
// valid UTF-8 (encoding/json would replace invalid ones; AppendString never
// writes them): otherwise it reports false.
func (p *frameParser) str() (string, bool) {
	b := p.b
	if p.i >= len(b) || b[p.i] != '"' {
		return "", false
	}
	i := p.i + 1
	var out []byte
	for {
		j := i
		for j < len(b) && !stringStop[b[j]] {
			j++
		}
		if j >= len(b) || b[j] < 0x20 {
			return "", false
		}
		run := b[i:j]
		if !utf8.Valid(run) {
			return "", false
		}
		if b[j] == '"' {
			p.i = j + 1
			if out == nil {
				return string(run), true
			}
			return string(append(out, run...)), true
		}
		if out == nil {
			out = make([]byte, 0, len(b)-p.i)
		}
		out = append(out, run...)
		var ok bool
		if out, i, ok = appendUnescaped(out, b, j); !ok {
			return "", false
		}
	}
}

// stringStop marks the bytes that end a run of a JSON string's plain bytes.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// appendUnescaped decodes the escape at b[j] (a backslash) onto out and
// returns the index after it.
func appendUnescaped(out, b []byte, j int) ([]byte, int, bool) {
	if j+1 >= len(b) {
		return out, 0, false
	}
	switch c := b[j+1]; c {
	case '"', '\\', '/':
		return append(out, c), j + 2, true
	case 'b':
		return append(out, '\b'), j + 2, true
	case 'f':
		return append(out, '\f'), j + 2, true
	case 'n':
		return append(out, '\n'), j + 2, true
	case 'r':
		return append(out, '\r'), j + 2, true
	case 't':
		return append(out, '\t'), j + 2, true
	case 'u':
		r, ok := hex4(b, j+2)
		if !ok {
			return out, 0, false
		}
		next := j + 6
		if utf16.IsSurrogate(r) {
			// A pair makes one character; a lone half is U+FFFD, as encoding/json has it.
			r2, ok2 := rune(-1), false
			if next+1 < len(b) && b[next] == '\\' && b[next+1] == 'u' {
				r2, ok2 = hex4(b, next+2)
			}
			if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
				return utf8.AppendRune(out, dec), next + 6, true
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(out, r), next, true
	}
	return out, 0, false
}

// hex4 reads the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
