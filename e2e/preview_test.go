//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestSidebarScreenPreview: hovering a terminal's row in
// the side bar shows its current screen, from the server's screen model
// (on by default): what a hidden terminal printed, a full-screen program's
// screen, updated while the pointer stays; it goes when the pointer leaves.
func TestSidebarScreenPreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	shown, hidden := p.newTerminal(), p.newTerminal()
	p.showAndType(hidden, "printf 'PREVIEW-%s\\n' OK"+kb.Enter)
	p.waitJS("the output", fmt.Sprintf(`(window.__termhost.buffer(%q) || '').includes('PREVIEW-OK')`, hidden), 10*time.Second)
	p.showAndType(shown, "echo here"+kb.Enter)

	row := fmt.Sprintf(`#terminals-view .terminal-item[data-terminal=%q]`, hidden)
	preview := `document.querySelector('pre.screen-preview')?.textContent ?? ''`
	hover := func() {
		var x, y float64
		p.eval(fmt.Sprintf(`(r => r.x + r.width / 2)(document.querySelector(%q).getBoundingClientRect())`, row), &x)
		p.eval(fmt.Sprintf(`(r => r.y + r.height / 2)(document.querySelector(%q).getBoundingClientRect())`, row), &y)
		p.do(chromedp.MouseEvent(chromedp.MouseMoved, x, y))
	}

	p.run(t, "a hidden terminal's screen", func(t *testing.T) {
		hover()
		p.waitJS("the preview", fmt.Sprintf(`(%s).includes('PREVIEW-OK')`, preview), 5*time.Second)
		if s := p.evalString(preview); strings.Contains(s, "echo here") {
			t.Errorf("the preview of the hidden terminal shows the shown one's: %q", s)
		}
		p.shot("sidebar-preview")
	})
	p.run(t, "readable and inside the window", func(t *testing.T) { // a 9 px preview was unreadable
		var got struct{ Font, Left, Right, Top, Bottom, W, H float64 }
		p.eval(`(e => { const r = e.getBoundingClientRect(); return {Font: parseFloat(getComputedStyle(e).fontSize), Left: r.left, Right: r.right, Top: r.top, Bottom: r.bottom, W: innerWidth, H: innerHeight}; })(document.querySelector('pre.screen-preview'))`, &got)
		if got.Font < 12 {
			t.Errorf("preview font %.1f px, want at least 12", got.Font)
		}
		if got.Left < 0 || got.Top < 0 || got.Right > got.W || got.Bottom > got.H {
			t.Errorf("preview at %+v, outside the window", got)
		}
	})
	p.run(t, "updates while hovered", func(t *testing.T) {
		p.eval(fmt.Sprintf(`(window.__termhost.type('printf "\\033[?1049h\\033[HFULL-%%s" SCREEN\r', %q), true)`, hidden), nil)
		p.waitJS("the full-screen program's screen", fmt.Sprintf(`(%s).startsWith('FULL-SCREEN')`, preview), 5*time.Second)
		if s := p.evalString(preview); strings.Contains(s, "PREVIEW-OK") {
			t.Errorf("the alternate screen's preview still shows the main screen: %q", s)
		}
	})
	p.run(t, "gone when the pointer leaves", func(t *testing.T) {
		p.do(chromedp.MouseEvent(chromedp.MouseMoved, 600, 400))
		p.waitJS("no preview", `!document.querySelector('pre.screen-preview')`, 5*time.Second)
	})
}
