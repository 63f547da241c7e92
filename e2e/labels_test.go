//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestSidebarOpensFocused: opening a terminal from the side bar puts the
// keyboard in it: what one types next goes to that terminal.
func TestSidebarOpensFocused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	first := p.newTerminal()
	second := p.newTerminal()
	p.click("the first terminal's tab", fmt.Sprintf(`.tab[data-terminal=%q]`, first))
	p.click("the second terminal's close button", fmt.Sprintf(`.tab[data-terminal=%q] .tab-close`, second))
	p.waitJS("the second terminal's tab closed", fmt.Sprintf(`!window.__termhost.view(%q)`, second), 10*time.Second)
	p.click("the second terminal in the side bar", fmt.Sprintf(`#sidebar .terminal-item[data-terminal=%q]`, second))
	p.waitJS("the keyboard in the opened terminal", terminalFocused(second), 10*time.Second)
	// Keys reach it once its content is loaded (until then it ignores them).
	p.waitJS("the opened terminal taking input", fmt.Sprintf(`window.__termhost.view(%q).canType`, second), 10*time.Second)
	p.do(typeText("echo focused-$((5*5))" + kb.Enter))
	p.waitLine(second, "focused-25", 10*time.Second)

	// A terminal this page never opened, the CLI's, opened from the side
	// bar of a page that shows no terminal.
	cli, _, err := dialWS(t, "ws"+strings.TrimPrefix(e.URL, "http")+"/ws", "")
	if err != nil {
		t.Fatal(err)
	}
	initialize(t, cli, "e2e-cli")
	cli.CreateTerminal("fromcli", "e2e-cli", nil)
	q := e.newPage("fresh")
	q.open("/")
	for _, id := range []string{first, second} {
		if q.evalString(fmt.Sprintf(`String(!!window.__termhost.view(%q))`, id)) == "true" {
			q.click("close "+id, fmt.Sprintf(`.tab[data-terminal=%q] .tab-close`, id))
		}
	}
	q.waitJS("the CLI's terminal in the side bar", `!!document.querySelector('#sidebar .terminal-item[data-terminal="fromcli"]')`, 10*time.Second)
	q.click("the CLI's terminal in the side bar", `#sidebar .terminal-item[data-terminal="fromcli"]`)
	q.waitJS("the terminal shown", `window.__termhost.view('fromcli')?.loaded === true`, 10*time.Second)
	q.waitJS("the keyboard in the opened terminal", terminalFocused("fromcli"), 10*time.Second)
}

// TestControlRequestShownOnce: the holder is told of a request for
// control once, in a notification with Grant and Decline, and nothing
// covers the terminal's first line; the notification goes when the
// request ends.
func TestControlRequestShownOnce(t *testing.T) {
	t.Parallel()
	e := newControlEnv(t, time.Hour)
	owner, driver, id := ownerWithDriver(t, e)
	owner.waitHolder(id, true)
	driver.clickClaimBar("Request Control", ".claim-request")
	toast := `[...document.querySelectorAll('.notification-toast:not(.closing)')].filter(t => t.textContent.includes('alice asks for control'))`
	owner.waitJS("the request's notification", toast+`.length === 1`, 10*time.Second)
	if n := owner.evalString(`String(document.querySelectorAll('.terminal-view:not([hidden]) .terminal-claimbar:not([hidden])').length)`); n != "0" {
		t.Errorf("%s bars over the holder's terminal as well as the notification, want none", n)
	}
	owner.click("Grant", requestToastSel+` button[data-action="Grant"]`)
	driver.waitHolder(id, true)
	owner.waitJS("the notification gone", toast+`.length === 0`, 10*time.Second)
}

