//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals"
)

// Load the page, create a terminal, type, read the output; a second tab on
// /t/{id} sees the same terminal live.
func TestCreateTypeAndShare(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.newPage("tab1")
	a.colorScheme("dark")
	a.open("/")
	if th := a.evalString(`document.documentElement.dataset.theme`); th != "dark" {
		t.Errorf("theme with prefers-color-scheme dark = %q, want dark", th)
	}
	a.waitJS("the side bar welcome view", `document.querySelector('#terminals-view .welcome-view button')`, 5*time.Second)
	a.shot("workbench-empty-dark")

	// New terminal through the side bar button.
	a.click("the welcome view's New Terminal", `#terminals-view .welcome-view button`)
	var id string
	a.waitJS("a loaded terminal", `window.__termhost.views().some(v => v.loaded)`, 15*time.Second)
	a.eval(`window.__termhost.active()`, &id)
	if id == "" {
		a.fail("no active terminal after New Terminal")
	}
	a.waitPrompt(id)
	a.typeKeys(id, "echo hi"+kb.Enter)
	a.waitLine(id, "hi", 10*time.Second)

	// The address bar follows the focused terminal.
	if path := a.evalString(`location.pathname`); path != "/t/"+id {
		t.Errorf("location.pathname = %q, want /t/%s", path, id)
	}
	// The side bar lists it as running, held by us.
	a.waitJS("the terminal in the side bar", fmt.Sprintf(`document.querySelector('.terminal-item[data-terminal=%q] .terminal-state')?.textContent === 'running'`, id), 5*time.Second)
	if h := a.evalString(fmt.Sprintf(`document.querySelector('.terminal-item[data-terminal=%q] .terminal-holder').textContent`, id)); !strings.Contains(h, "you") {
		t.Errorf("claim holder in side bar = %q, want “you”", h)
	}
	if s := a.evalString(`document.getElementById('status.protocol').textContent`); s != "AHP 1.0.0" {
		t.Errorf("status bar protocol = %q, want AHP 1.0.0", s)
	}

	// A second tab on the terminal's URL sees the output, then live output.
	b := e.newPage("tab2")
	b.colorScheme("dark")
	b.open("/t/" + id)
	b.waitJS("the shared terminal", fmt.Sprintf(`window.__termhost.active() === %q`, id), 10*time.Second)
	b.waitLine(id, "hi", 10*time.Second)
	a.typeKeys(id, "echo live-$((6*7))"+kb.Enter)
	b.waitLine(id, "live-42", 10*time.Second)
	if n := b.countLines(id, "hi"); n != 1 {
		t.Errorf("second tab shows %d lines “hi”, want 1", n)
	}
	// The second tab does not hold the claim: it shows who does, in the
	// claim bar and in the side bar alike, once presence names the holder.
	b.waitJS("the claim note", `document.querySelector('.terminal-view:not([hidden]) .terminal-claimbar:not([hidden])')?.textContent.includes('Take Control')`, 5*time.Second)
	b.waitJS("the side bar naming the claim bar's holder", fmt.Sprintf(`(() => {
		const bar = document.querySelector('.terminal-view:not([hidden]) .claim-holder')?.textContent ?? '';
		const m = /^Controlled by (.+) · /.exec(bar);
		const row = document.querySelector('.terminal-item[data-terminal=%q]');
		return !!m && m[1] !== 'nobody' && row?.querySelector('.terminal-holder')?.textContent === ' · ' + m[1] && row.title.includes('controlled by ' + m[1]);
	})()`, id), 5*time.Second)
	// A redraw that changes nothing leaves the claim bar's elements in the
	// page, untouched (a button taken out between press and release, even
	// to be put back, loses the click): a terminal added to the catalogue
	// redraws every claim bar.
	var found bool
	b.eval(`(() => {
		window.__take = document.querySelector('.terminal-view:not([hidden]) .claim-take');
		window.__removed = 0;
		new MutationObserver((ms) => ms.forEach((m) => (window.__removed += m.removedNodes.length)))
			.observe(document.querySelector('.terminal-view:not([hidden]) .terminal-claimbar'), { childList: true, subtree: true });
		return !!window.__take;
	})()`, &found)
	if !found {
		t.Fatal("no Take Control button in the second tab's claim bar")
	}
	claim := ahp.ClientClaim("e2e-other")
	meta, _ := json.Marshal(map[string]any{terminals.MetaCommand: []string{"sleep", "60"}})
	if err := e.m.Create(ahp.CreateTerminalParams{Channel: ahp.TerminalURIOf("other"), Claim: &claim, Cols: 80, Rows: 24, Meta: meta}); err != nil {
		t.Fatal(err)
	}
	b.waitJS("the other terminal in the catalogue", `window.__termhost.catalogue().length === 2`, 10*time.Second)
	var removed int
	b.eval(`window.__take.isConnected ? window.__removed : -1`, &removed)
	if removed != 0 {
		t.Errorf("a redraw that changed nothing took elements out of the claim bar (%d; -1: the button is gone)", removed)
	}
	a.typeKeys(id, "ls -la /usr | head -5; echo done"+kb.Enter)
	a.waitLine(id, "done", 10*time.Second)
	a.shot("workbench-dark")
	b.shot("workbench-dark-second-viewer")

	// The owner can always take control, even while the holder is
	// connected: this tab now sizes the pty, and the
	// former holder shows who does.
	b.click("Take Control", `.terminal-view:not([hidden]) .terminal-claimbar button`)
	b.waitJS("our claim", fmt.Sprintf(`window.__termhost.view(%q).isHolder`, id), 5*time.Second)
	b.waitJS("the claim note to go", `document.querySelector('.terminal-view:not([hidden]) .terminal-claimbar').hidden`, 5*time.Second)
	a.waitJS("the former holder's claim note", `document.querySelector('.terminal-view:not([hidden]) .terminal-claimbar:not([hidden])')?.textContent.includes('Take Control')`, 5*time.Second)
	if h := b.evalString(`document.getElementById('status.claim').textContent`); h != "Controlled by you" {
		t.Errorf("status bar claim after Take Control = %q", h)
	}
}

