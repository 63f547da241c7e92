//go:build e2e

package e2e

// The first minute: a first visit signs in
// with 200 pages and no console error, opens a focused terminal and stays
// under the download budget; every new terminal takes the keyboard, and it
// comes back to the terminal after pickers and dialogs.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals"
)

// firstVisitBudget is the most a first visit may transfer.
const firstVisitBudget = 200 * 1024

// addInitScript runs js in every document of the tab before its own scripts.
func (p *page) addInitScript(js string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: js}); err != nil {
		p.fail("add init script: %v", err)
	}
}

// consoleErrors are the console errors and exceptions so far, browser log
// entries included (a "Failed to load resource: 401" is one).
func (p *page) consoleErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.logs {
		if strings.HasPrefix(l, "[error]") || strings.HasPrefix(l, "[exception]") {
			out = append(out, l)
		}
	}
	return out
}

// traffic records what the tab loads over HTTP: bytes on the wire and the
// status of each document.
type traffic struct {
	mu        sync.Mutex
	bytes     float64
	documents []string // "status url"
	encodings map[string]string
}

func (p *page) watchTraffic() *traffic {
	p.t.Helper()
	tr := &traffic{encodings: map[string]string{}}
	urls := map[network.RequestID]string{}
	// The tab has network events on (chromedp enables the domain).
	err := chromedp.Listen(p.ctx, func(ev any) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventResponseReceived:
			urls[ev.RequestID] = ev.Response.URL
			if ev.Type == network.ResourceTypeDocument {
				tr.documents = append(tr.documents, fmt.Sprintf("%d %s", ev.Response.Status, ev.Response.URL))
			}
			if enc, ok := ev.Response.Headers["Content-Encoding"].(string); ok {
				tr.encodings[ev.Response.URL] = enc
			} else if enc, ok := ev.Response.Headers["content-encoding"].(string); ok {
				tr.encodings[ev.Response.URL] = enc
			}
		case *network.EventLoadingFinished:
			tr.bytes += ev.EncodedDataLength // headers and body as received
		}
	})
	if err != nil {
		p.fail("listen to network events: %v", err)
	}
	return tr
}

func (tr *traffic) snapshot() (bytes float64, documents []string, encodings map[string]string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	enc := map[string]string{}
	for k, v := range tr.encodings {
		enc[k] = v
	}
	return tr.bytes, append([]string(nil), tr.documents...), enc
}

// focusedTerminal is the id of the terminal that has the keyboard, or "".
const focusedTerminal = `(document.activeElement?.closest('.terminal-view')?.dataset.terminal ?? '')`

// waitFocusedPrompt waits for the active terminal's prompt and the keyboard in it.
func (p *page) waitFocusedPrompt() string {
	p.t.Helper()
	p.waitJS("a loaded, focused terminal", `(() => {
		const id = window.__termhost.active();
		return !!id && window.__termhost.views().some(v => v.id === id && v.loaded) && `+focusedTerminal+` === id;
	})()`, 15*time.Second)
	id := p.evalString(`window.__termhost.active()`)
	p.waitPrompt(id)
	return id
}

// typeHere types into whatever has the keyboard (no focusing first) and
// waits for the terminal to show the result.
func (p *page) typeHere(id, marker string) {
	p.t.Helper()
	if got := p.evalString(focusedTerminal); got != id {
		p.fail("before typing %q: the keyboard is in terminal %q, want %q (active element %s)", marker, got, id, p.evalString(`document.activeElement?.outerHTML.slice(0, 120) ?? 'none'`))
	}
	p.do(typeText("echo " + marker + "-$((40+2))" + kb.Enter))
	p.waitLine(id, marker+"-42", 10*time.Second)
}

