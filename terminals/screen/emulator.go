package screen

import (
	"bytes"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"github.com/termhost/termhost/internal/vtbound"
)

// emulator is a vt.Emulator plus the state vt keeps but does not expose:
// the modes, the scroll region and the title (tracked from its callbacks
// and handlers).
type emulator struct {
	vt      *vt.Emulator
	modes   map[ansi.Mode]bool
	order   []ansi.Mode // modes in the order first seen, for a stable Redraw
	title   string
	margins [2]region // scroll region of the main and the alternate screen
	// deadline, when set, bounds the time write may take (see feedTime);
	// overrun: it was passed, the rest of the output was left out.
	deadline time.Time
	now      func() time.Time
	overrun  bool
}

// region is a scroll region, rows top..bottom (1-based, inclusive); zero
// is the whole screen.
type region struct{ top, bottom int }

func newEmulator(cols, rows int) *emulator {
	e := &emulator{vt: vt.NewEmulator(cols, rows), modes: map[ansi.Mode]bool{}, now: time.Now}
	e.vt.SetScrollbackSize(1) // only the screen matters; 0 would mean vt's default of 10 000 lines
	e.vt.SetCallbacks(vt.Callbacks{
		Title:       func(t string) { e.title = clip(t, maxTitle) },
		EnableMode:  func(m ansi.Mode) { e.setMode(m, true) },
		DisableMode: func(m ansi.Mode) { e.setMode(m, false) },
	})
	// Seen before vt's own handlers, which still run (false = not handled).
	e.vt.RegisterCsiHandler('r', func(p ansi.Params) bool { e.setMargins(p); return false })
	e.vt.RegisterEscHandler('c', func() bool { e.margins = [2]region{}; return false }) // RIS
	// Counts past what the screen holds are clamped (ESC[999999999b alone
	// would hold the model's goroutine for half an hour).
	vtbound.Clamp(e.vt)
	// vt answers queries (device attributes, cursor position…) into a pipe
	// that blocks until read. Nobody here answers the program (the real
	// clients do): with the pipe closed, vt's answers fail at once.
	if pw, ok := e.vt.InputPipe().(*io.PipeWriter); ok {
		_ = pw.Close()
	} else {
		panic("screen: vt's input pipe is not an io.PipeWriter")
	}
	return e
}

func (e *emulator) setMode(m ansi.Mode, on bool) {
	if _, seen := e.modes[m]; !seen {
		e.order = append(e.order, m)
	}
	e.modes[m] = on
}

// setMargins follows DECSTBM as vt applies it.
func (e *emulator) setMargins(p ansi.Params) {
	rows := e.vt.Height()
	top, _, _ := p.Param(0, 1)
	bottom, _, _ := p.Param(1, rows)
	top, bottom = max(top, 1), min(bottom, rows)
	if bottom < 1 {
		bottom = rows
	}
	if top >= bottom {
		return // vt ignores it too
	}
	r := region{top, bottom}
	if top == 1 && bottom == rows {
		r = region{}
	}
	e.margins[e.screenIndex()] = r
}

func (e *emulator) screenIndex() int {
	if e.vt.IsAltScreen() {
		return 1
	}
	return 0
}

// write feeds b to vt. With a deadline it writes in pieces of about
// writeSlice bytes, cut before an ASCII byte (which never extends a
// character, so vt sees the same characters), and stops at the deadline.
func (e *emulator) write(b []byte) {
	if e.deadline.IsZero() {
		_, _ = e.vt.Write(b)
		return
	}
	for len(b) > 0 && !e.overrun {
		n := len(b)
		if n > writeSlice {
			n = writeSlice + bytes.IndexFunc(b[writeSlice:], func(r rune) bool { return r < utf8.RuneSelf })
			if n < writeSlice {
				n = len(b)
			}
		}
		_, _ = e.vt.Write(b[:n])
		b = b[n:]
		if e.now().After(e.deadline) {
			e.overrun = true
		}
	}
}

func (e *emulator) resize(cols, rows int) {
	e.vt.Resize(cols, rows)
	e.margins = [2]region{} // vt resets both screens' regions
}

func (e *emulator) close() {}

// lines returns the screen as text, each cell's clipped to maxCellText.
func (e *emulator) lines() []string {
	out := make([]string, e.vt.Height())
	for y := range out {
		l := e.line(y)
		for x := range l {
			l[x].Content = clip(l[x].Content, maxCellText)
		}
		out[y] = strings.TrimRight(l.String(), " ")
	}
	return out
}

func (e *emulator) line(y int) uv.Line {
	l := make(uv.Line, e.vt.Width())
	for x := range l {
		if c := e.vt.CellAt(x, y); c != nil {
			l[x] = *c
		}
	}
	return l
}
