package client

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// QueryFilter removes terminal queries from replayed output (a snapshot's
// content, a reconnect replay) before it reaches a local terminal. The local
// terminal answers every query it parses (DA, DSR, DECRQM, XTVERSION, OSC
// colour and clipboard queries, DECRQSS, XTGETTCAP …) on its input, which
// termhost attach forwards to the remote shell: answers to old queries would
// be typed into whatever runs now. Live output is passed through untouched,
// so a program running now still gets its answers.
//
// Sequences may be split across chunks: an incomplete one at the end of a
// replayed chunk is held until the next chunk. The zero value is ready.
type QueryFilter struct {
	held []byte
}

// maxHeld bounds an incomplete sequence held between replayed chunks; queries
// are short, so a longer one is written out as it is.
const maxHeld = 64 << 10

// Replay returns chunk without the queries in it (with what an earlier chunk
// left incomplete in front).
func (f *QueryFilter) Replay(chunk string) string {
	buf := append(f.held, chunk...)
	f.held = nil
	var out strings.Builder
	out.Grow(len(buf))
	for i := 0; i < len(buf); {
		j := bytes.IndexAny(buf[i:], "\x1b\x05")
		if j < 0 {
			out.Write(buf[i:])
			break
		}
		out.Write(buf[i : i+j])
		i += j
		if buf[i] == ansi.ENQ { // answerback request
			i++
			continue
		}
		seq, complete := nextSequence(buf[i:])
		if !complete {
			if len(buf)-i > maxHeld {
				out.Write(buf[i:])
			} else {
				f.held = slices.Clone(buf[i:])
			}
			break
		}
		if !isQuery(seq) {
			out.Write(seq)
		}
		i += len(seq)
	}
	return out.String()
}

// Live returns chunk as it is, after anything a replayed chunk left
// incomplete: a sequence completed by live output is live.
func (f *QueryFilter) Live(chunk string) string {
	if len(f.held) == 0 {
		return chunk
	}
	s := string(f.held) + chunk
	f.held = nil
	return s
}

// nextSequence splits the escape sequence at the start of b (which starts
// with ESC) off the rest, using the ansi package's decoder (without a
// Parser: its parameter collection indexes past its buffer on a sequence
// with more than 32 parameters). complete is false when b ends before the
// sequence does.
func nextSequence(b []byte) (seq []byte, complete bool) {
	seq, _, n, state := ansi.DecodeSequence(b, ansi.NormalState, nil)
	if n == len(b) && state != ansi.NormalState {
		return nil, false
	}
	// The decoder ends a string sequence at an ESC that does not start ST;
	// at the end of b the next chunk may still bring the backslash.
	if isString(seq) && n == len(b)-1 && b[n] == ansi.ESC {
		return nil, false
	}
	return seq, true
}

func isString(seq []byte) bool {
	return len(seq) > 1 && seq[0] == ansi.ESC && strings.IndexByte("]P_^X", seq[1]) >= 0
}

// isQuery reports whether a terminal answers seq on its input.
func isQuery(seq []byte) bool {
	if len(seq) < 2 {
		return false
	}
	body := seq[2:]
	switch seq[1] {
	case '[':
		return csiQuery(body)
	case ']':
		return oscQuery(stringData(body))
	case 'P':
		return dcsQuery(stringData(body))
	case '_':
		return apcQuery(stringData(body))
	case 'Z':
		return len(seq) == 2 // DECID, answered like DA
	}
	return false
}

// csiKey identifies a control sequence: private prefix, intermediates and
// final byte.
type csiKey struct {
	prefix byte
	inter  string
	final  byte
}