// TestDriverNewTerminalSaysWhy: a driver's Ctrl+Shift+` (new terminal)
// says that only the owner opens terminals, instead of doing nothing.
func TestDriverNewTerminalSaysWhy(t *testing.T) {
	t.Parallel()
	e := newControlEnv(t, time.Hour)
	_, driver, id := ownerWithDriver(t, e)
	sel := fmt.Sprintf(`.terminal-view[data-terminal=%q] .xterm-helper-textarea`, id)
	driver.do(chromedp.Focus(chromedp.CSS(sel)), chromedp.KeyEvent("`", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
	driver.waitJS("the reason", `[...document.querySelectorAll('.notification-toast')].some(t => t.textContent.includes('Only the owner can open terminals'))`, 10*time.Second)
	if n := driver.evalString(`String(window.__termhost.views().length)`); n != "1" {
		t.Errorf("the driver's page has %s terminals, want its one", n)
	}
}

// TestSSOOwnerLabels: behind real nginx and the SSO proxy, Alice (an
// owner) sees the owner token's CLI connection as the owner's, not as
// herself, and her status bar names her with her role.
func TestSSOOwnerLabels(t *testing.T) {
	t.Parallel()
	s := newNginxSSOEnv(t, true)
	_, id := s.cliTerminal()
	alice := s.signIn("alice", "/t/"+id)
	alice.waitJS("the terminal", fmt.Sprintf(`window.__termhost.views().some(v => v.id === %q && v.loaded)`, id), 15*time.Second)
	if r := alice.evalString(`document.getElementById('status.role').textContent`); r != "Alice Smith · Owner" {
		t.Errorf("alice's status bar role = %q, want her name and role", r)
	}
	alice.waitJS("the CLI's connection in control", claimBar(".claim-holder")+`?.textContent.startsWith('Controlled by Owner')`, 15*time.Second)
	if h := alice.evalString(claimBar(".claim-holder") + `.textContent`); strings.Contains(h, "You") {
		t.Errorf("alice's claim bar = %q: the owner token's CLI is not her", h)
	}
}

// TestSSOViewerLandsOnTerminal: Bob (a viewer) who opens the workbench
// itself, not a terminal's page, is shown the running terminal with its
// holder named, and his status bar names him with his role.
func TestSSOViewerLandsOnTerminal(t *testing.T) {
	t.Parallel()
	s := newNginxSSOEnv(t, true)
	_, id := s.cliTerminal()
	bob := s.signIn("bob", "/")
	bob.waitJS("a terminal shown", fmt.Sprintf(`window.__termhost.views().some(v => v.id === %q && v.loaded)`, id), 15*time.Second)
	bob.waitJS("the holder by name", claimBar(".claim-holder")+`?.textContent.startsWith('Controlled by Owner')`, 15*time.Second)
	if r := bob.evalString(`document.getElementById('status.role').textContent`); r != "Bob Jones · Viewer · View Only" {
		t.Errorf("bob's status bar role = %q, want his name and role", r)
	}
}

// TestSidebarFollowsGoneHolder: a tab that held a terminal closes; once
// its claim's grace is over with nobody there to take it, the side bar of
// another tab (which does not show that terminal) says nobody controls
// it, as termhost ls does, instead of "someone else".
func TestSidebarFollowsGoneHolder(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, nil, testserver.Terminals(func(c *terminals.Config) { c.ClaimGrace = 300 * time.Millisecond }))
	holder := e.newPage("holder")
	holder.open("/")
	id := holder.newTerminal()
	other := e.newPage("other")
	other.open("/")
	row := fmt.Sprintf(`document.querySelector('#sidebar .terminal-item[data-terminal=%q] .terminal-holder')?.textContent`, id)
	other.waitJS("someone else in control", row+` === ' · someone else'`, 10*time.Second)
	if err := chromedp.Cancel(holder.ctx); err != nil { // the tab closes
		t.Fatal(err)
	}
	other.waitJS("nobody in control", row+` === ' · nobody'`, 15*time.Second)
}

// TestShellStartingNotice: a shell whose rc file is slow (here it waits
// for a file the test creates) shows "Shell starting…" instead of a blank
// pane, until its first output.
func TestShellStartingNotice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gate := filepath.Join(e.home, "rc-go")
	rc := fmt.Sprintf("while [ ! -e %q ]; do sleep 0.05; done\n", gate)
	if err := os.WriteFile(filepath.Join(e.home, ".bashrc"), []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	p := e.newPage("tab")
	p.open("/")
	p.eval(`(window.__termhost.newTerminal(), true)`, nil)
	notice := `document.querySelector('.terminal-view:not([hidden]) .terminal-starting:not([hidden])')`
	p.waitJS("the notice", notice+`?.textContent === 'Shell starting…'`, 15*time.Second)
	var id string
	p.eval(`window.__termhost.views()[0].id`, &id)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.waitPrompt(id)
	p.waitJS("the notice gone", "!"+notice, 10*time.Second)
}
