//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
)

// A CLI-style AHP client through nginx in each layout: Bearer auth,
// initialize, create, input echoed with its origin and the shell's output;
// a share link by Bearer is scoped and view only; revoking it closes its
// socket with 4003; an unauthenticated upgrade gets 401.
func TestNginxWebSocketClient(t *testing.T) {
	t.Parallel()
	for _, l := range []layout{underPrefix, atRoot, stripPrefix} {
		t.Run(l.name, func(t *testing.T) {
			e := newNginxEnv(t, l, false)
			wsURL := "ws" + strings.TrimPrefix(e.URL, "http") + "/ws"

			// Plain HTTP through nginx: health, and no page without a session.
			if code, _ := get(t, e.URL+"/healthz"); code != http.StatusOK {
				t.Errorf("GET %s/healthz = %d, want 200", e.URL, code)
			}
			if code, body := get(t, e.URL+"/"); code != http.StatusUnauthorized || !strings.Contains(body, "Sign in to termhost") {
				t.Errorf("GET %s/ without a session = %d, want 401 with the sign-in page", e.URL, code)
			}

			for _, auth := range []string{"", "Bearer wrong-token", "Basic " + e.token} {
				if _, status, err := dialWS(t, wsURL, auth); err == nil || status != http.StatusUnauthorized {
					t.Errorf("upgrade through nginx with Authorization %q: status %d (err %v), want 401", auth, status, err)
				}
			}

			c, _, err := dialWS(t, wsURL, "Bearer "+e.token)
			if err != nil {
				t.Fatalf("dial %s with the owner token: %v", wsURL, err)
			}
			initialize(t, c, "e2e-go-owner")
			const ch = "ahp-terminal:/gows"
			c.MustCall("createTerminal", map[string]any{"channel": ch, "claim": map[string]any{"kind": "client", "clientId": "e2e-go-owner"}, "cols": 80, "rows": 24})
			c.MustCall("subscribe", map[string]any{"channel": ch})
			seq := c.Dispatch(ch, map[string]any{"type": "terminal/input", "data": "echo through-$((40+2))\r"})
			echo := c.WaitAction("the echo of our input", func(env ahp.Envelope) bool {
				return env.Channel == ch && env.Origin != nil && env.Origin.ClientID == "e2e-go-owner" && env.Origin.ClientSeq == seq
			})
			if echo.RejectionReason != "" || echo.Action.Type != "terminal/input" {
				t.Fatalf("echo of our input: %+v", echo)
			}
			c.WaitOutput(ch, "through-42")

			// A share link: its URL is built from the public URL (nginx).
			var sh struct {
				ID  string `json:"id"`
				URL string `json:"url"`
			}
			if err := json.Unmarshal(c.MustCall("x-share/create", map[string]any{"channel": "ahp-root://", "terminal": ch, "role": "viewer", "ttlSeconds": 3600}), &sh); err != nil {
				t.Fatal(err)
			}
			prefix := e.URL + "/t/gows#share="
			if !strings.HasPrefix(sh.URL, prefix) {
				t.Fatalf("share url = %q, want prefix %q", sh.URL, prefix)
			}
			shareToken := strings.TrimPrefix(sh.URL, prefix)

			// The viewer link by Bearer, scoped to its terminal, through nginx.
			v, _, err := dialWS(t, wsURL+"?terminal=gows", "Bearer "+shareToken)
			if err != nil {
				t.Fatalf("dial as viewer: %v", err)
			}
			initialize(t, v, "e2e-go-viewer")
			v.MustCall("subscribe", map[string]any{"channel": ch})
			if _, err := v.Call("createTerminal", map[string]any{"channel": "ahp-terminal:/nope"}); err == nil || err.Code != -32009 {
				t.Errorf("viewer createTerminal: error %v, want -32009", err)
			}
			v.Dispatch(ch, map[string]any{"type": "terminal/input", "data": "echo viewer-typed\r"})
			rej := v.WaitAction("the rejection of the viewer's input", func(env ahp.Envelope) bool {
				return env.Origin != nil && env.Origin.ClientID == "e2e-go-viewer"
			})
			if !strings.HasPrefix(rej.RejectionReason, "view only: ") {
				t.Errorf("viewer input: rejectionReason %q, want “view only: …”", rej.RejectionReason)
			}

			// Revoking closes the viewer's socket with 4003, through nginx.
			c.MustCall("x-share/revoke", map[string]any{"channel": "ahp-root://", "id": sh.ID})
			if code := websocket.CloseStatus(v.WaitClosed()); code != 4003 {
				t.Errorf("viewer socket after revoke: close code %d, want 4003", code)
			}
			if _, status, err := dialWS(t, wsURL+"?terminal=gows", "Bearer "+shareToken); err == nil || status != http.StatusUnauthorized {
				t.Errorf("revoked link upgrade: status %d (err %v), want 401", status, err)
			}
			// The owner saw nothing of the viewer's keystrokes.
			c.Dispatch(ch, map[string]any{"type": "terminal/input", "data": "echo still-$((1+1))\r"})
			c.WaitOutput(ch, "still-2")
			if strings.Contains(c.Output(ch), "viewer-typed") {
				t.Errorf("the viewer's rejected input reached the shell:\n%s", c.Output(ch))
			}
			// And all of it really went through nginx.
			log := e.nginx.accessLog()
			for _, want := range []string{`"GET ` + l.prefix + `/ws?terminal=gows HTTP/1.1" 101 `, `"GET ` + l.prefix + `/ws HTTP/1.1" 401 `} {
				if !strings.Contains(log, want) {
					t.Errorf("nginx access log lacks %s:\n%s", want, log)
				}
			}
		})
	}
}