// csiQueries are the control sequences every compliant terminal answers,
// whatever their parameters.
var csiQueries = map[csiKey]string{
	{0, "", 'c'}:    "DA1",
	{'>', "", 'c'}:  "DA2",
	{'=', "", 'c'}:  "DA3",
	{0, "", 'n'}:    "DSR",
	{'?', "", 'n'}:  "DEC DSR",
	{0, "$", 'p'}:   "DECRQM",
	{'?', "$", 'p'}: "DECRQM (DEC modes)",
	{'>', "", 'q'}:  "XTVERSION",
	{0, "", 'x'}:    "DECREQTPARM",
	{'?', "", 'u'}:  "kitty keyboard flags",
	{'?', "", 'm'}:  "XTQMODKEYS",
	{'?', "", 'S'}:  "XTSMGRAPHICS",
	{0, "$", 'w'}:   "DECRQPSR",
	{0, "$", 'u'}:   "DECRQTSR",
	{0, "&", 'u'}:   "DECRQUPSS",
	{0, "*", 'y'}:   "DECRQCRA",
	{0, "#", '|'}:   "XTREPORTSGR",
}

// windowReports are the XTWINOPS (CSI Ps t) operations that answer.
var windowReports = map[string]bool{"11": true, "13": true, "14": true, "15": true, "16": true, "18": true, "19": true, "20": true, "21": true}

// csiQuery classifies the bytes after ESC [ (ending with the final byte;
// sequences the decoder cut short never end with one).
func csiQuery(b []byte) bool {
	if len(b) == 0 || b[len(b)-1] < '@' || b[len(b)-1] > '~' {
		return false
	}
	k := csiKey{final: b[len(b)-1]}
	b = b[:len(b)-1]
	if len(b) > 0 && b[0] >= '<' && b[0] <= '?' {
		k.prefix, b = b[0], b[1:]
	}
	i := len(b)
	for i > 0 && b[i-1] >= 0x20 && b[i-1] <= 0x2f {
		i--
	}
	k.inter, b = string(b[i:]), b[:i]
	if _, ok := csiQueries[k]; ok {
		return true
	}
	if k == (csiKey{0, "", 't'}) {
		first, _, _ := strings.Cut(string(b), ";")
		return windowReports[strings.TrimLeft(first, "0")]
	}
	return false
}

// stringData is the payload of an OSC, DCS or APC without its terminator.
func stringData(b []byte) string {
	s := string(b)
	for _, st := range []string{"\x1b\\", "\a", "\x9c"} {
		if t, ok := strings.CutSuffix(s, st); ok {
			return t
		}
	}
	return s
}

// oscQuery: colour queries (OSC 4, 5, 10–19 with a "?" in place of a
// colour; kitty's OSC 21 key=?) and clipboard reads (OSC 52;<sel>;?). An OSC
// cut short by ESC counts too: xterm acts on it.
func oscQuery(data string) bool {
	fields := strings.Split(data, ";")
	cmd, err := strconv.Atoi(fields[0])
	if err != nil {
		return false
	}
	rest := fields[1:]
	switch {
	case cmd == 4 || cmd == 5 || (cmd >= 10 && cmd <= 19):
		return slices.Contains(rest, "?")
	case cmd == 52:
		return len(rest) >= 2 && rest[1] == "?"
	case cmd == 21:
		return slices.ContainsFunc(rest, func(f string) bool { return strings.HasSuffix(f, "=?") })
	}
	return false
}

// dcsQuery: DECRQSS (DCS $ q …) and XTGETTCAP (DCS + q …). Sixel (DCS … q
// without an intermediate) is not one.
func dcsQuery(data string) bool {
	i := 0
	for i < len(data) && strings.IndexByte("0123456789;:<=>?", data[i]) >= 0 {
		i++
	}
	rest := data[i:]
	return strings.HasPrefix(rest, "$q") || strings.HasPrefix(rest, "+q")
}

// apcQuery: a kitty graphics protocol query (APC G a=q,… ; …).
func apcQuery(data string) bool {
	ctl, ok := strings.CutPrefix(data, "G")
	if !ok {
		return false
	}
	ctl, _, _ = strings.Cut(ctl, ";")
	return slices.Contains(strings.Split(ctl, ","), "a=q")
}