// The owner's login link and a share link, opened in fresh
// browsers at 1400×900, answer 200 with no console error; the owner's lands
// on a terminal with the keyboard in it; the download stays under budget.
func TestFirstVisit(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	p := e.newFirstVisitPage("owner", chromedp.WithNewBrowserContext())
	p.do(chromedp.EmulateViewport(1400, 900))
	tr := p.watchTraffic()
	start := time.Now()
	p.do(chromedp.Navigate(e.URL + "/#token=" + e.token))
	id := p.waitFocusedPrompt()
	elapsed := time.Since(start)
	bytes, docs, enc := tr.snapshot()
	t.Logf("FIRST VISIT: %.0f bytes transferred, login link to a focused prompt in %v", bytes, elapsed.Round(time.Millisecond))
	for _, d := range docs {
		if !strings.HasPrefix(d, "200 ") {
			t.Errorf("document %s: want 200 (the sign-in step is an ordinary page)", d)
		}
	}
	if bytes > firstVisitBudget {
		t.Errorf("first visit transferred %.0f bytes, want ≤ %d", bytes, firstVisitBudget)
	}
	for u, want := range map[string]string{"vendor.js": "br", "app-test.js": "br", "app.css": "br"} {
		found := false
		for url, got := range enc {
			if strings.Contains(url, "/static/dist/"+u+"?") {
				found = true
				if got != want {
					t.Errorf("%s: Content-Encoding %q, want %q", url, got, want)
				}
			}
		}
		if !found {
			t.Errorf("%s: no response with a Content-Encoding seen (%v)", u, enc)
		}
	}
	p.shot("first-visit-desktop-light")
	p.typeHere(id, "first")
	p.colorScheme("dark")
	p.waitJS("the dark theme", `document.documentElement.dataset.theme === 'dark'`, 5*time.Second)
	p.shot("first-visit-desktop-dark")
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("owner's first visit: console errors:\n%s", strings.Join(errs, "\n"))
	}

	// A share link in another fresh browser: 200, no console error.
	p.click("the Share action", `.editor-group.active .editor-actions .share-action`)
	p.waitJS("the share dialog", `!!document.getElementById('share-create')`, 5*time.Second)
	link := p.createShare("driver", 3600)
	p.closeDialog()
	s := e.newFirstVisitPage("share", chromedp.WithNewBrowserContext())
	s.do(chromedp.EmulateViewport(1400, 900))
	str := s.watchTraffic()
	s.do(chromedp.Navigate(link))
	s.waitOnline()
	s.waitJS("the shared terminal", fmt.Sprintf(`window.__termhost.views().some(v => v.id === %q && v.loaded)`, id), 10*time.Second)
	_, sdocs, _ := str.snapshot()
	for _, d := range sdocs {
		if !strings.HasPrefix(d, "200 ") {
			t.Errorf("share link document %s: want 200", d)
		}
	}
	if errs := s.consoleErrors(); len(errs) > 0 {
		t.Errorf("share link's first visit: console errors:\n%s", strings.Join(errs, "\n"))
	}
	if n := s.evalString(`String(window.__termhost.views().length)`); n != "1" {
		t.Errorf("a share link's page opened %s terminals, want only its own", n)
	}
	// A driver is not offered a link the recipient could not open.
	var offered bool
	s.eval(`!!window.__termhost.commandEnabled('terminal.copyLink')`, &offered)
	if offered {
		t.Errorf("a share link's driver is offered Copy Link to Terminal")
	}
	var ownerOffered bool
	p.eval(`!!window.__termhost.commandEnabled('terminal.copyLink')`, &ownerOffered)
	if !ownerOffered {
		t.Errorf("the owner is not offered Copy Link to Terminal")
	}
}

// After a wrong login link, the right one pasted into the same tab
// (only the fragment changes: no reload) signs in.
func TestRightLinkAfterWrongOne(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	p := e.newPage("tab", chromedp.WithNewBrowserContext())
	p.do(chromedp.Navigate(e.URL + "/#token=not-the-right-token-at-all"))
	p.waitJS("the refusal", `document.getElementById('login-title')?.textContent === 'This link does not work'`, 10*time.Second)
	if msg := p.evalString(`document.getElementById('login-message').textContent`); msg == "" || strings.ToUpper(msg[:1]) != msg[:1] {
		t.Errorf("refusal message %q: want a sentence with a capital letter", msg)
	}
	p.do(chromedp.Navigate(e.URL + "/#token=" + e.token))
	p.waitOnline()
	if r := p.evalString(`window.__termhost.role`); r != "owner" {
		t.Errorf("role after the right link = %q, want owner", r)
	}
}

