package shellint

import "bytes"

// tracker follows the bytes already forwarded to decide whether the client's
// VT parser is in the middle of an escape sequence, so that stripping a
// sequence there can abort it with CAN as the original stream did.
type tracker struct{ st uint8 }

const (
	tGround uint8 = iota
	tEsc
	tCSI
	tEscInt
	tOSC
	tString // DCS, SOS, PM, APC
)

func (t *tracker) mid() bool { return t.st != tGround }

func (t *tracker) feed(b []byte) {
	// ESC moves every state to Esc, so only the bytes after the last ESC
	// matter; once back in Ground nothing but ESC leaves it.
	if k := bytes.LastIndexByte(b, esc); k >= 0 {
		t.st = tEsc
		b = b[k+1:]
	}
	for _, c := range b {
		if t.st == tGround {
			return
		}
		if c == can || c == sub {
			t.st = tGround
			continue
		}
		switch t.st {
		case tEsc:
			switch {
			case c == '[':
				t.st = tCSI
			case c == ']':
				t.st = tOSC
			case c == 'P' || c == 'X' || c == '^' || c == '_':
				t.st = tString
			case c >= 0x20 && c <= 0x2f:
				t.st = tEscInt
			default:
				t.st = tGround
			}
		case tCSI:
			if c >= 0x40 && c <= 0x7e {
				t.st = tGround
			}
		case tEscInt:
			if c >= 0x30 && c <= 0x7e {
				t.st = tGround
			}
		case tOSC:
			if c == bel {
				t.st = tGround
			}
		}
	}
}
