package terminals

import (
	"strings"
	"unicode/utf8"

	"github.com/termhost/termhost/ahp"
)

// content is a terminal's bounded scrollback. It mirrors the AHP terminal
// reducer for content parts (§10.6) but keeps each part's text as a list of
// chunks, so appending is O(len(data)) and trimming drops chunks instead of
// copying the whole buffer.
type content struct {
	budget int // bytes of text kept at most
	size   int // bytes of text held
	parts  []*part
}

type part struct {
	ahp.Part          // metadata; Value/Output are built from chunks on demand
	chunks   []string // text of the part
	size     int
}

func newContent(budget int) *content { return &content{budget: budget} }

// appendData follows the reducer: into an incomplete command's output, else the
// tail unclassified part, else a new unclassified part.
func (c *content) appendData(data string) {
	var tail *part
	if n := len(c.parts); n > 0 {
		tail = c.parts[n-1]
	}
	if tail == nil || (tail.Type == ahp.PartCommand && tail.IsComplete) {
		tail = &part{Part: ahp.Part{Type: ahp.PartUnclassified}}
		c.parts = append(c.parts, tail)
	}
	if data != "" {
		if n := len(tail.chunks); n > 0 && len(tail.chunks[n-1]) < smallChunk {
			// Keystroke echoes arrive a byte at a time: merge small chunks so a
			// part holds at most about size/smallChunk of them.
			tail.chunks[n-1] += data
		} else {
			tail.chunks = append(tail.chunks, data)
		}
		tail.size += len(data)
		c.size += len(data)
	}
	c.trim()
}

// smallChunk is the size below which a part's last chunk takes the next
// data in (see appendData).
const smallChunk = 4 << 10

func (c *content) commandExecuted(a ahp.Action) {
	c.parts = append(c.parts, &part{Part: ahp.Part{Type: ahp.PartCommand, CommandID: a.CommandID,
		CommandLine: a.CommandLine, Timestamp: a.Timestamp}})
}

func (c *content) commandFinished(a ahp.Action) {
	for _, p := range c.parts {
		if p.Type == ahp.PartCommand && p.CommandID == a.CommandID {
			p.IsComplete, p.ExitCode, p.DurationMs = true, a.ExitCode, a.DurationMs
			return
		}
	}
}

func (c *content) clear() {
	c.parts, c.size = nil, 0
}

// apply updates the store for a terminal action (the content half of the reducer).
func (c *content) apply(a ahp.Action) {
	switch a.Type {
	case ahp.TerminalData:
		c.appendData(a.Data)
	case ahp.TerminalCommandExecuted:
		c.commandExecuted(a)
	case ahp.TerminalCommandFinished:
		c.commandFinished(a)
	case ahp.TerminalCleared:
		c.clear()
	}
}

// snapshot materialises the parts as AHP content.
func (c *content) snapshot() []ahp.Part {
	out := make([]ahp.Part, len(c.parts))
	for i, p := range c.parts {
		out[i] = p.Part
		text := strings.Join(p.chunks, "")
		if len(p.chunks) > 1 { // keep the joined string so the next snapshot is cheap
			p.chunks = []string{text}
		}
		if p.Type == ahp.PartCommand {
			out[i].Output = text
		} else {
			out[i].Value = text
		}
	}
	return out
}

// trim keeps the text within budget: drop whole parts from the front while more
// than one remains, then cut the head part down to about 80 % of the budget at a
// safe place (§7.7).
func (c *content) trim() {
	if c.budget <= 0 || c.size <= c.budget {
		return
	}
	for len(c.parts) > 1 && c.size > c.budget {
		c.size -= c.parts[0].size
		c.parts[0] = nil
		c.parts = c.parts[1:]
	}
	if c.size <= c.budget {
		return
	}
	head := c.parts[0]
	cut, rest := cutChunks(head.chunks, head.size, head.size-c.budget*8/10)
	head.chunks = rest
	c.size -= cut
	head.size -= cut
}

// cutChunks cuts the text held in chunks (size bytes) at safeCut(text, at),
// returning the bytes cut and the chunks of the rest. safeCut looks at most
// 256 bytes back and 4 KiB ahead, so only that window is assembled (and
// only when it spans chunks): trimming costs a few KiB, not the whole
// budget. When the window cannot decide (an escape sequence that runs past
// it), the whole text is joined.
func cutChunks(chunks []string, size, at int) (int, []string) {
	if at <= 0 {
		return 0, chunks
	}
	if at >= size {
		return size, nil
	}
	lo, hi := max(0, at-256), min(size, at+4096)
	window := textRange(chunks, lo, hi)
	local := safeCut(window, at-lo)
	if local == len(window) && hi < size {
		// Undecided inside the window: fall back to the whole text.
		text := strings.Join(chunks, "")
		cut := safeCut(text, at)
		return cut, []string{text[cut:]}
	}
	cut := lo + local
	off := 0
	for i, ch := range chunks {
		if cut < off+len(ch) {
			clear(chunks[:i]) // the backing array must not keep dropped text alive
			rest := chunks[i:]
			rest[0] = ch[cut-off:]
			return cut, rest
		}
		off += len(ch)
	}
	clear(chunks)
	return cut, nil
}

// textRange returns bytes [lo, hi) of the concatenated chunks: a substring
// of one chunk when it lies in one, else a copy.
func textRange(chunks []string, lo, hi int) string {
	var b []byte
	off := 0
	for _, ch := range chunks {
		end := off + len(ch)
		if end > lo && off < hi {
			from, to := max(lo, off)-off, min(hi, end)-off
			if b == nil && lo >= off && hi <= end {
				return ch[from:to]
			}
			if b == nil {
				b = make([]byte, 0, hi-lo)
			}
			b = append(b, ch[from:to]...)
		}
		if end >= hi {
			break
		}
		off = end
	}
	return string(b)
}

// safeCut moves a cut position forward to just after a newline within 4 KiB,
// else to a position outside any UTF-8 character and escape sequence.
func safeCut(s string, at int) int {
	if at <= 0 {
		return 0
	}
	if at >= len(s) {
		return len(s)
	}
	if i := strings.IndexByte(s[at:min(len(s), at+4096)], '\n'); i >= 0 {
		return at + i + 1
	}
	// Skip to the end of an escape sequence that starts shortly before at.
	if esc := strings.LastIndexByte(s[max(0, at-256):at], 0x1b); esc >= 0 {
		start := max(0, at-256) + esc
		if end := escapeEnd(s, start); end > at {
			at = end
		}
	}
	for at < len(s) && !utf8.RuneStart(s[at]) {
		at++
	}
	return at
}

// escapeEnd returns the index just past the escape sequence starting at s[i]
// (ESC), or len(s) if it does not end within the string.
func escapeEnd(s string, i int) int {
	j := i + 1
	if j >= len(s) {
		return len(s)
	}
	switch s[j] {
	case '[': // CSI: parameters and intermediates, then a final byte 0x40–0x7E
		for j++; j < len(s); j++ {
			if s[j] >= 0x40 && s[j] <= 0x7e {
				return j + 1
			}
		}
		return len(s)
	case ']', 'P', '_', '^', 'X': // string sequences end with BEL or ST
		for j++; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	default:
		return j + 1
	}
}
