//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// frameGaps records, in the page, the longest time between two animation
// frames since the last reset (window.__gaps.reset()): a frame that
// does not come is a tab that does not respond. It starts once the page
// has loaded, so the loading of the app itself is not counted.
const frameGaps = `(() => {
  const g = window.__gaps = { max: 0, last: 0, reset() { g.max = 0; g.last = 0; } };
  const tick = now => { if (g.last) g.max = Math.max(g.max, now - g.last); g.last = now; requestAnimationFrame(tick); };
  const start = () => requestAnimationFrame(tick);
  if (document.readyState === 'complete') start(); else addEventListener('load', start);
})();`

// costly prints the sequences whose counts xterm.js works through one at a
// time or allocates by (the first froze a tab for 3.6 s, four of the
// second a page load for 38 s), each at 2^31-1 too, then a marker. With
// counts of %[1]s, %[2]s: the same, bounded as on an 80×24 screen (REP:
// the screen full, and the cursor where it would be).
func costly(rep10M, rep30M, rep2G, count, marker string) string {
	return fmt.Sprintf(`printf 'x\e[%[1]sbx\e[%[2]sbx\e[%[2]sbx\e[%[2]sbx\e[%[2]sb'; `+
		`printf 'x\e[%[3]sb\e[%[4]sL\e[%[4]sM\e[%[4]sS\e[%[4]sT\e[%[4]sI\e[%[4]sZ'; `+
		`printf '\e[%[4]s@\e[%[4]sP\e[%[4]sX\e[%[4]s @\e[%[4]s A\e[%[4]s\x27}\e[%[4]s\x27~'; `+
		`clear; echo %[5]s-''done`+"\r", rep10M, rep30M, rep2G, count, marker)
}

// TestCostlyOutputKeepsTabResponsive: while a terminal prints escape
// sequences with huge counts, and when a page load replays them from
// history, the tab keeps drawing frames, not much later than the same
// sequences with counts already within the screen (the work the bounded
// ones leave) take, printed and replayed. Without the bound the tab hung
// for minutes.
func TestCostlyOutputKeepsTabResponsive(t *testing.T) {
	// On a quiet machine frames come within 100 ms (the gaps are logged);
	// on one busy enough to stretch that (CI runs suites side by side), the
	// test allows 1 s, or three times the gaps of the same output with its
	// counts already within the screen, plus 100 ms: the replay of the huge
	// counts also replays the bounded ones printed before them, twice its
	// twin's work. Without the bound the tab hung for minutes.
	const maxGap, maxStall = 100.0, 1000.0 // ms
	e := newEnv(t)
	p := e.newPage("costly")
	p.addInitScript(frameGaps)
	p.open("/")
	id := p.newTerminal()

	// longest runs cmd and returns the longest gap between frames until its
	// marker is on screen and drawn.
	longest := func(what, cmd, marker string, run func()) float64 {
		p.eval(`(window.__gaps.reset(), true)`, nil)
		run()
		p.waitJS(what, fmt.Sprintf(`(window.__termhost.buffer(%q) || '').includes(%q)`, id, marker+"-done"), 30*time.Second)
		p.eval(`window.__termhost.drained().then(() => true)`, nil)
		// Two more frames: a handler still running holds back the next one.
		p.eval(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, nil)
		var ms float64
		p.eval(`window.__gaps.max`, &ms)
		return ms
	}
	typeCmd := func(cmd string) func() {
		return func() { p.eval(fmt.Sprintf(`(window.__termhost.type(%q, %q), true)`, cmd, id), nil) }
	}

	// The same work with the counts the screen bounds them to.
	var size struct{ Cols, Rows int }
	p.eval(fmt.Sprintf(`(t => ({cols: t.cols, rows: t.rows}))(window.__termhost.view(%q).term)`, id), &size)
	cells := size.Cols * size.Rows
	rep := func(n int) string { return fmt.Sprint(cells + (n-cells)%size.Cols) }
	reload := func() {
		p.do(chromedp.Reload())
		p.waitOnline()
		p.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, id), nil)
	}
	within := costly(rep(10000000), rep(30000000), rep(1<<31-1), fmt.Sprint(max(size.Cols, size.Rows)), "within")
	base := longest("the output with bounded counts", within, "within", typeCmd(within))
	baseReplayed := longest("the output with bounded counts replayed", within, "within", reload)

	huge := costly("10000000", "30000000", "2147483647", "2147483647", "costly")
	live := longest("the costly output", huge, "costly", typeCmd(huge))
	replayed := longest("the costly output replayed", huge, "costly", reload)

	t.Logf("%d×%d: longest frame gap printing counts within the screen %.0f ms (replayed %.0f ms), huge counts %.0f ms (replayed %.0f ms)",
		size.Cols, size.Rows, base, baseReplayed, live, replayed)
	for _, c := range []struct {
		what      string
		got, base float64
	}{{"while the terminal printed", live, base}, {"on a page load replaying the output", replayed, baseReplayed}} {
		if limit := max(maxStall, 3*c.base+maxGap); c.got > limit {
			t.Errorf("a frame came %.0f ms after the one before %s, want < %.0f ms (bounded counts: %.0f ms)", c.got, c.what, limit, c.base)
		}
	}
}
