//go:build e2e

package e2e

// What the browser does with untrusted output and with sharing: replayed
// history never types into the shell, OSC 52, the Share dialog's driver
// warning, pages under the CSP, and no test hook on production pages.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers"
)

// queries prints every question a terminal emulator answers: DA1, DA2, CPR,
// DECXCPR, DSR, DECRQM (private and ANSI), XTVERSION, XTWINOPS 18t,
// DECRQSS, XTGETTCAP, OSC 10/11/4 colour queries, an OSC 52 clipboard read,
// and focus reporting switched on and off (xterm reports the focus at once).
const queries = `printf '\033[c\033[>c\033[6n\033[?6n\033[5n\033[?2004$p\033[4$p\033[>q\033[18t\033P$qm\033\\\033P+q544e\033\\\033]10;?\007\033]11;?\007\033]4;1;?\007\033]52;c;?\007\033[?1004h\033[?1004l'; echo`

// cliClient is an owner connection straight to the server (not through the
// cuttable proxy), as `termhost attach` would be: it answers no queries.
func (e *env) cliClient(clientID string) *wsClient {
	e.t.Helper()
	c, _, err := dialWS(e.t, "ws"+strings.TrimPrefix(e.backend.URL, "http")+"/ws", "Bearer "+e.token)
	if err != nil {
		e.t.Fatalf("dial the server as %s: %v", clientID, err)
	}
	initialize(e.t, c, clientID)
	return c
}

// waitPrompt waits for the shell's prompt at the end of the channel's output
// (the content of the subscribe answer, then live data)
// (typed-ahead input is lost while the shell integration starts).
func waitPrompt(t *testing.T, c *wsClient, ch string, subscribed json.RawMessage) {
	t.Helper()
	var res struct {
		Snapshot struct {
			State struct {
				Content []struct {
					Value  string `json:"value"`
					Output string `json:"output"`
				} `json:"content"`
			} `json:"state"`
		} `json:"snapshot"`
	}
	if err := json.Unmarshal(subscribed, &res); err != nil {
		t.Fatalf("subscribe answer %s: %v", subscribed, err)
	}
	var before strings.Builder
	for _, part := range res.Snapshot.State.Content {
		before.WriteString(part.Value + part.Output)
	}
	atPrompt := func(output string) bool {
		out := strings.TrimRight(before.String()+output, " ")
		return strings.HasSuffix(out, "$") || strings.HasSuffix(out, "#")
	}
	if !atPrompt(c.Output(ch)) {
		c.WaitOutputFunc("the prompt", ch, atPrompt)
	}
}

// runLine types line + Enter and returns the command line the shell
// integration reports for it once the command has finished.
func runLine(c *wsClient, ch string, line string) string {
	c.Dispatch(ch, map[string]any{"type": "terminal/input", "data": line + "\r"})
	ran := c.WaitAction("the command to start", func(env ahp.Envelope) bool {
		return env.Channel == ch && env.Action.Type == "terminal/commandExecuted"
	})
	c.WaitAction("the command to finish", func(env ahp.Envelope) bool {
		return env.Channel == ch && env.Action.Type == "terminal/commandFinished"
	})
	return ran.Action.CommandLine
}

// sentInputs is every terminal/input the page dispatched since it loaded.
func (p *page) sentInputs() []string {
	p.t.Helper()
	var got []string
	p.eval(`window.__termhost.sentInputs()`, &got)
	return got
}

// waitLoaded waits until the page shows terminal id and has parsed all it got.
func (p *page) waitLoaded(id string) {
	p.t.Helper()
	p.waitOnline()
	p.waitJS("the terminal", fmt.Sprintf(`window.__termhost.views().some(v => v.id === %q && v.loaded)`, id), 10*time.Second)
	p.eval(`window.__termhost.drained().then(() => true)`, nil)
}