// Reloading the page reconnects and restores the scrollback; a network cut
// shows the offline banner, blocks input, and recovers by itself without
// duplicated output.
func TestReloadAndReconnect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	id := p.newTerminal()
	p.typeKeys(id, "echo one"+kb.Enter)
	p.waitLine(id, "one", 10*time.Second)

	p.do(chromedp.Reload())
	p.waitOnline()
	p.waitJS("the terminal after reload", fmt.Sprintf(`window.__termhost.active() === %q && window.__termhost.views().some(v => v.id === %q && v.loaded)`, id, id), 10*time.Second)
	p.waitLine(id, "one", 10*time.Second)
	if n := p.countLines(id, "one"); n != 1 {
		t.Fatalf("after reload: %d lines “one”, want 1\n%s", n, strings.Join(p.lines(id), "\n"))
	}

	// Output keeps coming while the network is down.
	p.typeKeys(id, "for i in 1 2 3 4 5 6; do echo tick-$i; sleep 0.4; done; echo loop-done"+kb.Enter)
	p.waitLine(id, "tick-1", 10*time.Second)
	e.proxy.Refuse()
	p.waitJS("the offline banner", `!document.getElementById('offline-banner').hidden && document.getElementById('workbench').classList.contains('offline')`, 10*time.Second)
	p.shot("workbench-offline")
	// Input is blocked while offline: nothing typed now may ever run.
	p.typeKeys(id, "echo lost"+kb.Enter)
	if got := p.evalString(`String(window.__termhost.type('echo lost2\r'))`); got != "undefined" {
		t.Errorf("dispatch while offline returned %s, want undefined (blocked)", got)
	}
	// Offline until the app has retried (backing off) and been refused three
	// times, while the loop goes on printing.
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	if err := e.proxy.WaitRefused(ctx, 3); err != nil {
		t.Fatalf("the app never tried to reconnect while offline: %v", err)
	}
	e.proxy.Accept()
	p.waitOnline()
	p.waitJS("the banner to go away", `document.getElementById('offline-banner').hidden`, 5*time.Second)
	p.waitLine(id, "loop-done", 15*time.Second)
	p.waitPrompt(id)
	for i := 1; i <= 6; i++ {
		if n := p.countLines(id, "tick-"+strconv.Itoa(i)); n != 1 {
			t.Errorf("after recovery: %d lines tick-%d, want exactly 1\n%s", n, i, strings.Join(p.lines(id), "\n"))
		}
	}
	p.typeKeys(id, "echo back"+kb.Enter)
	p.waitLine(id, "back", 10*time.Second)
	for _, l := range p.lines(id) {
		if strings.TrimSpace(l) == "lost" || strings.TrimSpace(l) == "lost2" {
			t.Errorf("input typed while offline was executed: %q", l)
		}
	}
	if n := p.countLines(id, "back"); n != 1 {
		t.Errorf("%d lines “back”, want 1", n)
	}

	// Closing the socket from the page (server still up) also recovers.
	// The states are recorded as they change: the page may be offline for
	// less than a poll of waitJS.
	p.eval(`(window.__states = [], window.__termhost.client.on('state', (s) => window.__states.push(s)), window.__termhost.dropConnection(), true)`, nil)
	p.waitJS("a reconnect", `window.__states.some((s) => s !== 'online')`, 5*time.Second)
	p.waitOnline()
	p.typeKeys(id, "echo again"+kb.Enter)
	p.waitLine(id, "again", 10*time.Second)
	if n := p.countLines(id, "back"); n != 1 {
		t.Errorf("after a second reconnect: %d lines “back”, want 1", n)
	}
}

