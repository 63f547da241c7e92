//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/testserver"
)

// restartServer stops the server as a restart does (its WebSockets close,
// its shells die) and starts a new one, configured by configure, behind the
// same proxy address: the browser sees the same origin, cookies and all.
func (e *env) restartServer(configure func(*handlers.Config)) {
	e.t.Helper()
	e.proxy.Refuse() // down: connections cut, new ones refused
	e.srv.Close()
	e.backend.CloseClientConnections()
	e.backend.Close()
	e.m.Close()
	s := testserver.New(e.t, shellOptions(), testserver.NoAuth(), testserver.TestHooks(),
		testserver.Handlers(func(c *handlers.Config) {
			c.Version = "e2e"
			configure(c)
		}))
	e.m, e.hooks, e.srv, e.backend, e.home = s.Manager, s.Hooks, s.Handler, s.Server, s.Home
	e.proxy.Retarget(s.Listener.Addr().String())
	e.proxy.Accept()
}

// After a restart with the same owner token and state
// directory, an open tab reconnects without the sign-in page, says that
// termhost restarted and drops the terminals of before; it is not signed
// out, and it can open a new terminal at once.
// restartableOwner is a server with a state directory and a signed-in owner
// page that has printed "<marker>-42" in a new terminal; configure gives a
// restart the same token and state directory.
func restartableOwner(t *testing.T, marker string) (e *env, p *page, id string, configure func(*handlers.Config)) {
	t.Helper()
	token := "e2e-owner-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	stateDir := filepath.Join(t.TempDir(), "state")
	configure = func(c *handlers.Config) {
		c.NoAuth, c.OwnerToken, c.StateDir = false, token, stateDir
	}
	e = newEnvWith(t, configure)
	e.token = token
	p = e.newPage("owner")
	p.login()
	id = p.newTerminal()
	p.typeKeys(id, "echo "+marker+"-$((40+2))"+kb.Enter) // the output differs from the typed line
	p.waitLine(id, marker+"-42", 10*time.Second)
	return e, p, id, configure
}

func TestRestartKeepsTabSignedIn(t *testing.T) {
	t.Parallel()
	e, p, id, configure := restartableOwner(t, "before-restart")

	e.restartServer(configure)
	p.waitJS("the restart notice", `(document.getElementById('restart-banner')?.textContent ?? '').includes('termhost restarted — terminals from before the restart are gone')`, 30*time.Second)
	p.waitOnline()
	p.shot("workbench-restarted")

	var state struct {
		Ended     bool     `json:"ended"`
		Login     bool     `json:"login"`
		Views     []string `json:"views"`
		Catalogue int      `json:"catalogue"`
		Rows      int      `json:"rows"`
		Path      string   `json:"path"`
	}
	p.eval(fmt.Sprintf(`({
		ended: !!document.getElementById('ended-overlay') || document.getElementById('workbench').classList.contains('ended'),
		login: !document.getElementById('workbench'),
		views: window.__termhost.views().map(v => v.id),
		catalogue: window.__termhost.catalogue().length,
		rows: document.querySelectorAll('.terminal-item[data-terminal=%q]').length,
		path: location.pathname,
	})`, id), &state)
	if state.Ended || state.Login {
		t.Errorf("after the restart the tab is signed out or ended: %+v", state)
	}
	if contains(state.Views, id) || state.Catalogue != 0 || state.Rows != 0 {
		t.Errorf("the terminal from before the restart is still shown: %+v", state)
	}
	if banner := p.evalString(`document.getElementById('ended-banner')?.textContent ?? ''`); strings.Contains(banner, "signed out") {
		t.Errorf("the page says %q after a restart", banner)
	}

	// Still signed in: a new terminal works without a login.
	id2 := p.newTerminal()
	p.typeKeys(id2, "echo after-restart"+kb.Enter)
	p.waitLine(id2, "after-restart", 10*time.Second)
}

// restartKeepingTerminals restarts the HTTP side only, as an upgrade does
// (the shells and their state survive, the WebSockets close), with the same
// state directory behind the same proxy address.
func (e *env) restartKeepingTerminals(configure func(*handlers.Config)) {
	e.t.Helper()
	e.proxy.Refuse()
	e.srv.Close()
	e.backend.CloseClientConnections()
	e.backend.Close()
	cfg := handlers.Config{Manager: e.m, Hooks: e.hooks, Logger: testserver.Logger(e.t), Version: "e2e", TestHooks: true, NoAuth: true}
	configure(&cfg)
	srv, err := handlers.New(cfg)
	if err != nil {
		e.t.Fatalf("restart: %v", err)
	}
	backend := httptest.NewServer(srv)
	e.t.Cleanup(func() { srv.Close(); backend.Close() })
	e.srv, e.backend = srv, backend
	e.proxy.Retarget(backend.Listener.Addr().String())
	e.proxy.Accept()
}