// The questions in a terminal's history are answered by
// nobody — not by an owner page loading it, a second owner page, a reload,
// a viewer, nor a page resuming by reconnect replay; the shell's input line
// stays empty.
func TestReplayedQueriesNeverType(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	cli := e.cliClient("e2e-cli")
	const id = "replayq"
	ch := "ahp-terminal:/" + id
	cli.MustCall("createTerminal", map[string]any{"channel": ch, "claim": map[string]any{"kind": "client", "clientId": "e2e-cli"}, "cols": 100, "rows": 30})
	waitPrompt(t, cli, ch, cli.MustCall("subscribe", map[string]any{"channel": ch}))
	runLine(cli, ch, queries)

	var sh struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(cli.MustCall("x-share/create", map[string]any{"channel": "ahp-root://", "terminal": ch, "role": "viewer", "ttlSeconds": 3600}), &sh); err != nil {
		t.Fatal(err)
	}
	// The link names the server the CLI dialled; the browsers go through the proxy.
	viewerURL := strings.Replace(sh.URL, e.backend.URL, e.URL, 1)

	owner := e.newPage("owner")
	owner.login()
	owner.open("/t/" + id)
	owner.waitLoaded(id)
	second := e.newPage("owner-second-page")
	second.open("/t/" + id)
	second.waitLoaded(id)
	owner.do(chromedp.Reload())
	owner.waitLoaded(id)
	viewer := e.openShare("viewer", viewerURL, "viewer", id, "dark")
	viewer.waitLoaded(id)
	pages := []*page{owner, second, viewer}
	for _, p := range pages {
		if got := p.sentInputs(); len(got) != 0 {
			t.Fatalf("%s sent terminal/input while loading the terminal's history: %q, want nothing", p.name, got)
		}
	}

	// The questions again while the pages are offline: they come back to
	// them as a reconnect replay.
	e.proxy.Refuse()
	for _, p := range pages {
		p.waitJS("the page to go offline", `window.__termhost.client.connection !== 'online'`, 10*time.Second)
	}
	runLine(cli, ch, queries+"; echo replayed-$((40+2))")
	e.proxy.Accept()
	for _, p := range pages {
		p.eval(`(window.__termhost.client.retryNow(), true)`, nil)
		p.waitOnline()
		p.waitLine(id, "replayed-42", 10*time.Second)
		p.eval(`window.__termhost.drained().then(() => true)`, nil)
	}

	for _, p := range pages {
		if got := p.sentInputs(); len(got) != 0 {
			t.Errorf("%s sent terminal/input while resuming by reconnect replay: %q, want nothing", p.name, got)
		}
	}
	// And the shell's own view: the next command line is exactly what was typed.
	if got := runLine(cli, ch, "echo END"); got != "echo END" {
		t.Errorf("command line after the replays = %q, want %q (answers were typed into the shell)", got, "echo END")
	}
}

// focusEmulated makes the page behave as focused (headless windows are not).
func (p *page) focusEmulated() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		p.fail("focus emulation: %v", err)
	}
}

// grantClipboard lets pages of the env read and write the clipboard.
func (e *env) grantClipboard(p *page) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: e.URL,
			BrowserContextID: chromedp.FromContext(p.ctx).BrowserContextID}); err != nil {
			e.t.Fatalf("grant %s: %v", name, err)
		}
	}
}

func (p *page) clipboard() string {
	p.t.Helper()
	var s string
	p.eval(`navigator.clipboard.readText()`, &s)
	return s
}