// login opens the owner's login URL (#token=…) and waits for the workbench.
func (p *page) login() {
	p.t.Helper()
	p.do(chromedp.Navigate(p.e.URL + "/#token=" + p.e.token))
	p.waitOnline()
	if href := p.evalString(`location.href`); strings.Contains(href, p.e.token) || strings.Contains(href, "token=") {
		p.fail("the token is still in the address bar: %s", href)
	}
}

// cookies returns the browser's cookies for url.
func (p *page) cookies(u string) []*network.Cookie {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	r, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{u}})
	if err != nil {
		p.fail("get cookies: %v", err)
	}
	return r.Cookies
}

// checkCookie asserts the session cookie's name prefix, path and flags.
func (p *page) checkCookie(prefix, path string) {
	p.t.Helper()
	var found bool
	for _, c := range p.cookies(p.e.URL + "/") {
		if !strings.HasPrefix(c.Name, prefix) {
			continue
		}
		found = true
		if c.Path != path || !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict {
			p.t.Errorf("%s: cookie %s: path %q httpOnly %v sameSite %q, want path %q, HttpOnly, Strict", p.name, c.Name, c.Path, c.HTTPOnly, c.SameSite, path)
		}
	}
	if !found {
		p.t.Errorf("%s: no %s* cookie for %s", p.name, prefix, p.e.URL)
	}
}

