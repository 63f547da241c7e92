// Package content is a terminal's bounded scrollback, shared by the server
// (terminals) and the Go client's mirror (client): one implementation of the
// content half of the AHP terminal reducer, trimmed at safe cuts (AHP lets
// server and clients trim content independently to bound memory).
package content

import (
	"encoding/json"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/termhost/termhost/ahp"
)

// Store is a terminal's bounded scrollback. It mirrors the AHP terminal
// reducer for content parts. Each part's text is one append-only
// buffer: appending is O(len(data)), trimming moves the part's start, and a
// snapshot costs O(parts), whatever the budget, because the strings it hands
// out share the buffer (bytes once written are never changed).
type Store struct {
	budget int // bytes of text kept at most
	size   int // bytes of text held
	parts  []*part
}

type part struct {
	ahp.Part        // metadata; Value/Output are built from text on demand
	text     []byte // append-only: bytes once written back strings handed out
	start    int    // bytes trimmed from the head of text
	shared   bool   // text's bytes were handed out (Snapshot): it is never reused
	// meta is the _meta of a command part's terminal/commandExecuted: not
	// part of the state (AHP's reducer leaves it out), kept for CommandMeta
	// as long as the part is.
	meta json.RawMessage
}

// str is the part's text: its bytes are never written over while they
// are text (appends go past them; a buffer is reused only if unshared).
func (p *part) str() string {
	if p.start == len(p.text) {
		return ""
	}
	return unsafe.String(&p.text[p.start], len(p.text)-p.start)
}

// len is the number of bytes of the part's text.
func (p *part) len() int { return len(p.text) - p.start }

// appendText appends to the part's text. When the buffer is full and its
// head has been trimmed, the live text moves to a buffer with as much room
// again instead of the dead head being grown along: each byte is copied
// about once more, and a part holds at most about twice its text.
func (p *part) appendText(data string) {
	if p.start > 0 && len(p.text)+len(data) > cap(p.text) {
		need := p.len() + len(data)
		p.moveText(need, 2*need)
	}
	p.text = append(p.text, data...)
}

// compact moves a trimmed part that is no longer appended to into a buffer
// of its size once its dead head is as long as its text.
func (p *part) compact() {
	if p.start > 0 && p.start >= len(p.text)/2 {
		p.moveText(p.len(), p.len())
	}
}

// moveText copies the live text to a buffer of about size bytes that
// holds at least need. Strings already handed out keep the old buffer
// alive only as long as they live; one never handed out goes to
// spareBuffers for the next move.
func (p *part) moveText(need, size int) {
	old := p.text
	p.text = append(spareBuffer(need, size), old[p.start:]...)
	p.start = 0
	if !p.shared {
		putSpare(old)
	}
	p.shared = false
}

// spareBuffers holds the buffers busy parts moved away from and never
// handed out: a part that is trimmed as it is appended to (a terminal
// flooding its scrollback) moves between two buffers instead of
// allocating one per move, which cost page faults, garbage collections
// and the scavenger's work on every megabyte of output. Idle, the pool
// empties at the next garbage collections.
var spareBuffers sync.Pool

const spareGranule = 64 << 10 // buffers are sized in these, so that sizes match

// spareBuffer returns an empty buffer of about size bytes, at least need:
// a spare one if it holds need and three quarters of size (sizes move with
// where trims cut) and no more than twice size (a big part's buffer is not
// to hold a small part's text), else a new one. A spare that does not fit
// is dropped rather than handed out again.
func spareBuffer(need, size int) []byte {
	if size < spareGranule {
		return make([]byte, 0, size)
	}
	size = (size + spareGranule - 1) / spareGranule * spareGranule
	if b, ok := spareBuffers.Get().(*[]byte); ok && cap(*b) >= max(need, size*3/4) && cap(*b) <= 2*size {
		return (*b)[:0]
	}
	return make([]byte, 0, size)
}

func putSpare(b []byte) {
	if cap(b) >= spareGranule {
		b = b[:0]
		spareBuffers.Put(&b)
	}
}

// New returns an empty store keeping at most budget bytes of text (0 or
// less: unbounded).
func New(budget int) *Store { return &Store{budget: budget} }

// FromParts returns a store holding parts (a snapshot's content), trimmed to
// budget. parts is not modified.
func FromParts(parts []ahp.Part, budget int) *Store {
	c := New(budget)
	for _, p := range parts {
		text := p.Text()
		np := &part{Part: p}
		np.Value, np.Output = "", ""
		np.text = []byte(text)
		c.parts = append(c.parts, np)
		c.size += len(text)
	}
	c.trim()
	return c
}