// ESC]52;c;? is never answered; a program writes the
// clipboard only with the setting on (off by default, kept in
// localStorage) and never from replayed history. Also: the focused page
// still answers a live question (a program reading the cursor position).
func TestClipboardOSC52(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("owner")
	e.grantClipboard(p)
	p.focusEmulated()
	p.open("/")
	id := p.newTerminal()
	textarea := fmt.Sprintf(`.terminal-view[data-terminal=%q] .xterm-helper-textarea`, id)
	p.do(chromedp.Focus(chromedp.CSS(textarea)))
	p.eval(`navigator.clipboard.writeText('before').then(() => true)`, nil)

	typed := func(line string) {
		t.Helper()
		p.eval(fmt.Sprintf(`window.__termhost.type(%q)`, line+"\r"), nil)
	}
	b64 := func(s string) string { return fmt.Sprintf(`"$(printf %s | base64)"`, s) }

	// A read gets no answer at all.
	typed(`printf '\033]52;c;?\007'; echo read-$((1+1))`)
	p.waitLine(id, "read-2", 10*time.Second)
	p.eval(`window.__termhost.drained().then(() => true)`, nil)
	if got := p.sentInputs(); len(got) != 1 {
		t.Errorf("after an OSC 52 read the page sent %q, want only the typed command", got)
	}
	// A write with the setting off (the default) changes nothing.
	if v := p.evalString(`localStorage.getItem('termhost.osc52Write')`); v != "null" {
		t.Errorf("OSC 52 write setting by default = %q, want unset (off)", v)
	}
	typed(`printf '\033]52;c;%s\007' ` + b64("pwned") + `; echo off-$((1+1))`)
	p.waitLine(id, "off-2", 10*time.Second)
	p.eval(`window.__termhost.drained().then(() => true)`, nil)
	if got := p.clipboard(); got != "before" {
		t.Errorf("clipboard after an OSC 52 write with the setting off = %q, want %q", got, "before")
	}

	// Turned on from the palette's command: written while the tab has focus.
	p.eval(`(window.__termhost.run('settings.osc52Write'), true)`, nil)
	if v := p.evalString(`localStorage.getItem('termhost.osc52Write')`); v != "on" {
		t.Fatalf("OSC 52 write setting after the toggle = %q, want on", v)
	}
	p.do(chromedp.Focus(chromedp.CSS(textarea)))
	typed(`printf '\033]52;c;%s\007' ` + b64("allowed") + `; echo on-$((1+1))`)
	p.waitJS("the program's clipboard write", `(await navigator.clipboard.readText()) === 'allowed'`, 10*time.Second)

	// History never writes: a reload replays the writes above.
	p.eval(`navigator.clipboard.writeText('after').then(() => true)`, nil)
	p.do(chromedp.Reload())
	p.waitLoaded(id)
	if got := p.clipboard(); got != "after" {
		t.Errorf("clipboard after a reload replayed OSC 52 writes = %q, want %q", got, "after")
	}
	if got := p.sentInputs(); len(got) != 0 {
		t.Errorf("the reloaded page sent %q while replaying, want nothing", got)
	}

	// A live question in the focused page is still answered.
	p.do(chromedp.Focus(chromedp.CSS(textarea)))
	typed(`printf '\033[6n'; IFS= read -rs -t 5 -d R pos; echo "cpr:${pos#*[}"`)
	p.waitJS("the cursor position report", fmt.Sprintf(`(window.__termhost.buffer(%q) || '').split('\n').some(l => /^cpr:\d+;\d+$/.test(l.trim()))`, id), 10*time.Second)
}

// The Share dialog selects the viewer role by default and
// says, when driver is picked, that a driver link is the server user's shell.
func TestShareDialogWarnsAboutDriverLinks(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	owner := e.newPage("owner")
	owner.login()
	id := owner.newTerminal()
	owner.openShareDialog("tab", id)
	if r := owner.evalString(`document.getElementById('share-role').value`); r != "viewer" {
		t.Errorf("Share dialog default role = %q, want viewer", r)
	}
	note := owner.evalString(`document.getElementById('share-role-note').textContent`)
	if !strings.Contains(note, "cannot type") || strings.Contains(note, "shell") {
		t.Errorf("viewer note = %q, want a view-only note without shell access", note)
	}
	owner.eval(`(() => { const r = document.getElementById('share-role'); r.value = 'driver'; r.dispatchEvent(new Event('change')); return true; })()`, nil)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	want := fmt.Sprintf("A driver can type into this terminal: it is a shell running as %s on %s; anyone with the link can do anything that user can, including reading termhost’s own files", u.Username, host)
	note = owner.evalString(`document.getElementById('share-role-note').textContent`)
	if !strings.Contains(note, want) {
		t.Errorf("driver note = %q, want it to contain %q", note, want)
	}
	if owner.evalString(`document.getElementById('share-role-note').classList.contains('warning')`) != "true" {
		t.Errorf("the driver note is not shown as a warning")
	}
	owner.shot("share-dialog-driver-warning")
}