// openShareDialog opens the Share dialog with one of its entry points and
// waits for its list of links to load.
func (p *page) openShareDialog(how, id string) {
	p.t.Helper()
	switch how {
	case "tab":
		p.click("the Share action", `.editor-group.active .editor-actions .share-action`)
	case "sidebar":
		p.eval(fmt.Sprintf(`(document.querySelector('.terminal-item[data-terminal=%q] .share-action').click(), true)`, id), nil)
	case "palette":
		p.do(chromedp.KeyEvent("p", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
		p.waitJS("the command palette", `!document.querySelector('.quick-input-widget').hidden`, 5*time.Second)
		p.do(chromedp.SendKeys(chromedp.CSS(`.quick-input-box`), "Share Terminal"))
		p.waitJS("the Share command", `[...document.querySelectorAll('.quick-input-list-entry')].length === 1 && document.querySelector('.quick-input-list-entry').textContent.includes('Terminal: Share Terminal…')`, 5*time.Second)
		p.do(chromedp.KeyEvent(kb.Enter))
	}
	p.waitJS("the Share dialog", `document.querySelector('#share-dialog #share-list .share-item, #share-dialog #share-list .share-empty')`, 10*time.Second)
}

// createShare picks role and expiry in the open dialog, presses Create Link
// and returns the URL it shows.
func (p *page) createShare(role string, ttlSeconds int) string {
	p.t.Helper()
	before := p.evalString(`document.getElementById('share-url').value`)
	p.eval(fmt.Sprintf(`(() => {
		const r = document.getElementById('share-role'), x = document.getElementById('share-expiry');
		r.value = %q; x.value = %q;
		r.dispatchEvent(new Event('change')); x.dispatchEvent(new Event('change'));
		return r.value === %q && x.value === %q;
	})()`, role, fmt.Sprint(ttlSeconds), role, fmt.Sprint(ttlSeconds)), nil)
	p.do(chromedp.Click(chromedp.CSS(`#share-create`)))
	p.waitJS("the new share link", fmt.Sprintf(`(v => v && v !== %q)(document.getElementById('share-url').value)`, before), 10*time.Second)
	u := p.evalString(`document.getElementById('share-url').value`)
	if !strings.HasPrefix(u, p.e.URL+"/t/") || !strings.Contains(u, "#share=") {
		p.fail("share URL %q: want %s/t/<id>#share=…", u, p.e.URL)
	}
	return u
}

func (p *page) closeDialog() {
	p.t.Helper()
	p.do(chromedp.KeyEvent(kb.Escape))
	p.waitJS("the dialog to close", `!document.querySelector('.dialog-overlay')`, 5*time.Second)
}

// openShare opens a share link in a fresh incognito-like browser context
// (no owner cookie) and waits for the workbench.
func (e *env) openShare(name, link, wantRole, id, scheme string) *page {
	e.t.Helper()
	p := e.newPage(name, chromedp.WithNewBrowserContext())
	p.colorScheme(scheme)
	p.do(chromedp.Navigate(link))
	p.waitOnline()
	if r := p.evalString(`window.__termhost.role`); r != wantRole {
		p.fail("role = %q, want %q", r, wantRole)
	}
	if href := p.evalString(`location.href`); strings.Contains(href, "share=") {
		p.fail("the share token is still in the address bar: %s", href)
	}
	u, _ := url.Parse(e.URL)
	if ws := p.evalString(`window.__termhost.client.url`); ws != "ws://"+u.Host+u.Path+"/ws?terminal="+id {
		p.fail("WebSocket URL = %q, want ws://%s%s/ws?terminal=%s", ws, u.Host, u.Path, id)
	}
	p.waitJS("the shared terminal", fmt.Sprintf(`window.__termhost.views().some(v => v.id === %q && v.loaded)`, id), 10*time.Second)
	return p
}

// The whole sharing story behind nginx at /term/: owner login by token,
// a terminal, viewer and driver links from the Share dialog opened in
// separate browser contexts, server-side view-only enforcement, revocation,
// and an owner reload through the proxy.
func TestNginxSharingUnderPrefix(t *testing.T) {
	t.Parallel()
	e := newNginxEnv(t, underPrefix, true)
	owner := e.newPage("owner")
	owner.colorScheme("dark")
	owner.login()
	if path := owner.evalString(`location.pathname`); path != "/term/" {
		t.Errorf("after login: pathname %q, want /term/", path)
	}
	owner.checkCookie("termhost_session", "/term/")
	id := owner.newTerminal()
	owner.typeKeys(id, "echo hi"+kb.Enter)
	owner.waitLine(id, "hi", 10*time.Second)
	if s := owner.evalString(`document.getElementById('status.role').textContent`); s != "Owner" {
		t.Errorf("owner status bar role = %q, want Owner", s)
	}

	// Two links from the Share dialog (tab action).
	owner.openShareDialog("tab", id)
	viewerURL := owner.createShare("viewer", 3600)
	driverURL := owner.createShare("driver", 0)
	owner.waitJS("two links in the dialog", `document.querySelectorAll('#share-list .share-item').length === 2`, 5*time.Second)
	if s := owner.evalString(`document.querySelector('#share-list .share-item[data-role=viewer] .share-meta').textContent`); !strings.HasPrefix(s, "expires in 60 min") && !strings.HasPrefix(s, "expires in 1 h") {
		t.Errorf("viewer link expiry = %q, want “expires in 1 h”", s)
	}
	if s := owner.evalString(`document.querySelector('#share-list .share-item[data-role=driver] .share-meta').textContent`); !strings.HasPrefix(s, "never expires") {
		t.Errorf("driver link expiry = %q, want “never expires”", s)
	}
	owner.shot("share-dialog")
	owner.closeDialog()

	// The viewer: its own browser context, no owner cookie.
	viewer := e.openShare("viewer", viewerURL, "viewer", id, "dark")
	viewer.checkCookie("termhost_share_", "/term/")
	viewer.waitLine(id, "hi", 10*time.Second)
	viewer.waitJS("the View only banner", `document.getElementById('access-banner')?.textContent.includes('View only')`, 5*time.Second)
	if s := viewer.evalString(`document.getElementById('status.role').textContent`); !strings.Contains(s, "Viewer") {
		t.Errorf("viewer status bar role = %q, want Viewer", s)
	}
	if n := viewer.evalString(`document.querySelectorAll('.share-action, .terminal-item .row-actions [title="Kill Terminal"]').length`); n != "0" {
		t.Errorf("viewer page shows %s share/kill actions, want none", n)
	}
	if got := viewer.evalString(`window.__termhost.catalogue().map(t => t.resource).join()`); got != "ahp-terminal:/"+id {
		t.Errorf("viewer's catalogue = %q, want only its terminal", got)
	}
	owner.typeKeys(id, "echo from-owner"+kb.Enter)
	viewer.waitLine(id, "from-owner", 10*time.Second)

	// The viewer's keys: blocked in the page, and refused by the server
	// when sent anyway.
	viewer.typeKeys(id, "echo viewer-typed"+kb.Enter)
	if got := viewer.evalString(`window.__termhost.type('echo viewer-forced\r')`); got == "undefined" {
		t.Fatalf("forced dispatch from the viewer was not sent")
	}
	viewer.waitJS("the server's rejection", `[...document.querySelectorAll('.notification-toast')].some(t => t.textContent.includes('Input was refused by the server: view only: '))`, 10*time.Second)
	viewer.shot("viewer-page")
	owner.typeKeys(id, "echo marker-1"+kb.Enter)
	owner.waitLine(id, "marker-1", 10*time.Second)
	viewer.waitLine(id, "marker-1", 10*time.Second)
	for _, l := range owner.lines(id) {
		if strings.Contains(l, "viewer-") {
			t.Errorf("the viewer's input reached the shell: %q", l)
		}
	}

	// The driver types; the owner (and the viewer) see it.
	driver := e.openShare("driver", driverURL, "driver", id, "dark")
	driver.waitLine(id, "marker-1", 10*time.Second)
	if s := driver.evalString(`document.getElementById('status.role').textContent`); s != "Driver" {
		t.Errorf("driver status bar role = %q, want Driver", s)
	}
	if driver.evalString(`!!document.getElementById('access-banner')`) != "false" {
		t.Errorf("the driver's page shows the View only banner")
	}
	// Whoever has control types: the driver asks, the owner grants.
	driver.clickClaimBar("Request Control", ".claim-request")
	owner.click("Grant", requestToastSel+` button[data-action="Grant"]`)
	driver.waitHolder(id, true)
	driver.typeKeys(id, "echo from-driver-$((1+1))"+kb.Enter)
	owner.waitLine(id, "from-driver-2", 10*time.Second)
	viewer.waitLine(id, "from-driver-2", 10*time.Second)

	// Revoke the viewer link in the owner's dialog (side bar action).
	owner.openShareDialog("sidebar", id)
	owner.waitJS("two links", `document.querySelectorAll('#share-list .share-item').length === 2`, 5*time.Second)
	owner.do(chromedp.Click(chromedp.CSS(`#share-list .share-item[data-role=viewer] .share-revoke`)))
	owner.waitJS("one link left", `document.querySelectorAll('#share-list .share-item').length === 1 && document.querySelector('#share-list .share-item').dataset.role === 'driver'`, 5*time.Second)
	owner.closeDialog()
	viewer.waitJS("the revoked message", `(document.getElementById('ended-overlay')?.dataset.title ?? '') === 'This share link was revoked'`, 10*time.Second)
	if s := viewer.evalString(`window.__termhost.client.connection`); s != "closed" {
		t.Errorf("viewer connection after revoke = %q, want closed", s)
	}
	owner.clickClaimBar("Take Control", ".claim-take")
	owner.waitHolder(id, true)
	owner.typeKeys(id, "echo after-revoke"+kb.Enter)
	owner.waitLine(id, "after-revoke", 10*time.Second)
	driver.waitLine(id, "after-revoke", 10*time.Second)
	time.Sleep(1500 * time.Millisecond) // time for a reconnect attempt, were there one
	viewer.shot("revoked-page")
	if s := viewer.evalString(`window.__termhost.client.connection`); s != "closed" {
		t.Errorf("viewer reconnected after revoke: connection %q", s)
	}
	if strings.Contains(viewer.evalString(fmt.Sprintf(`window.__termhost.buffer(%q)`, id)), "after-revoke") {
		t.Errorf("the revoked viewer still received output")
	}
	// Reloading the revoked link shows the sign-in page, not the terminal.
	viewer.do(chromedp.Reload())
	viewer.waitJS("the sign-in page", `document.getElementById('login')`, 10*time.Second)

	// The owner reloads behind nginx: the scrollback comes back once.
	owner.do(chromedp.Reload())
	owner.waitOnline()
	owner.waitJS("the terminal after reload", fmt.Sprintf(`window.__termhost.active() === %q && window.__termhost.views().some(v => v.id === %q && v.loaded)`, id, id), 10*time.Second)
	owner.waitLine(id, "after-revoke", 10*time.Second)
	for _, want := range []string{"hi", "from-owner", "from-driver-2", "after-revoke"} {
		if n := owner.countLines(id, want); n != 1 {
			t.Errorf("after reload: %d lines %q, want 1\n%s", n, want, strings.Join(owner.lines(id), "\n"))
		}
	}
	if path := owner.evalString(`location.pathname`); path != "/term/t/"+id {
		t.Errorf("after reload: pathname %q, want /term/t/%s", path, id)
	}
}

// Behind nginx at /: login, a viewer link from the palette's Share
// command, live output in another browser context, reload, sign out.
func TestNginxAtRoot(t *testing.T) {
	t.Parallel()
	e := newNginxEnv(t, atRoot, true)
	owner := e.newPage("owner")
	owner.colorScheme("light")
	owner.login()
	owner.checkCookie("termhost_session", "/")
	id := owner.newTerminal()
	owner.typeKeys(id, "echo hi"+kb.Enter)
	owner.waitLine(id, "hi", 10*time.Second)
	owner.openShareDialog("palette", id)
	link := owner.createShare("viewer", 86400)
	owner.shot("share-dialog-light")
	owner.closeDialog()
	viewer := e.openShare("viewer", link, "viewer", id, "light")
	viewer.waitLine(id, "hi", 10*time.Second)
	viewer.shot("viewer-page-light")
	owner.typeKeys(id, "echo root-$((2*21))"+kb.Enter)
	viewer.waitLine(id, "root-42", 10*time.Second)

	owner.do(chromedp.Reload())
	owner.waitOnline()
	owner.waitLine(id, "root-42", 10*time.Second)
	if n := owner.countLines(id, "hi"); n != 1 {
		t.Errorf("after reload: %d lines “hi”, want 1", n)
	}

	// Sign Out drops the session: the reload shows the sign-in page. A
	// second tab of the same browser notices at its next reconnect.
	tab2 := e.newPage("owner-tab2")
	tab2.colorScheme("light")
	tab2.open("/")
	owner.eval(`(window.__termhost.run('account.signOut'), true)`, nil)
	owner.waitJS("the sign-out confirmation", `!!document.querySelector('.dialog-box .button.primary')`, 5*time.Second)
	owner.do(chromedp.Click(chromedp.CSS(`.dialog-box .button.primary`)))
	owner.waitJS("the sign-in page", `document.getElementById('login')`, 10*time.Second)
	for _, c := range owner.cookies(e.URL + "/") {
		if strings.HasPrefix(c.Name, "termhost_session_") {
			t.Errorf("owner cookie still set after Sign Out: %+v", c)
		}
	}
	tab2.eval(`(window.__termhost.dropConnection(), true)`, nil)
	tab2.waitJS("the signed-out message", `document.getElementById('ended-overlay')?.textContent.includes('You are signed out')`, 15*time.Second)
	if s := tab2.evalString(`window.__termhost.client.connection`); s != "closed" {
		t.Errorf("second owner tab after sign-out: connection %q, want closed", s)
	}
	tab2.shot("signed-out-light")
	// The viewer is not affected by the owner signing out.
	if s := viewer.evalString(`window.__termhost.client.connection`); s != "online" {
		t.Errorf("viewer connection after the owner signed out = %q", s)
	}
}

// nginx strips /term and sends X-Forwarded-Prefix (termhost trusts it):
// login, cookie path, WebSocket and a terminal all live under /term/.
func TestNginxStripPrefix(t *testing.T) {
	t.Parallel()
	e := newNginxEnv(t, stripPrefix, true)
	owner := e.newPage("owner")
	owner.login()
	if path := owner.evalString(`location.pathname`); path != "/term/" {
		t.Errorf("after login: pathname %q, want /term/", path)
	}
	owner.checkCookie("termhost_session", "/term/")
	if ws := owner.evalString(`window.__termhost.client.url`); !strings.HasSuffix(ws, "/term/ws") {
		t.Errorf("WebSocket URL = %q, want …/term/ws", ws)
	}
	id := owner.newTerminal()
	owner.typeKeys(id, "echo stripped"+kb.Enter)
	owner.waitLine(id, "stripped", 10*time.Second)
	if path := owner.evalString(`location.pathname`); path != "/term/t/"+id {
		t.Errorf("pathname %q, want /term/t/%s", path, id)
	}
}