// Trim returns parts with the oldest text dropped so that at most budget
// bytes remain, cut as the store cuts. parts is not modified.
func Trim(parts []ahp.Part, budget int) []ahp.Part { return FromParts(parts, budget).Snapshot() }

// Size is the number of bytes of text held.
func (c *Store) Size() int { return c.size }

// appendData follows the reducer: into an incomplete command's output, else the
// tail unclassified part, else a new unclassified part.
func (c *Store) appendData(data string) {
	var tail *part
	if n := len(c.parts); n > 0 {
		tail = c.parts[n-1]
	}
	if tail == nil || (tail.Type == ahp.PartCommand && tail.IsComplete) {
		tail = &part{Part: ahp.Part{Type: ahp.PartUnclassified}}
		c.parts = append(c.parts, tail)
	}
	tail.appendText(data)
	c.size += len(data)
	c.trim()
}

func (c *Store) commandExecuted(a ahp.Action) {
	c.parts = append(c.parts, &part{Part: ahp.Part{Type: ahp.PartCommand, CommandID: a.CommandID,
		CommandLine: a.CommandLine, Timestamp: a.Timestamp}, meta: a.Meta})
}

func (c *Store) commandFinished(a ahp.Action) {
	for _, p := range c.parts {
		if p.Type == ahp.PartCommand && p.CommandID == a.CommandID {
			p.IsComplete, p.ExitCode, p.DurationMs = true, a.ExitCode, a.DurationMs
			return
		}
	}
}

func (c *Store) clear() {
	c.parts, c.size = nil, 0
}

// Apply updates the store for a terminal action (the content half of the reducer).
func (c *Store) Apply(a ahp.Action) {
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

// Snapshot materialises the parts as AHP content, in O(parts).
func (c *Store) Snapshot() []ahp.Part {
	out := make([]ahp.Part, len(c.parts))
	for i, p := range c.parts {
		out[i] = p.Part
		p.shared = true
		if p.Type == ahp.PartCommand {
			out[i].Output = p.str()
		} else {
			out[i].Value = p.str()
		}
	}
	return out
}

// CommandMeta is the _meta of the terminal/commandExecuted of each
// command part held that had one, by commandId (nil when none had): what a
// joiner's snapshot carries beside the state, which has no place for it.
func (c *Store) CommandMeta() map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for _, p := range c.parts {
		if p.Type == ahp.PartCommand && p.meta != nil {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[p.CommandID] = p.meta
		}
	}
	return out
}

// SetCommandMeta gives the command parts held the _meta of their
// terminal/commandExecuted, by commandId (a store rebuilt from a snapshot,
// FromParts, has none). Ids of parts not held are ignored.
func (c *Store) SetCommandMeta(meta map[string]json.RawMessage) {
	for _, p := range c.parts {
		if m, ok := meta[p.CommandID]; ok && p.Type == ahp.PartCommand {
			p.meta = m
		}
	}
}

// trim keeps the text within budget: drop whole parts from the front while more
// than one remains, then cut the head part down to about 80 % of the budget at a
// safe place (see safeCut). safeCut looks at most 256 bytes back and 4 KiB ahead
// of the cut, so trimming costs that much, not the budget.
func (c *Store) trim() {
	if c.budget <= 0 || c.size <= c.budget {
		return
	}
	for len(c.parts) > 1 && c.size > c.budget {
		c.size -= c.parts[0].len()
		c.parts[0] = nil
		c.parts = c.parts[1:]
	}
	if c.size <= c.budget {
		return
	}
	head := c.parts[0]
	text := head.str()
	cut := safeCut(text, len(text)-c.budget*8/10)
	head.start += cut
	c.size -= cut
	if len(c.parts) > 1 { // the tail is compacted as it is appended to
		head.compact()
	}
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

// Reduce applies a to a terminal's state whose content lives in c: the
// content actions go to the store (O(len(data)), trimmed to the budget), any
// other to ahp.ReduceTerminal. The returned state's Content is left as it
// was; Snapshot materialises it.
func (c *Store) Reduce(st ahp.TerminalState, a ahp.Action) ahp.TerminalState {
	switch a.Type {
	case ahp.TerminalData, ahp.TerminalCommandFinished, ahp.TerminalCleared:
		c.Apply(a)
	case ahp.TerminalCommandExecuted:
		c.Apply(a)
		yes := true
		st.SupportsCommandDetection = &yes
	default:
		st = ahp.ReduceTerminal(st, a)
	}
	return st
}