// watchCSP records the page's CSP violations (the listener is injected by
// the browser, so the CSP does not apply to it) in window.__cspViolations.
func (p *page) watchCSP() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	src := `window.__cspViolations = []; document.addEventListener('securitypolicyviolation', e => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`
	if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
		p.fail("inject the CSP listener: %v", err)
	}
}

// cspProblems is what the page reported against the CSP: violation events
// and console messages about the policy, and uncaught exceptions.
func (p *page) cspProblems() []string {
	p.t.Helper()
	var out []string
	p.eval(`window.__cspViolations || []`, &out)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.logs {
		if strings.Contains(l, "Content Security Policy") || strings.HasPrefix(l, "[exception]") {
			out = append(out, l)
		}
	}
	return out
}

// headerOf fetches url and returns one response header.
func headerOf(t *testing.T, url, name string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.Header.Get(name)
}

// The login page, the workbench and a share link's page
// get a CSP with script-src 'self' and run under it without a violation
// (the login script is a bundle now, not inline).
func TestPagesRunUnderCSP(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	for _, path := range []string{"/", "/t/none"} {
		csp := headerOf(t, e.URL+path, "Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "script-src 'self' 'unsafe-inline'") {
			t.Fatalf("GET %s: Content-Security-Policy %q, want script-src 'self' without inline scripts", path, csp)
		}
	}
	owner := e.newPage("owner")
	owner.watchCSP()
	owner.login() // the login page's script signs in: it ran
	id := owner.newTerminal()
	owner.openShareDialog("tab", id)
	link := owner.createShare("viewer", 3600)
	owner.closeDialog()
	viewer := e.newPage("viewer", chromedp.WithNewBrowserContext())
	viewer.watchCSP()
	viewer.do(chromedp.Navigate(link))
	viewer.waitOnline()
	viewer.waitLoaded(id)
	for _, p := range []*page{owner, viewer} {
		if got := p.cspProblems(); len(got) != 0 {
			t.Errorf("%s: CSP violations or exceptions: %q", p.name, got)
		}
	}
}

// appBundleRE finds the app's script in a page.
var appBundleRE = regexp.MustCompile(`src="(/static/dist/app[^"]*\.js\?v=[0-9a-f]+)"`)

// A production server (TestHooks off) serves pages
// without window.__termhost, an app bundle without the hook, and not the
// test build at all.
func TestProductionPageHasNoTestHook(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *handlers.Config) { c.TestHooks = false })
	code, html := e.httpGet("/")
	m := appBundleRE.FindStringSubmatch(html)
	if code != http.StatusOK || m == nil || !strings.HasPrefix(m[1], "/static/dist/app.js?") {
		t.Fatalf("GET / = %d, app script %v, want 200 loading /static/dist/app.js", code, m)
	}
	_, js := e.httpGet(m[1])
	if hook := regexp.MustCompile(`__termhost\b|sentInputs`).FindString(js); hook != "" || !strings.Contains(js, "__termhostVendor") {
		t.Errorf("production app.js: found %q (want no test hook), or it is not the app", hook)
	}
	if code, _ := e.httpGet("/static/dist/app-test.js"); code != http.StatusNotFound {
		t.Errorf("GET /static/dist/app-test.js on a production server = %d, want 404", code)
	}
	p := e.newPage("owner")
	p.do(chromedp.Navigate(e.URL + "/"))
	p.waitJS("the app to connect", `document.getElementById('status.protocol')?.textContent === 'AHP 1.0.0'`, 15*time.Second)
	if got := p.evalString(`typeof window.__termhost`); got != "undefined" {
		t.Errorf("typeof window.__termhost on a production page = %q, want undefined", got)
	}
}
