//go:build e2e

package e2e

// The workbench on a 390×844 phone (touch, 3× pixels) —
// the side bar a drawer, a status bar whose items never overlap, the
// on-screen key row, a tap anywhere in the terminal focusing it, a large
// terminal sized elsewhere kept legible and pannable — and the desktop
// layout (1400×900) as it was. With -args -screenshots=DIR,
// TestLayoutScreenshots writes the phone and desktop layouts, light and
// dark, to DIR (docs/screenshots).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/termhost/termhost/ahp"
)

var screenshotsDir = flag.String("screenshots", "", "TestLayoutScreenshots writes phone-*.png and desktop-*.png here (e.g. ../docs/screenshots)")

// phone emulates a 390×844 phone with touch (also for pages already loaded:
// the layout follows the viewport).
func (p *page) phone() {
	p.t.Helper()
	p.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
	p.nextFrames()
}

// nextFrames waits until the page has laid out and painted twice (resize
// observers have run).
func (p *page) nextFrames() {
	p.t.Helper()
	p.eval(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, nil)
}

// step runs f as the named subtest with the page reporting to it.
func (p *page) step(t *testing.T, name string, f func(t *testing.T)) bool {
	return t.Run(name, func(t *testing.T) {
		saved := p.t
		p.t = t
		defer func() { p.t = saved }()
		f(t)
	})
}

// rect is an element's bounding box.
type rect struct {
	ID                       string
	Left, Right, Top, Bottom float64
}

// visibleRect is the bounding box of the first element matching sel that is
// displayed, or nil.
func (p *page) visibleRect(sel string) *rect {
	p.t.Helper()
	var r *rect
	p.eval(fmt.Sprintf(`(() => { const e = [...document.querySelectorAll(%q)].find(e => e.getClientRects().length > 0 && getComputedStyle(e).visibility === 'visible'); if (!e) return null; const r = e.getBoundingClientRect(); return {ID: e.id, Left: r.left, Right: r.right, Top: r.top, Bottom: r.bottom}; })()`, sel), &r)
	return r
}

const (
	drawerOpen   = `(s => getComputedStyle(s).visibility === 'visible' && s.getBoundingClientRect().left >= 0)(document.getElementById('sidebar'))`
	drawerClosed = `(s => getComputedStyle(s).visibility === 'hidden' && s.getBoundingClientRect().right <= 0)(document.getElementById('sidebar'))`
)

// terminalFocused is JS: the terminal id has the keyboard.
func terminalFocused(id string) string {
	return fmt.Sprintf(`document.activeElement === window.__termhost.view(%q).term.textarea`, id)
}

// checkStatusBar fails if two visible status bar items overlap or one is
// outside the viewport.
func (p *page) checkStatusBar(t *testing.T, what string) {
	t.Helper()
	var items []rect
	var width float64
	p.eval(`[...document.querySelectorAll('#statusbar .statusbar-item')].filter(e => e.getClientRects().length > 0).map(e => { const r = e.getBoundingClientRect(); return {ID: e.id, Left: r.left, Right: r.right, Top: r.top, Bottom: r.bottom}; })`, &items)
	p.eval(`innerWidth`, &width)
	if len(items) < 2 {
		t.Fatalf("%s: visible status bar items %v, want the host and connection at least", what, items)
	}
	for i, a := range items {
		if a.Left < 0 || a.Right > width+0.5 {
			t.Errorf("%s: status item %s spans %.1f…%.1f, outside the viewport 0…%.0f", what, a.ID, a.Left, a.Right, width)
		}
		for _, b := range items[i+1:] {
			if a.Left < b.Right-0.5 && b.Left < a.Right-0.5 {
				t.Errorf("%s: status items %s (%.1f…%.1f) and %s (%.1f…%.1f) overlap", what, a.ID, a.Left, a.Right, b.ID, b.Left, b.Right)
			}
		}
	}
}

// tapKey taps a key of the on-screen key row.
func (p *page) tapKey(key string) {
	p.t.Helper()
	p.do(chromedp.Tap(chromedp.CSS(fmt.Sprintf(`.key-row-key[data-key=%q]`, key))))
}