// A failing command gets a failure decoration with its exit code, the
// Commands view lists it (also with the failed-only filter), and the title
// and favicon show the failure.
func TestFailedCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.colorScheme("dark")
	p.open("/")
	id := p.newTerminal()
	p.typeKeys(id, "echo ok"+kb.Enter)
	p.waitLine(id, "ok", 10*time.Second)
	p.typeKeys(id, "sh -c 'exit 3'"+kb.Enter)
	p.waitJS("a failure decoration", `document.querySelector('.terminal-command-decoration.failure')`, 10*time.Second)
	p.waitJS("the Commands view entry", `document.querySelector('.command-item[data-status=failure][data-exit-code="3"]')`, 5*time.Second)
	if s := p.evalString(`document.querySelector('.command-item[data-status=failure] .row-label').textContent`); s != "sh -c 'exit 3'" {
		t.Errorf("Commands view command line = %q", s)
	}
	p.waitJS("a success decoration", `document.querySelector('.terminal-command-decoration.success')`, 5*time.Second)
	p.waitJS("the title", `document.title.startsWith('✗ 3 ')`, 5*time.Second)
	if fav := p.evalString(`document.getElementById('termhost-favicon').href`); !strings.Contains(fav, "e51400") {
		t.Errorf("favicon is not the failure icon: %.80s", fav)
	}
	if s := p.evalString(`document.getElementById('status.build').textContent`); s != "Exit 3" {
		t.Errorf("status bar build item = %q, want “Exit 3”", s)
	}

	// Hover over the failure mark shows command line and exit code.
	p.do(chromedp.ScrollIntoView(chromedp.CSS(`.terminal-command-decoration.failure`)))
	var x, y float64
	p.eval(`(() => { const r = document.querySelector('.terminal-command-decoration.failure').getBoundingClientRect(); return r.x + r.width / 2; })()`, &x)
	p.eval(`(() => { const r = document.querySelector('.terminal-command-decoration.failure').getBoundingClientRect(); return r.y + r.height / 2; })()`, &y)
	p.do(chromedp.MouseEvent(chromedp.MouseMoved, x, y))
	p.waitJS("the command hover", `document.querySelector('.command-hover')?.textContent.includes('Exit code 3')`, 5*time.Second)
	if s := p.evalString(`document.querySelector('.command-hover .hover-command').textContent`); s != "sh -c 'exit 3'" {
		t.Errorf("hover command line = %q", s)
	}
	p.shot("failed-decoration")
	p.do(chromedp.MouseEvent(chromedp.MouseMoved, 600, 400))
	p.waitJS("the hover to close", `!document.querySelector('.command-hover')`, 5*time.Second)

	// `false` fails with 1; the failed-only filter keeps only failures.
	p.typeKeys(id, "false"+kb.Enter)
	p.waitJS("the second failure", `document.querySelector('.command-item[data-status=failure][data-exit-code="1"]')`, 10*time.Second)
	p.click("the failed-only filter", `#commands-view .filter-toggle`)
	var statuses []string
	p.eval(`[...document.querySelectorAll('#commands-view .command-item')].map(e => e.dataset.status)`, &statuses)
	if len(statuses) != 2 || statuses[0] != "failure" || statuses[1] != "failure" {
		t.Errorf("failed-only Commands view statuses = %v, want [failure failure]", statuses)
	}
	p.shot("commands-view")
	p.click("the failed-only filter", `#commands-view .filter-toggle`)
	p.eval(`[...document.querySelectorAll('#commands-view .command-item')].map(e => e.dataset.status)`, &statuses)
	if len(statuses) < 3 {
		t.Errorf("all-commands view statuses = %v, want ≥3 entries", statuses)
	}

	// Ctrl+Up jumps to a previous command; a deep link reveals a command.
	p.click("the failed command", `.command-item[data-exit-code="3"]`)
	p.waitJS("the command deep link in the URL", `location.hash.startsWith('#')`, 5*time.Second)
	hash := p.evalString(`location.hash`)
	q := e.newPage("deeplink")
	q.open("/t/" + id + hash)
	q.waitJS("the terminal", fmt.Sprintf(`window.__termhost.views().some(v => v.id === %q && v.loaded)`, id), 10*time.Second)
	q.waitJS("the deep-linked command highlight", `document.querySelector('.terminal-command-highlight')`, 5*time.Second)
}