// Share links live as long as their terminal. A viewer link
// made before a restart that kept its terminal (an upgrade) opens the same
// terminal afterwards, in a browser that never used it before, and an open
// owner tab stays signed in.
func TestShareLinkSurvivesRestartWithItsTerminal(t *testing.T) {
	t.Parallel()
	e, owner, id, configure := restartableOwner(t, "kept")

	cli := e.cliClient("e2e-cli-share")
	var sh struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(cli.MustCall("x-share/create", map[string]any{"channel": "ahp-root://", "terminal": "ahp-terminal:/" + id, "role": "viewer", "ttlSeconds": 3600}), &sh); err != nil {
		t.Fatal(err)
	}
	viewerURL := strings.Replace(sh.URL, e.backend.URL, e.URL, 1)

	e.restartKeepingTerminals(configure)

	viewer := e.openShare("viewer", viewerURL, "viewer", id, "dark")
	viewer.waitLoaded(id)
	viewer.waitLine(id, "kept-42", 10*time.Second)
	owner.waitOnline()
	if owner.evalString(`document.getElementById('workbench') ? 'workbench' : 'login'`) != "workbench" {
		t.Errorf("the owner tab is signed out after a restart that kept its terminals")
	}
	owner.typeKeys(id, "echo after-$((40+2))"+kb.Enter)
	viewer.waitLine(id, "after-42", 10*time.Second)
}

// After a plain restart (same token, shells gone)
// the owner's tab says so and opens a new terminal, as on a first visit; a
// viewer of a terminal that did not survive is told that, not "revoked".
// A restart with a new owner token signs the owner out and says why.
func TestRestartSaysWhatHappened(t *testing.T) {
	t.Parallel()
	token := "e2e-owner-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	stateDir := filepath.Join(t.TempDir(), "state")
	configure := func(c *handlers.Config) { c.NoAuth, c.OwnerToken, c.StateDir = false, token, stateDir }
	e := newEnvWith(t, configure)
	e.token = token
	owner := e.newFirstVisitPage("owner")
	owner.login()
	id := owner.waitFocusedPrompt() // the startup terminal
	cli := e.cliClient("e2e-cli-share")
	var sh struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(cli.MustCall("x-share/create", map[string]any{"channel": "ahp-root://", "terminal": "ahp-terminal:/" + id, "role": "viewer", "ttlSeconds": 3600}), &sh); err != nil {
		t.Fatal(err)
	}
	viewer := e.openShare("viewer", strings.Replace(sh.URL, e.backend.URL, e.URL, 1), "viewer", id, "dark")
	viewer.waitLoaded(id)

	e.restartServer(configure)
	owner.waitJS("the restart notice", `(document.getElementById('restart-banner')?.textContent ?? '').includes('terminals from before the restart are gone')`, 30*time.Second)
	// A terminal opens, as none runs; focused, ready to type.
	id2 := owner.waitFocusedPrompt()
	if id2 == id {
		t.Fatalf("the focused terminal after the restart is the old one %q", id)
	}
	owner.typeHere(id2, "after-restart")
	viewer.waitJS("the viewer's ended message", `(document.getElementById('ended-overlay')?.dataset.title ?? '') === 'termhost restarted — the shared terminal is gone'`, 40*time.Second)
	viewer.shot("viewer-after-restart")

	token = "e2e-new-owner-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	e.restartServer(configure)
	owner.waitJS("the owner's ended message", `(document.getElementById('ended-overlay')?.dataset.title ?? '') === 'Signed out: the owner token changed'`, 40*time.Second)
	owner.shot("owner-after-new-token")

	// Signing in again with the new login link, in the same tab
	// (its saved tabs name terminals that are gone), opens a terminal.
	e.token = token
	owner.login()
	if id3 := owner.waitFocusedPrompt(); id3 == id2 || id3 == id {
		t.Errorf("the terminal after the re-login is an old one: %q", id3)
	}
}
