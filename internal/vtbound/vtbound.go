// Package vtbound bounds what one escape sequence can make a
// charmbracelet/x/vt emulator do. vt works through some counts one at a
// time (repeat a character n times, erase n cells, n tab stops…):
// ESC[999999999b alone holds the caller for about half an hour. Past what
// the screen holds a larger count changes nothing on it, so Clamp lowers
// the counts, in place, before vt's own handlers run on the same params.
// Both the server's screen model (terminals/screen) and the agent's plain
// text (agent.Plain) clamp their emulators with it.
package vtbound

import (
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// countFinals are the CSI sequences whose parameters are counts that vt
// works through one at a time or that never matter past the screen's size.
const countFinals = "@ABCDEFGILMPSTXZ`ade"

// Clamp registers the clamps on e. Handlers registered later run before
// them (vt calls the last registered first); every clamp returns false, so
// vt's own handler still runs, on the clamped params.
func Clamp(e *vt.Emulator) {
	for _, c := range countFinals {
		e.RegisterCsiHandler(int(c), func(p ansi.Params) bool {
			Counts(p, max(e.Width(), e.Height()))
			return false
		})
	}
	e.RegisterCsiHandler('b', func(p ansi.Params) bool {
		Repeat(p, e.Width(), e.Height())
		return false
	})
}

// Counts lowers every parameter of p above limit to limit.
func Counts(p ansi.Params, limit int) {
	for i, v := range p {
		if n := v.Param(0); n > limit {
			p[i] = ansi.Param(ansi.Parameter(limit, v.HasMore()))
		}
	}
}

// Repeat bounds REP's count: once a character has been repeated over every
// cell the screen is all that character whatever the count, and only where
// the cursor ends (the count modulo the width) still depends on it.
func Repeat(p ansi.Params, cols, rows int) {
	if len(p) == 0 {
		return
	}
	cells := cols * rows
	if n := p[0].Param(1); n > cells+cols {
		p[0] = ansi.Param(ansi.Parameter(cells+(n-cells)%cols, p[0].HasMore()))
	}
}
