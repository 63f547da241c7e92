//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/termhost/termhost/handlers"
)

// newControlEnv is newAuthEnv with the auto-grant delay of control requests.
func newControlEnv(t *testing.T, autoGrant time.Duration) *env {
	t.Helper()
	token := "e2e-owner-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	e := newEnvWith(t, func(c *handlers.Config) {
		c.NoAuth, c.OwnerToken, c.ControlAutoGrant = false, token, autoGrant
	})
	e.token = token
	return e
}

// ownerWithDriver: the owner's page with a terminal, and a driver link
// labelled "alice" opened in its own browser context.
func ownerWithDriver(t *testing.T, e *env) (owner, driver *page, id string) {
	t.Helper()
	owner = e.newPage("owner", chromedp.WithNewBrowserContext())
	owner.login()
	id = owner.newTerminal()
	owner.openShareDialog("tab", id)
	owner.eval(`(document.getElementById('share-name').value = 'alice', true)`, nil)
	link := owner.createShare("driver", 0)
	owner.waitJS("the labelled link", `document.querySelector('#share-list .share-item[data-role=driver] .share-role')?.textContent.startsWith('alice')`, 5*time.Second)
	owner.closeDialog()
	driver = e.openShare("driver", link, "driver", id, "dark")
	return owner, driver, id
}

// claimBar is the JavaScript for the visible claim bar's element sel.
func claimBar(sel string) string {
	return `document.querySelector('.terminal-view:not([hidden]) .terminal-claimbar:not([hidden]) ` + sel + `')`
}

// requestToastSel is the notification of a request for control to us.
const requestToastSel = `.notification-toast[data-key^="control-request:"]:not(.closing)`

// requestToast is the JavaScript for it.
const requestToast = "document.querySelector('" + requestToastSel + "')"

func (p *page) clickClaimBar(what, sel string) {
	p.t.Helper()
	p.click(what, `.terminal-view:not([hidden]) .terminal-claimbar:not([hidden]) `+sel)
}

func (p *page) waitHolder(id string, want bool) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf("holder=%v", want), fmt.Sprintf(`window.__termhost.view(%q).isHolder === %v`, id, want), 10*time.Second)
}

// TestControlHandover: in two browser contexts the owner and a labelled
// driver link see each other by name; the driver requests control and the
// owner grants it; the owner takes it back; a second request is declined.
func TestControlHandover(t *testing.T) {
	t.Parallel()
	e := newControlEnv(t, time.Hour)
	owner, driver, id := ownerWithDriver(t, e)

	// Presence: avatars on the owner's tab, names in the driver's claim bar.
	owner.waitJS("two on the tab", fmt.Sprintf(`document.querySelector('.tab[data-terminal=%q] .presence-avatars')?.dataset.count === '2'`, id), 10*time.Second)
	hover := owner.evalString(fmt.Sprintf(`document.querySelector('.tab[data-terminal=%q] .presence-avatars').title`, id))
	if !strings.Contains(hover, "You (this tab)") || !strings.Contains(hover, "alice") || strings.Contains(hover, "web-") {
		t.Errorf("owner's presence list = %q, want You (this tab) and alice, no client ids", hover)
	}
	driver.waitJS("who controls", claimBar(".claim-holder")+`?.textContent.startsWith('Controlled by Owner (Chrome on Linux)')`, 10*time.Second)
	if s := driver.evalString(`document.getElementById('status.claim').textContent`); s != "Controlled by Owner (Chrome on Linux)" {
		t.Errorf("driver's status bar = %q, want the holder's label", s)
	}

	// The page says "Controlled by Owner · Request
	// Control", and that is what happens: the driver's keys do not run.
	t.Run("a driver without control cannot type", func(t *testing.T) {
		if s := driver.evalString(fmt.Sprintf(`String(window.__termhost.view(%q).term.options.disableStdin)`, id)); s != "true" {
			t.Errorf("the driver's terminal takes keystrokes without control (disableStdin %s)", s)
		}
		driver.typeKeys(id, "echo nope-$((6*7))"+kb.Enter)
		// And the server refuses them whatever the page does.
		driver.eval(fmt.Sprintf(`(window.__termhost.client.dispatch('ahp-terminal:/%s', { type: 'terminal/input', data: 'echo nope-$((6*7))\r' }), true)`, id), nil)
		owner.typeKeys(id, "echo owner-$((2+3))"+kb.Enter)
		driver.waitLine(id, "owner-5", 10*time.Second)
		if strings.Contains(owner.evalString(fmt.Sprintf(`window.__termhost.buffer(%q)`, id)), "nope-42") {
			t.Error("a driver without control ran a command")
		}
		driver.waitJS("the refusal", `[...document.querySelectorAll('.notification-toast')].some(t => t.textContent.includes('only the claim holder can type'))`, 10*time.Second)
	})
	t.Run("driver requests, owner grants", func(t *testing.T) {
		driver.clickClaimBar("Request Control", ".claim-request")
		owner.waitJS("the request", requestToast+`?.textContent.includes('alice asks for control')`, 10*time.Second)
		owner.click("Grant", requestToastSel+` button[data-action="Grant"]`)
		driver.waitHolder(id, true)
		owner.waitJS("the owner sees alice in control", claimBar(".claim-holder")+`?.textContent.startsWith('Controlled by alice')`, 10*time.Second)
		driver.typeKeys(id, "echo granted-$((2*4))"+kb.Enter)
		owner.waitLine(id, "granted-8", 10*time.Second)
	})
	t.Run("owner takes it back", func(t *testing.T) {
		owner.clickClaimBar("Take Control", ".claim-take")
		owner.waitHolder(id, true)
		driver.waitHolder(id, false)
	})
	t.Run("driver requests, owner declines", func(t *testing.T) {
		driver.clickClaimBar("Request Control", ".claim-request")
		driver.waitJS("waiting for an answer", "!!"+claimBar(".claim-waiting"), 10*time.Second)
		owner.waitJS("the request", "!!"+requestToast, 10*time.Second)
		owner.click("Decline", requestToastSel+` button[data-action="Decline"]`)
		driver.waitJS("the refusal", `[...document.querySelectorAll('.notification-toast')].some(t => t.textContent.includes('was declined'))`, 10*time.Second)
		if owner.evalString(fmt.Sprintf(`window.__termhost.view(%q).isHolder`, id)) != "true" {
			t.Error("the owner lost control after declining")
		}
	})
}

// TestControlAutoGrant: a holder that does not type hands control over by
// itself once the request has waited the auto-grant delay.
func TestControlAutoGrant(t *testing.T) {
	t.Parallel()
	e := newControlEnv(t, 500*time.Millisecond)
	_, driver, id := ownerWithDriver(t, e)
	driver.clickClaimBar("Request Control", ".claim-request")
	driver.waitHolder(id, true)
	driver.waitJS("why", `[...document.querySelectorAll('.notification-toast')].some(t => t.textContent.includes('holder was away'))`, 10*time.Second)
}