// Resizing the window resizes the pty (we hold the claim).
func TestResizeFollowsWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	id := p.newTerminal()
	size := func() (int, int) {
		var s struct{ Cols, Rows int }
		p.eval(fmt.Sprintf(`(() => { const s = window.__termhost.state(%q); return {cols: s.cols, rows: s.rows}; })()`, id), &s)
		return s.Cols, s.Rows
	}
	p.waitJS("the pty size to be reported", fmt.Sprintf(`(s => s && s.cols > 20 && s.rows > 5)(window.__termhost.state(%q))`, id), 5*time.Second)
	c1, r1 := size()
	p.typeKeys(id, "stty size"+kb.Enter)
	p.waitLine(id, fmt.Sprintf("%d %d", r1, c1), 10*time.Second)

	p.do(chromedp.EmulateViewport(900, 500))
	p.waitJS("a smaller pty", fmt.Sprintf(`(s => s.cols < %d && s.rows < %d)(window.__termhost.state(%q))`, c1, r1, id), 10*time.Second)
	c2, r2 := size()
	p.typeKeys(id, "clear; stty size"+kb.Enter)
	p.waitLine(id, fmt.Sprintf("%d %d", r2, c2), 10*time.Second)
	var term struct{ Cols, Rows int }
	p.eval(`(() => { const t = window.__termhost.view().term; return {cols: t.cols, rows: t.rows}; })()`, &term)
	if term.Cols != c2 || term.Rows != r2 {
		t.Errorf("xterm is %d×%d, pty %d×%d", term.Cols, term.Rows, c2, r2)
	}
	if s := p.evalString(`document.getElementById('status.size').textContent`); s != fmt.Sprintf("%d×%d", c2, r2) {
		t.Errorf("status bar size = %q, want %d×%d", s, c2, r2)
	}
}

