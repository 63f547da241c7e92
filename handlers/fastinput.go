package handlers

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/termhost/termhost/ahp"
)

// A keystroke is the message a connection sends most, and the one whose
// decoding its echo waits for: decoded in general (the frame checked, the
// message, its params and the action each unmarshalled) it took about 4.7 µs
// and 36 allocations on the bench machine. fastInput reads the one form
// every client we know sends it in, in a single pass; any other frame, or
// anything in it the pass does not take as is, goes the general way, which
// then decides (and answers errors) as always.
var (
	inputHead   = []byte(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":`)
	inputSeq    = []byte(`,"clientSeq":`)
	inputAction = []byte(`,"action":{"type":"terminal/input","data":`)
	inputTail   = []byte(`}}}`)
)

// fastInput decodes a dispatchAction notification of terminal/input written
// as the browser's client, the Go client and the bench write it (no
// whitespace, these keys in this order, nothing else). ok is false for
// anything else: the caller then decodes the frame in general. When ok, the
// result is what the general decoding gives for the frame.
func fastInput(frame []byte) (in keystroke, ok bool) {
	rest, ok := bytes.CutPrefix(frame, inputHead)
	if !ok {
		return keystroke{}, false
	}
	if in.channel, rest, ok = fastString(rest); !ok {
		return keystroke{}, false
	}
	if rest, ok = bytes.CutPrefix(rest, inputSeq); !ok {
		return keystroke{}, false
	}
	if in.clientSeq, rest, ok = fastInt(rest); !ok {
		return keystroke{}, false
	}
	next, ok := bytes.CutPrefix(rest, inputAction)
	if !ok {
		return keystroke{}, false
	}
	action := rest[len(`,"action":`):]
	rest = next
	if in.data, rest, ok = fastString(rest); !ok {
		return keystroke{}, false
	}
	if !bytes.Equal(rest, inputTail) {
		return keystroke{}, false
	}
	in.raw = action[:len(action)-len(`}}`)] // the action object, without what closes params and the message
	return in, true
}

// keystroke is a dispatchAction of terminal/input as fastInput reads it.
type keystroke struct {
	channel   string
	clientSeq int64
	data      string
	raw       json.RawMessage // the action, as sent
}

// fastString reads a JSON string at the start of b. One of printable ASCII
// without escapes is taken as is; one with escapes or other bytes is
// decoded by encoding/json (which also decides whether it is valid); a
// control character fails (it is not valid JSON).
func fastString(b []byte) (s string, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	plain := true
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			if plain {
				return string(b[1:i]), b[i+1:], true
			}
			if json.Unmarshal(b[:i+1], &s) != nil {
				return "", nil, false
			}
			return s, b[i+1:], true
		case c == '\\':
			plain = false
			i++ // the escaped byte, a quote or a backslash included
		case c < 0x20:
			return "", nil, false
		case c >= 0x80:
			plain = false
		}
	}
	return "", nil, false
}

// fastInt reads a JSON integer that fits an int64 at the start of b: an
// optional minus, then 0 or a digit 1–9 and at most 17 more digits; it
// fails on a fraction, an exponent or more digits (encoding/json decides).
func fastInt(b []byte) (n int64, rest []byte, ok bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	digits := i - start
	if digits == 0 || digits > 18 || (digits > 1 && b[start] == '0') {
		return 0, nil, false
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, nil, false
	}
	n, err := strconv.ParseInt(string(b[:i]), 10, 64)
	if err != nil {
		return 0, nil, false
	}
	return n, b[i:], true
}

// handleInput is handle for a frame fastInput decoded: what handle and
// notification do for a dispatchAction notification, with the action
// decoded already.
func (c *conn) handleInput(in keystroke) error {
	if c.lowered.Load() {
		return nil // a notification: no answer (see handle)
	}
	if err := c.pace(c.ctx, ahp.MethodDispatchAction); err != nil {
		return err // closing
	}
	if !c.initialized {
		c.log.Debug("notification before initialize ignored", "method", ahp.MethodDispatchAction)
		return nil
	}
	if in.channel == "" {
		c.log.Info("dropped malformed dispatchAction", "client", ahp.Clip(c.clientID))
		return nil
	}
	c.dispatchAction(ahp.Origin{ClientID: c.clientID, ClientSeq: in.clientSeq}, in.channel, ahp.Action{Type: ahp.TerminalInput, Data: in.data}, in.raw)
	return nil
}