// createSizedTerminal creates terminal id claimed (and so sized) by the CLI
// client, cols×rows, with a ruler of its width on screen.
func createSizedTerminal(t *testing.T, cli *wsClient, id string, cols, rows int) {
	t.Helper()
	ch, snap := cli.CreateTerminal(id, "e2e-cli", map[string]any{"cols": cols, "rows": rows})
	subscribed, err := json.Marshal(map[string]any{"snapshot": snap})
	if err != nil {
		t.Fatal(err)
	}
	waitPrompt(t, cli, ch, subscribed)
	cli.Dispatch(ch, map[string]any{"type": "terminal/input", "data": fmt.Sprintf("clear; for i in $(seq 1 %d); do printf '%%.0s1234567890' $(seq 1 %d); echo; done\r", rows/2, cols/10)})
	cli.WaitAction("the ruler's command to finish", func(env ahp.Envelope) bool {
		return env.Channel == ch && env.Action.Type == "terminal/commandFinished"
	})
}

func TestPhoneLayout(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	cli := e.cliClient("e2e-cli")
	createSizedTerminal(t, cli, "big", 130, 49)
	createSizedTerminal(t, cli, "small", 40, 5)
	p := e.newPage("phone")
	p.phone()
	p.login()
	id := p.newTerminal()

	p.step(t, "terminal has the full width, side bar hidden", func(t *testing.T) {
		p.waitJS("the drawer closed", drawerClosed, 5*time.Second)
		if r := p.visibleRect("#editor"); r == nil || r.Left != 0 || r.Right != 390 {
			t.Errorf("editor area = %+v, want 0…390", r)
		}
		if r := p.visibleRect(".drawer-toggle"); r == nil {
			t.Errorf("no visible menu button")
		}
	})

	p.step(t, "drawer opens and closes", func(t *testing.T) {
		cases := []struct {
			name  string
			close func()
		}{
			{"tap outside", func() { p.do(chromedp.TapXY(375, 500)) }},
			{"Escape", func() { p.do(chromedp.KeyEvent(kb.Escape)) }},
			{"choose a terminal", func() { p.do(chromedp.Tap(chromedp.CSS(`.terminal-item[data-terminal="big"]`))) }},
		}
		for _, c := range cases {
			p.do(chromedp.Tap(chromedp.CSS(`.drawer-toggle`)))
			p.waitJS("the drawer open (before "+c.name+")", drawerOpen, 5*time.Second)
			if r := p.visibleRect("#sidebar"); r == nil || r.Right > 390 || r.Right-r.Left < 250 {
				t.Errorf("open drawer = %+v, want 250…390 px wide from the left edge", r)
			}
			c.close()
			p.waitJS("the drawer to close on "+c.name, drawerClosed, 5*time.Second)
		}
		p.waitJS("the chosen terminal active and focused", `window.__termhost.active() === 'big' && `+terminalFocused("big"), 5*time.Second)
	})

	p.step(t, "a large terminal stays legible and pans", func(t *testing.T) {
		p.waitLoaded("big")
		pane := `document.querySelector('.terminal-view[data-terminal="big"] .terminal-scale')`
		p.waitJS("the 130×49 terminal laid out", fmt.Sprintf(`window.__termhost.view('big').term.cols === 130 && %s.querySelector('.terminal-xterm').style.width !== ''`, pane), 5*time.Second)
		var m struct {
			Font                                                 float64
			ScrollWidth, ClientWidth, ScrollHeight, ClientHeight float64
			Scaled, ScreenRight, PaneRight                       float64
		}
		p.eval(fmt.Sprintf(`(() => {
			const pane = %s, box = pane.querySelector('.terminal-xterm'), v = window.__termhost.view('big');
			const scale = box.getBoundingClientRect().width / box.offsetWidth;
			pane.scrollLeft = pane.scrollWidth;
			return {Font: v.term.options.fontSize * scale, ScrollWidth: pane.scrollWidth, ClientWidth: pane.clientWidth, ScrollHeight: pane.scrollHeight, ClientHeight: pane.clientHeight,
				Scaled: box.getBoundingClientRect().width, ScreenRight: pane.querySelector('.xterm-screen').getBoundingClientRect().right, PaneRight: pane.getBoundingClientRect().right};
		})()`, pane), &m)
		if m.Font < 9 {
			t.Errorf("font size on screen = %.1f px, want ≥ 9", m.Font)
		}
		if m.ScrollWidth <= m.ClientWidth {
			t.Errorf("pane scroll width %v in %v, want wider (panning)", m.ScrollWidth, m.ClientWidth)
		}
		if m.ScreenRight > m.PaneRight+1 || m.ScreenRight < m.PaneRight-40 {
			t.Errorf("panned to the right: last column ends at %.1f, pane at %.1f: want the last column in view", m.ScreenRight, m.PaneRight)
		}
		// A finger drag over the text pans it back (xterm takes the touches).
		p.eval(pane+`.scrollLeft`, &m.ScrollWidth)
		p.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Call(ctx, input.SynthesizeScrollGesture, input.SynthesizeScrollGestureParams{X: 100, Y: 300, XDistance: 150, GestureSourceType: input.GestureSourceTypeTouch})
			return err
		}))
		p.waitJS("the drag to pan left", fmt.Sprintf(`%s.scrollLeft < %f`, pane, m.ScrollWidth-50), 5*time.Second)
	})

	p.step(t, "status bar items do not overlap", func(t *testing.T) {
		for _, term := range []string{"big", id} {
			p.eval(fmt.Sprintf(`(window.__termhost.open(%q), true)`, term), nil)
			p.waitJS("terminal "+term+" in the status bar", `document.getElementById('status.size').textContent !== ''`, 5*time.Second)
			p.checkStatusBar(t, "terminal "+term)
		}
		if r := p.visibleRect("#status\\.host"); r == nil {
			t.Errorf("the host item (Show All Commands) was dropped")
		}
	})

	p.step(t, "key row", func(t *testing.T) {
		row := p.visibleRect(".key-row")
		status := p.visibleRect("#statusbar")
		if row == nil || status == nil || row.Bottom > status.Top+0.5 || row.Right > 390 {
			t.Fatalf("key row %+v, status bar %+v: want the row above the status bar, in the viewport", row, status)
		}
		var overflow bool
		p.eval(`(r => r.scrollWidth > r.clientWidth)(document.querySelector('.key-row'))`, &overflow)
		if overflow {
			t.Errorf("the key row overflows the screen")
		}
		p.typeKeys(id, `printf '\033[?1h'; cat -v`+kb.Enter)
		p.waitJS("cat to run", fmt.Sprintf(`window.__termhost.view(%q).runningCommand?.endsWith('cat -v')`, id), 10*time.Second)
		p.tapKey("Escape")
		p.do(typeText("x"))
		p.tapKey("ArrowUp") // application cursor keys (DECCKM set by the printf)
		p.tapKey("ArrowLeft")
		p.do(typeText("\r"))
		p.waitJS("cat's output", fmt.Sprintf(`(window.__termhost.buffer(%q) || '').split('\n').filter(l => l.trim() === '^[x^[OA^[OD').length === 2`, id), 10*time.Second)
		if ok := p.evalString(terminalFocused(id)); ok != "true" {
			t.Errorf("after tapping keys: the terminal lost the keyboard")
		}
		// Sticky Ctrl, then c from the (soft) keyboard: ^C ends cat.
		p.tapKey("Ctrl")
		if pressed := p.evalString(`document.querySelector('.key-row-key[data-key=Ctrl]').getAttribute('aria-pressed')`); pressed != "true" {
			t.Errorf("Ctrl after a tap: aria-pressed %s, want true", pressed)
		}
		p.do(typeText("c"))
		p.waitJS("cat to end", fmt.Sprintf(`window.__termhost.view(%q).runningCommand === undefined`, id), 10*time.Second)
		if pressed := p.evalString(`document.querySelector('.key-row-key[data-key=Ctrl]').getAttribute('aria-pressed')`); pressed != "false" {
			t.Errorf("Ctrl after the next key: aria-pressed %s, want false", pressed)
		}
		if sent := p.sentInputs(); sent[len(sent)-1] != "\x03" {
			t.Errorf("inputs sent %q: want \\x03 last, for Ctrl then c", sent)
		}
		// Up in normal cursor mode recalls history.
		p.typeKeys(id, `printf '\033[?1l'; echo hist-$((2+3))`+kb.Enter)
		p.waitLine(id, "hist-5", 10*time.Second)
		p.waitPrompt(id)
		p.tapKey("ArrowUp")
		p.do(typeText("\r"))
		p.waitJS("the recalled command's output", fmt.Sprintf(`(window.__termhost.buffer(%q) || '').split('\n').filter(l => l.trim() === 'hist-5').length === 2`, id), 10*time.Second)
	})

	p.step(t, "a tap below the rows focuses the terminal", func(t *testing.T) {
		p.eval(`(window.__termhost.open('small'), true)`, nil)
		p.waitLoaded("small")
		p.eval(`(document.activeElement.blur(), true)`, nil)
		p.waitJS("the terminal to lose the keyboard", `!(`+terminalFocused("small")+`)`, 5*time.Second)
		var at struct{ X, Y float64 }
		p.eval(`(() => {
			const v = document.querySelector('.terminal-view[data-terminal="small"]');
			const rows = v.querySelector('.xterm-screen').getBoundingClientRect(), body = v.querySelector('.terminal-body').getBoundingClientRect();
			return {X: rows.left + 20, Y: (rows.bottom + body.bottom) / 2};
		})()`, &at)
		p.do(chromedp.TapXY(at.X, at.Y))
		p.waitJS("the tapped terminal to have the keyboard", terminalFocused("small"), 5*time.Second)
	})

	// Viewers cannot type: no key row.
	var sh struct{ URL string }
	if err := json.Unmarshal(cli.MustCall("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": ahp.TerminalURI("small"), "role": "viewer", "ttlSeconds": 3600}), &sh); err != nil {
		t.Fatal(err)
	}
	_, token, _ := strings.Cut(sh.URL, "#share=")
	v := e.openShare("viewer", e.URL+"/t/small#share="+token, "viewer", "small", "dark")
	v.phone()
	v.step(t, "viewers get no key row", func(t *testing.T) {
		if r := v.visibleRect(".key-row"); r != nil {
			t.Errorf("viewer: key row shown at %+v", r)
		}
		v.checkStatusBar(t, "viewer")
	})
}

