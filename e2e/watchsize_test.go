//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestWatcherReadableSize: a CLI attached at 200×50 holds
// a terminal the browser watches. The browser's text stays legible (scaled
// no smaller than 10 px), the claim bar sits above the terminal instead of
// over its first lines, a "1:1" choice shows the real size with the pane
// panning and is remembered after a reload; when the CLI detaches the
// browser gets the claim, and the terminal its size, at once (not after the
// 10 s claim grace).
func TestWatcherReadableSize(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	cli := e.cliClient("e2e-cli") // the clientId createSizedTerminal claims for
	createSizedTerminal(t, cli, "wide", 200, 50)
	p := e.newPage("watcher")
	p.login()
	p.eval(`(window.__termhost.open('wide'), true)`, nil)
	p.waitJS("the mirrored terminal", `(v => v && v.loaded && v.term.cols === 200)(window.__termhost.view('wide'))`, 10*time.Second)
	p.waitJS("the claim bar", `!!document.querySelector('.terminal-view:not([hidden]) .terminal-claimbar:not([hidden]) .claim-scale')`, 10*time.Second)

	// fontPx is the terminal text's size on screen: its font size times the scale.
	const fontPx = `(v => v.term.options.fontSize * (new DOMMatrix(getComputedStyle(v.element.querySelector('.terminal-xterm')).transform).a))(window.__termhost.view('wide'))`
	p.run(t, "legible, and the bar covers nothing", func(t *testing.T) {
		p.shot("watch-wide-fit")
		var px float64
		p.eval(fontPx, &px)
		if px < 10 {
			t.Errorf("watcher's text at %.1f px, want at least 10", px)
		}
		var overlap bool
		p.eval(`(v => v.element.querySelector('.terminal-claimbar').getBoundingClientRect().bottom > v.element.querySelector('.terminal-body').getBoundingClientRect().top + 0.5)(window.__termhost.view('wide'))`, &overlap)
		if overlap {
			t.Errorf("the claim bar overlaps the terminal's area")
		}
	})
	p.run(t, "1:1 pans and is remembered", func(t *testing.T) {
		p.click("the 1:1 toggle", `.terminal-view:not([hidden]) .claim-scale`)
		p.waitJS("the real size", fmt.Sprintf(`Math.abs((%s) - window.__termhost.view('wide').term.options.fontSize) < 0.01`, fontPx), 5*time.Second)
		p.waitJS("the pane pans sideways", `(s => s.classList.contains('panning') && s.scrollWidth > s.clientWidth)(window.__termhost.view('wide').element.querySelector('.terminal-scale'))`, 5*time.Second)
		p.shot("watch-wide-1to1")
		p.do(chromedp.Reload())
		p.waitOnline()
		p.eval(`(window.__termhost.open('wide'), true)`, nil)
		p.waitJS("the mirrored terminal", `(v => v && v.loaded && v.term.cols === 200)(window.__termhost.view('wide'))`, 10*time.Second)
		p.waitJS("1:1 after the reload", `document.querySelector('.terminal-view:not([hidden]) .claim-scale')?.dataset.mode === 'actual'`, 10*time.Second)
		p.click("the Fit toggle", `.terminal-view:not([hidden]) .claim-scale`)
		p.waitJS("fit again", `document.querySelector('.terminal-view:not([hidden]) .claim-scale')?.dataset.mode === 'fit'`, 5*time.Second)
	})
	p.run(t, "the size comes back at once when the CLI detaches", func(t *testing.T) {
		_ = cli.Conn().Close(websocket.StatusNormalClosure, "detached")
		// Well under the 10 s claim grace a dropped connection would wait.
		p.waitJS("the browser holding and sizing the terminal", `(v => v.isHolder && v.state.cols !== 200 && v.state.cols === v.term.cols)(window.__termhost.view('wide'))`, 5*time.Second)
		p.waitJS("no claim bar", `window.__termhost.view('wide').element.querySelector('.terminal-claimbar').hidden`, 5*time.Second)
	})
}

// TestSizePolicySmallestInBrowser: under
// --size-policy smallest a browser that does not hold the claim still sizes
// the terminal down to its pane, so it shows the terminal unscaled; the
// wide CLI holding the claim sees the smaller size.
func TestSizePolicySmallestInBrowser(t *testing.T) {
	t.Parallel()
	token := "e2e-owner-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	s := testserver.New(t, shellOptions(), testserver.NoAuth(), testserver.TestHooks(),
		testserver.Terminals(func(c *terminals.Config) { c.SizePolicy = terminals.SizeSmallest }),
		testserver.Handlers(func(c *handlers.Config) { c.Version, c.NoAuth, c.OwnerToken = "e2e", false, token }))
	proxy := testserver.NewProxy(t, s.Listener.Addr().String())
	e := &env{t: t, m: s.Manager, srv: s.Handler, backend: s.Server, proxy: proxy, URL: proxy.URL(), home: s.Home, token: token}
	t.Cleanup(e.startBrowser())
	cli := e.cliClient("e2e-cli")
	createSizedTerminal(t, cli, "wide", 200, 50)

	p := e.newPage("watcher")
	p.login()
	p.eval(`(window.__termhost.open('wide'), true)`, nil)
	p.waitJS("the terminal sized to the browser's pane", `(v => v && v.loaded && !v.isHolder && v.state.cols < 200 && v.state.rows < 50 && v.term.cols === v.state.cols)(window.__termhost.view('wide'))`, 10*time.Second)
	var cols int
	p.eval(`window.__termhost.view('wide').state.cols`, &cols)
	cli.WaitAction("the smaller size at the CLI", func(env ahp.Envelope) bool {
		return env.Action.Type == ahp.TerminalResized && env.Action.Cols == cols
	})
	p.waitJS("the terminal shown unscaled", `window.__termhost.view('wide').element.querySelector('.terminal-xterm').style.transform === ''`, 5*time.Second)
	p.shot("size-policy-smallest")
}