// A terminal whose shell exits shows its exit code in the side bar and in
// the terminal's info bar; input is blocked.
func TestExitedTerminal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	id := p.newTerminal()
	p.typeKeys(id, "exit 3"+kb.Enter)
	p.waitJS("the exit code in the side bar", fmt.Sprintf(`document.querySelector('.terminal-item[data-terminal=%q] .terminal-state')?.textContent === 'exited (3)'`, id), 10*time.Second)
	p.waitJS("the info bar", `document.querySelector('.terminal-view:not([hidden]) .terminal-infobar')?.textContent.includes('exited with code 3')`, 5*time.Second)
	if got := p.evalString(fmt.Sprintf(`String(window.__termhost.view(%q).canType)`, id)); got != "false" {
		t.Errorf("canType after exit = %s, want false", got)
	}
	p.waitJS("the title", `document.title.startsWith('✗ 3 ')`, 5*time.Second)
}

// Light theme follows the OS; the not-found page is a clear 404.
func TestLightThemeAndNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.colorScheme("light")
	p.open("/")
	if th := p.evalString(`document.documentElement.dataset.theme`); th != "light" {
		t.Errorf("theme with prefers-color-scheme light = %q, want light", th)
	}
	id := p.newTerminal()
	p.typeKeys(id, "printf '\\e[31mred\\e[0m \\e[32mgreen\\e[0m\\n'; sh -c 'exit 2'"+kb.Enter)
	p.waitJS("a failure decoration", `document.querySelector('.terminal-command-decoration.failure')`, 10*time.Second)
	bg := p.evalString(`getComputedStyle(document.querySelector('.editor')).backgroundColor`)
	if bg != "rgb(255, 255, 255)" {
		t.Errorf("light editor background = %s", bg)
	}
	p.typeKeys(id, "ls -l / | head -8; echo listed"+kb.Enter)
	p.waitLine(id, "listed", 10*time.Second)
	p.shot("workbench-light")
	p.do(chromedp.KeyEvent("p", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
	p.waitJS("the command palette", `!document.querySelector('.quick-input-widget').hidden`, 5*time.Second)
	p.do(chromedp.SendKeys(chromedp.CSS(`.quick-input-box`), "theme"))
	p.waitJS("two theme commands", `document.querySelectorAll('.quick-input-list-entry').length === 2`, 5*time.Second)
	p.shot("palette-light")
	// Enter runs the first match, the Color Theme picker; pick High Contrast.
	p.do(chromedp.KeyEvent(kb.Enter))
	p.waitJS("the theme picker", `document.querySelector('.quick-input-box').placeholder === 'Select Color Theme'`, 5*time.Second)
	p.do(chromedp.SendKeys(chromedp.CSS(`.quick-input-box`), "light high"), chromedp.KeyEvent(kb.Enter))
	p.waitJS("the high-contrast light theme", `document.documentElement.dataset.theme === 'hc-light'`, 5*time.Second)
	p.shot("workbench-hc-light")

	code, body := e.httpGet("/t/doesnotexist")
	if code != 404 {
		t.Errorf("GET /t/doesnotexist = %d, want 404", code)
	}
	if !strings.Contains(body, "Terminal not found") {
		t.Errorf("not-found page body lacks the message:\n%s", body)
	}
	q := e.newPage("notfound")
	q.colorScheme("light")
	q.do(chromedp.Navigate(e.URL + "/t/doesnotexist"))
	q.waitJS("the not-found page", `document.querySelector('.notfound a.button')`, 5*time.Second)
	q.shot("notfound-light")
}

// Pasting several lines asks first; tabs reorder by drag and drop and move
// into a group to the right.
func TestPasteAndTabs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.colorScheme("dark")
	p.open("/")
	a := p.newTerminal()
	paste := fmt.Sprintf(`(() => {
		const ta = document.querySelector('.terminal-view[data-terminal=%q] .xterm-helper-textarea');
		const dt = new DataTransfer();
		dt.setData('text/plain', 'echo p1\necho p2\n');
		ta.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true}));
		return true;
	})()`, a)
	p.eval(paste, nil)
	p.waitJS("the paste confirmation", `document.querySelector('.dialog-box')?.textContent.includes('paste 2 lines')`, 5*time.Second)
	p.shot("paste-confirm")
	p.do(chromedp.Click(chromedp.CSS(`.dialog-box .button.primary`)))
	// bash takes it as a bracketed paste: it runs on Enter.
	p.waitJS("the pasted text", fmt.Sprintf(`window.__termhost.buffer(%q).includes('echo p2')`, a), 5*time.Second)
	p.typeKeys(a, kb.Enter)
	p.waitLine(a, "p1", 10*time.Second)
	p.waitLine(a, "p2", 10*time.Second)
	// Cancel runs nothing.
	p.eval(strings.Replace(paste, "echo p1", "echo never", 1), nil)
	p.waitJS("the paste confirmation", `document.querySelector('.dialog-box')`, 5*time.Second)
	p.do(chromedp.Click(chromedp.CSS(`.dialog-box .button.secondary`)))
	// A line typed after the cancel reaches the shell after any paste would.
	p.typeKeys(a, "echo cancel-$((2+2))"+kb.Enter)
	p.waitLine(a, "cancel-4", 10*time.Second)
	if strings.Contains(p.evalString(fmt.Sprintf(`window.__termhost.buffer(%q)`, a)), "never") {
		t.Errorf("a cancelled paste reached the terminal")
	}

	b := p.newTerminal()
	order := func() []string {
		var ids []string
		p.eval(`[...document.querySelectorAll('.editor-group .tab')].map(t => t.dataset.terminal)`, &ids)
		return ids
	}
	if got := order(); len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("tab order = %v, want [%s %s]", got, a, b)
	}
	p.do(chromedp.DragAndDrop(chromedp.CSS(fmt.Sprintf(`.tab[data-terminal=%q]`, b)), chromedp.CSS(fmt.Sprintf(`.tab[data-terminal=%q]`, a))))
	p.waitJS("the reordered tabs", fmt.Sprintf(`[...document.querySelectorAll('.tab')].map(t => t.dataset.terminal).join() === %q`, b+","+a), 5*time.Second)

	// Move the active terminal into a group to the right.
	p.eval(`(window.__termhost.run('terminal.moveRight'), true)`, nil)
	p.waitJS("two editor groups", `document.querySelectorAll('.editor-group').length === 2`, 5*time.Second)
	p.typeKeys(b, "echo right"+kb.Enter)
	p.waitLine(b, "right", 10*time.Second)
	p.shot("workbench-split")

	// Ctrl+Up in the terminal jumps to (and highlights) the previous command.
	p.do(chromedp.Focus(chromedp.CSS(fmt.Sprintf(`.terminal-view[data-terminal=%q] .xterm-helper-textarea`, b))),
		chromedp.KeyEvent(kb.ArrowUp, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	p.waitJS("the command highlight", fmt.Sprintf(`document.querySelector('.terminal-view[data-terminal=%q] .terminal-command-highlight')`, b), 5*time.Second)
}

// A flood of output reaches the screen completely, with the unparsed
// backlog drained afterwards (write flow control in the view).
func TestFloodOutput(t *testing.T) {
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	id := p.newTerminal()
	start := time.Now()
	p.typeKeys(id, "seq 1 100000; echo flood-done"+kb.Enter)
	p.waitLine(id, "flood-done", 60*time.Second)
	t.Logf("100000 lines on screen after %v", time.Since(start).Round(time.Millisecond))
	p.waitLine(id, "100000", 5*time.Second)
	p.waitJS("an empty write backlog", fmt.Sprintf(`window.__termhost.view(%q).writeBacklog === 0`, id), 5*time.Second)
	p.typeKeys(id, "echo after"+kb.Enter)
	p.waitLine(id, "after", 10*time.Second)
}