// Desktop (1400×900) keeps its layout: side bar beside the terminal, no menu
// button, no key row, every status item shown.
func TestDesktopLayoutUnchanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("desktop")
	p.do(chromedp.EmulateViewport(1400, 900))
	p.open("/")
	p.newTerminal()
	if r := p.visibleRect("#sidebar"); r == nil || r.Left != 48 || r.Right-r.Left != 280 {
		t.Errorf("side bar %+v, want 48…328 beside the activity bar", r)
	}
	if r := p.visibleRect("#activitybar"); r == nil || r.Right-r.Left != 48 || r.Bottom-r.Top < 800 {
		t.Errorf("activity bar %+v, want 48 px wide, full height", r)
	}
	for _, sel := range []string{".key-row", ".drawer-toggle", ".drawer-scrim"} {
		if r := p.visibleRect(sel); r != nil {
			t.Errorf("%s shown at %+v on the desktop", sel, r)
		}
	}
	if n := p.evalString(`document.querySelectorAll('.statusbar-item.dropped').length`); n != "0" {
		t.Errorf("%s status items dropped on the desktop, want none", n)
	}
	p.checkStatusBar(t, "desktop")
}

// TestLayoutScreenshots writes the layouts for the docs, only when asked:
// go test -tags e2e ./e2e/ -run TestLayoutScreenshots -args -screenshots=$PWD/docs/screenshots
func TestLayoutScreenshots(t *testing.T) {
	t.Parallel()
	if *screenshotsDir == "" {
		t.Skip("no -screenshots=DIR")
	}
	if err := os.MkdirAll(*screenshotsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	demo := func(p *page, id string) {
		for i, line := range []string{"mkdir -p ~/project/src && cd ~/project && touch go.mod main.go README.md", "ls -l", "printf '\\033[32mok\\033[0m  build passed\\n'", "false"} {
			p.typeKeys(id, line+kb.Enter)
			p.waitJS("the command to finish", fmt.Sprintf(`window.__termhost.view(%q).commands.filter(c => c.isComplete).length === %d`, id, i+1), 10*time.Second)
		}
	}
	save := func(p *page, name string) {
		t.Helper()
		p.eval(`window.__termhost.drained()`, nil)
		p.nextFrames()
		ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
		defer cancel()
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		path := filepath.Join(*screenshotsDir, name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
	}

	d := e.newPage("desktop")
	d.do(chromedp.EmulateViewport(1400, 900))
	d.colorScheme("dark")
	d.open("/")
	demo(d, d.newTerminal())
	d.newTerminal()
	d.eval(`(window.__termhost.open(window.__termhost.views()[0].id), true)`, nil)
	save(d, "desktop-dark")
	d.colorScheme("light")
	save(d, "desktop-light")

	p := e.newPage("phone")
	p.phone()
	p.colorScheme("dark")
	p.open("/")
	id := p.newTerminal()
	demo(p, id)
	p.do(chromedp.Tap(chromedp.CSS(`.terminal-view[data-terminal="` + id + `"] .terminal-body`)))
	save(p, "phone-dark")
	p.colorScheme("light")
	save(p, "phone-light")
	p.colorScheme("dark")
	p.do(chromedp.Tap(chromedp.CSS(`.drawer-toggle`)))
	p.waitJS("the drawer", drawerOpen, 5*time.Second)
	save(p, "phone-drawer")
}
