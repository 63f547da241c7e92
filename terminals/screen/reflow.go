package screen

import (
	"bytes"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// After a change of size, xterm.js rewraps the lines of its main screen
// that wrapped (reflow) where vt only cuts or pads each row, and vt keeps no
// record of which rows wrapped. So the model keeps the output it applied
// since it started (up to maxReplay bytes) and, on a resize of the main
// screen, builds its emulator anew at the new size from that output: plain
// text wraps at the new width as xterm.js rewraps it.
//
// The alternate screen is not reflowed by xterm.js: there vt's resize is
// right, and the main screen under it is rebuilt once the program leaves it.
// Where the model cannot replay (more output than maxReplay, or a replay
// over the feed deadline), a change of columns makes its main screen
// inexact (State.Exact false but on the alternate screen) until the next
// `clear` (see keepReplay): joiners get the history alone, as when it is
// behind, and previews show vt's rows.
//
// Known differences: xterm.js leaves the line under the cursor as it is
// (its reflowCursorLine option is off) where a replay rewraps it too; the
// shell redraws that line on SIGWINCH anyway. Output written for the old
// size with absolute cursor moves lands where the new size puts it.

// maxReplay is the most output kept for a replay; past it the model keeps
// none until the next clear.
const maxReplay = 512 << 10

// clearAll is what `clear` prints: home, erase the screen and the
// scrollback. After it the screen follows from what comes next alone, so
// the output kept for a replay can start there (see keepReplay).
var clearAll = []byte("\x1b[H\x1b[2J\x1b[3J")

// keepReplay adds applied output (just fed to the emulator) to what a
// resize replays. Past maxReplay bytes it keeps none, until the main screen
// is cleared with its scrollback: the output kept then starts there, and
// the screen is exact again.
func (m *Model) keepReplay(b []byte) {
	if i := lastClear(b); i >= 0 && len(b)-i <= maxReplay &&
		m.emu != nil && !m.emu.vt.IsAltScreen() && !mayToggleAltScreen(string(b[i:])) {
		m.replay = append(m.replay[:0], b[i:]...)
		m.noReplay, m.unflowed, m.cut = false, false, true
		return
	}
	if m.noReplay {
		return
	}
	if len(m.replay)+len(b) > maxReplay {
		m.replay, m.noReplay = nil, true
		return
	}
	m.replay = append(m.replay, b...)
}

// lastClear returns where the last clearAll in b starts, or -1. It is on
// every applied chunk's path, so it searches forward for the clear's tail
// from its 'J' (rare in output, where ESC is everywhere): bytes.Index then
// skips ahead with vector instructions, where bytes.LastIndex hashes every
// byte (a tenth of the server's CPU in a flood).
func lastClear(b []byte) int {
	head := len(clearAll) - len(clearTail)
	last := -1
	for off := head; off < len(b); {
		i := bytes.Index(b[off:], clearTail)
		if i < 0 {
			break
		}
		if start := off + i - head; bytes.Equal(b[start:start+head], clearAll[:head]) {
			last = start
		}
		off += i + 1
	}
	return last
}

// clearTail is the end of clearAll from its first 'J' on.
var clearTail = clearAll[bytes.IndexByte(clearAll, 'J'):]

// Modes a replay that starts at a clear (cut) cannot take from the
// emulator's current state: they change where output lands, and may have
// been other when the screen was cleared. The others (cursor keys, mouse,
// bracketed paste…) only change what the terminal sends.
var layoutModes = map[ansi.Mode]bool{
	ansi.ModeAltScreen: true, ansi.ModeAltScreenSaveCursor: true, ansi.ModeSaveCursor: true,
	ansi.DECMode(47): true, ansi.ModeOrigin: true, ansi.ModeAutoWrap: true,
	ansi.ModeInsertReplace: true, ansi.ModeLineFeedNewLine: true,
}

// preamble is the state a replay starting at a cut takes from before it:
// the modes that do not change the layout, and the title.
func (e *emulator) preamble() []byte {
	var b []byte
	for _, m := range e.order {
		switch {
		case layoutModes[m]:
		case e.modes[m]:
			b = append(b, ansi.SetMode(m)...)
		default:
			b = append(b, ansi.ResetMode(m)...)
		}
	}
	if e.title != "" {
		b = append(b, ansi.SetWindowTitle(e.title)...)
	}
	return b
}

// dropReplay forgets the output kept: what the model applies next does not
// follow from it (the queue overflowed, or the model gave up).
func (m *Model) dropReplay() { m.replay, m.noReplay, m.stale, m.cut = nil, true, false, false }

// resize changes the screen's size as xterm.js does: a replay for the main
// screen, vt's resize for the alternate one.
func (m *Model) resize(cols, rows int) {
	e := m.emulator()
	newCols := cols != m.cols
	changed := newCols || rows != m.rows
	m.cols, m.rows = cols, rows
	switch {
	case changed && !e.vt.IsAltScreen():
		if m.rebuild() {
			return
		}
		m.unflowed = m.unflowed || newCols
	case newCols:
		m.stale = true // the main screen under it: rebuilt on leaving it
	}
	e.resize(cols, rows)
}

// afterOutput rebuilds the main screen that a resize under the alternate
// screen left as vt cut it, once the program has left the alternate screen.
func (m *Model) afterOutput() {
	if m.stale && m.emu != nil && !m.emu.vt.IsAltScreen() {
		m.stale = false
		m.unflowed = m.unflowed || !m.rebuild()
	}
}

// rebuild replaces the emulator by one at m.cols×m.rows fed the kept
// output. It fails, leaving the emulator as it was, when nothing is kept or
// the replay takes longer than a feed may (then nothing is kept any more).
func (m *Model) rebuild() bool {
	if m.noReplay {
		return false
	}
	n := newEmulator(m.cols, m.rows)
	n.now = m.now
	if m.cut && m.emu != nil {
		n.write(m.emu.preamble())
	}
	n.deadline = feedDeadline(m.now(), len(m.replay))
	n.feed(m.replay)
	n.deadline = time.Time{}
	if n.overrun {
		m.dropReplay()
		return false
	}
	if m.emu != nil {
		m.emu.close()
	}
	m.emu, m.checkpoint = n, nil
	return true
}