// A terminal's address with the owner's login fragment added signs in and
// stays there: the page shows that terminal, not the empty workbench.
func TestLoginLinkToATerminal(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	const id = "linked"
	claim := ahp.ClientClaim("e2e-link")
	meta, _ := json.Marshal(map[string]any{terminals.MetaCommand: []string{"/bin/bash", "-c", "echo linked-here; sleep 60"}})
	if err := e.m.Create(ahp.CreateTerminalParams{Channel: ahp.TerminalURIOf(id), Claim: &claim, Cols: 80, Rows: 24, Meta: meta}); err != nil {
		t.Fatal(err)
	}
	p := e.newPage("tab", chromedp.WithNewBrowserContext())
	p.do(chromedp.Navigate(e.URL + "/t/" + id + "#token=" + e.token))
	p.waitOnline()
	p.waitLine(id, "linked-here", 10*time.Second)
	if got := p.evalString(`location.pathname + location.hash`); got != "/t/"+id {
		t.Errorf("address after signing in: %q, want /t/%s without the token", got, id)
	}
	if got := p.evalString(`window.__termhost.active()`); got != id {
		t.Errorf("active terminal %q, want %q", got, id)
	}
}

// Every way of creating a terminal leaves the keyboard in
// it; the keyboard comes back after the palette (cancelled or run), a
// dialog, Kill and Take Control; Ctrl+P in a terminal opens Quick Open.
func TestNewTerminalsTakeTheKeyboard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.do(chromedp.EmulateViewport(1400, 900))
	p.open("/")
	p.waitJS("the welcome view", `!!document.querySelector('#terminals-view .welcome-view button')`, 5*time.Second)

	create := []struct {
		name string
		do   func()
	}{
		{"welcome button", func() { p.click("the welcome view's New Terminal", `#terminals-view .welcome-view button`) }},
		{"plus icon", func() {
			p.click("the New Terminal button", `#terminals-view button[aria-label="New Terminal"].icon-button`)
		}},
		{"ctrl shift backquote", func() {
			p.eval(`(document.activeElement?.blur(), true)`, nil)
			p.do(chromedp.KeyEvent("`", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
		}},
		{"palette", func() {
			p.do(chromedp.KeyEvent("p", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
			p.waitJS("the palette", `!document.querySelector('.quick-input-widget').hidden`, 5*time.Second)
			p.do(chromedp.SendKeys(chromedp.CSS(`.quick-input-box`), "Create New Terminal"), chromedp.KeyEvent(kb.Enter))
		}},
	}
	var ids []string
	for _, c := range create {
		t.Run(c.name, func(t *testing.T) {
			before := len(ids)
			c.do()
			p.waitJS("a new terminal", fmt.Sprintf(`window.__termhost.views().filter(v => v.loaded).length === %d`, before+1), 15*time.Second)
			id := p.waitFocusedPrompt()
			ids = append(ids, id)
			p.typeHere(id, strings.ReplaceAll(c.name, " ", "_"))
		})
	}
	if len(ids) != len(create) {
		t.Fatalf("created %d terminals, want %d", len(ids), len(create))
	}
	cur := ids[len(ids)-1]

	t.Run("palette cancelled", func(t *testing.T) {
		p.do(chromedp.KeyEvent("p", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
		p.waitJS("the palette", `!document.querySelector('.quick-input-widget').hidden`, 5*time.Second)
		p.do(chromedp.KeyEvent(kb.Escape))
		p.waitJS("the keyboard back in the terminal", focusedTerminal+` === `+fmt.Sprintf("%q", cur), 5*time.Second)
		p.typeHere(cur, "cancelled")
	})
	t.Run("palette command run", func(t *testing.T) {
		p.do(chromedp.KeyEvent("p", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
		p.waitJS("the palette", `!document.querySelector('.quick-input-widget').hidden`, 5*time.Second)
		p.do(chromedp.SendKeys(chromedp.CSS(`.quick-input-box`), "Scroll to Bottom"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("the keyboard back in the terminal", focusedTerminal+` === `+fmt.Sprintf("%q", cur), 5*time.Second)
		p.typeHere(cur, "ran")
	})
	t.Run("ctrl p opens quick open", func(t *testing.T) {
		sent := len(p.sentInputs())
		p.do(chromedp.KeyEvent("p", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
		p.waitJS("Quick Open", `!document.querySelector('.quick-input-widget').hidden && document.querySelector('.quick-input-box').placeholder.startsWith('Type the name of a terminal')`, 5*time.Second)
		if in := p.sentInputs()[sent:]; len(in) > 0 {
			t.Errorf("Ctrl+P also went to the shell: %q", in)
		}
		p.do(chromedp.KeyEvent(kb.Escape))
		p.waitJS("the keyboard back in the terminal", focusedTerminal+` === `+fmt.Sprintf("%q", cur), 5*time.Second)
	})
	t.Run("ctrl p given back to the shell by the setting", func(t *testing.T) {
		p.eval(`(localStorage.setItem('termhost.commandsToSkipShell', '["-terminal.open"]'), true)`, nil)
		p.do(chromedp.Reload())
		p.waitOnline()
		id := p.evalString(`window.__termhost.active()`)
		p.waitJS("the terminal after reload", fmt.Sprintf(`window.__termhost.views().some(v => v.id === %q && v.loaded)`, id), 10*time.Second)
		p.do(chromedp.Focus(chromedp.CSS(fmt.Sprintf(`.terminal-view[data-terminal=%q] .xterm-helper-textarea`, id))))
		sent := len(p.sentInputs())
		p.do(chromedp.KeyEvent("p", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
		p.waitJS("Ctrl+P sent to the shell", fmt.Sprintf(`window.__termhost.sentInputs().slice(%d).includes('\x10')`, sent), 5*time.Second)
		if p.evalString(`String(document.querySelector(".quick-input-widget").hidden)`) != "true" {
			t.Errorf("Quick Open opened although the setting gives Ctrl+P to the shell")
		}
		p.eval(`(localStorage.removeItem('termhost.commandsToSkipShell'), true)`, nil)
		cur = id
	})
	t.Run("kill", func(t *testing.T) {
		p.do(chromedp.KeyEvent("p", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
		p.waitJS("the palette", `!document.querySelector('.quick-input-widget').hidden`, 5*time.Second)
		// typeText's Enter, as a keyboard's: chromedp.KeyEvent adds a char
		// event that would also press the dialog's focused button.
		p.do(chromedp.SendKeys(chromedp.CSS(`.quick-input-box`), "Kill the Active Terminal"), typeText("\r"))
		p.waitJS("the confirmation", `!!document.querySelector('.dialog-overlay')`, 5*time.Second)
		p.do(typeText("\r"))
		p.waitJS("the terminal gone", fmt.Sprintf(`!window.__termhost.views().some(v => v.id === %q)`, cur), 10*time.Second)
		p.waitJS("the keyboard in the next terminal", focusedTerminal+` !== '' && `+focusedTerminal+` === window.__termhost.active()`, 5*time.Second)
		p.typeHere(p.evalString(`window.__termhost.active()`), "after_kill")
	})
	t.Run("take control", func(t *testing.T) {
		id := p.evalString(`window.__termhost.active()`)
		b := e.newPage("second")
		b.open("/t/" + id)
		b.waitJS("the claim note", `document.querySelector('.terminal-view:not([hidden]) .terminal-claimbar:not([hidden])')?.textContent.includes('Take Control')`, 10*time.Second)
		b.click("the claim bar's button", `.terminal-view:not([hidden]) .terminal-claimbar button`)
		b.waitJS("our claim", fmt.Sprintf(`window.__termhost.view(%q).isHolder`, id), 5*time.Second)
		b.typeHere(id, "controlled")
	})
}

// New Terminal while the link is down is created once it is up,
// focused, never lost.
func TestNewTerminalWhileConnectingIsQueued(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	e.proxy.Refuse()
	p.eval(`(window.__termhost.dropConnection(), true)`, nil)
	p.waitJS("the link down", `window.__termhost.client.connection !== 'online'`, 10*time.Second)
	p.click("the welcome view's New Terminal", `#terminals-view .welcome-view button`)
	p.waitJS("the queued notice", `[...document.querySelectorAll('.notification-message')].some(m => m.textContent.includes('once the connection is up'))`, 5*time.Second)
	if n := len(e.m.Terminals()); n != 0 {
		t.Fatalf("%d terminals created while offline, want 0 until the link is up", n)
	}
	e.proxy.Accept()
	p.waitOnline()
	id := p.waitFocusedPrompt()
	p.typeHere(id, "queued")
}

// A first visit with no terminal running opens one, focused; a
// deep link or a running terminal does not add one.
func TestStartupTerminal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newFirstVisitPage("first")
	p.open("/")
	id := p.waitFocusedPrompt()
	p.typeHere(id, "startup")
	q := e.newFirstVisitPage("second")
	q.open("/")
	q.waitJS("the catalogue", `window.__termhost.catalogue().length === 1`, 10*time.Second)
	if n := len(e.m.Terminals()); n != 1 {
		t.Errorf("a second page with a terminal running: %d terminals on the server, want 1", n)
	}
}
