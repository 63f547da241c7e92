//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// A browser tab and what a test does with it: evaluate, wait, type, read
// the terminal, take screenshots.

// page is one browser tab.
type page struct {
	t    *testing.T
	e    *env
	ctx  context.Context
	name string

	mu   sync.Mutex
	logs []string
	exc  []string
}

// newPage opens a tab (fresh sessionStorage, so a fresh AHP clientId).
// chromedp.WithNewBrowserContext() makes it an incognito-like window with
// its own cookies.
//
// The tab's pages start without the startup terminal (the owner's page opens
// one when none runs): most tests create their terminals themselves. The
// first-visit tests use newFirstVisitPage.
func (e *env) newPage(name string, opts ...chromedp.ContextOption) *page {
	e.t.Helper()
	p := e.newFirstVisitPage(name, opts...)
	p.addInitScript(`try { if (localStorage.getItem('termhost.startupTerminal') === null) localStorage.setItem('termhost.startupTerminal', 'off') } catch {}`)
	return p
}

// newFirstVisitPage is newPage with the app's defaults: a user's first visit.
func (e *env) newFirstVisitPage(name string, opts ...chromedp.ContextOption) *page {
	e.t.Helper()
	ctx, cancel := chromedp.NewContext(e.browser, opts...)
	e.t.Cleanup(cancel)
	p := &page{t: e.t, e: e, ctx: ctx, name: name}
	msgs := chromedp.Console(ctx)
	if err := chromedp.Do(ctx); err != nil {
		e.t.Fatalf("%s: new tab: %v", name, err)
	}
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			p.mu.Lock()
			if m.IsException() {
				p.exc = append(p.exc, m.String())
			}
			p.logs = append(p.logs, fmt.Sprintf("[%s] %s", m.Type, m.Text))
			p.mu.Unlock()
		}
	}()
	e.t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.exc) > 0 {
			e.t.Errorf("%s: uncaught exceptions in the page:\n%s", name, strings.Join(p.exc, "\n"))
		}
		if e.t.Failed() {
			e.t.Logf("%s console:\n%s", name, strings.Join(p.logs, "\n"))
		}
	})
	return p
}

// do runs actions in the tab with a timeout.
func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.fail("chromedp: %v", err)
	}
}

// click clicks the element sel with the mouse once it exists. A click
// that finds its element replaced under it (the page re-rendered between
// the query and the click: "Could not find node with given id") is tried
// again on the new element, for up to patience × 10 s.
func (p *page) click(what, sel string) {
	p.t.Helper()
	deadline := time.Now().Add(patience * 10 * time.Second)
	for {
		p.waitJS(what, fmt.Sprintf(`!!document.querySelector(%q)`, sel), 10*time.Second)
		ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		cancel()
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "Could not find node") || time.Now().After(deadline) {
			p.fail("click %s: %v", what, err)
		}
	}
}

// evalRaw runs JavaScript (promises awaited) and returns its JSON value
// ("null" for undefined).
func (p *page) evalRaw(ctx context.Context, js string) (json.RawMessage, error) {
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte]("(async () => { const v = await ("+js+"); return v === undefined ? null : v; })()", chromedp.EvalAwaitPromise))
	return raw, err
}

// eval runs JavaScript and decodes the result into out.
func (p *page) eval(js string, out any) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	raw, err := p.evalRaw(ctx, js)
	if err != nil {
		p.fail("eval %s: %v", js, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			p.fail("eval %s: decode %s: %v", js, raw, err)
		}
	}
}

func (p *page) evalString(js string) string {
	p.t.Helper()
	var s string
	p.eval("String("+js+")", &s)
	return s
}

// patience is how many times the timeout written in a test a wait lets
// pass before it calls the page stuck: the figures are what a quiet
// machine needs, and a busy 2-core machine (two test runs at once, a
// build beside) was seen taking three times as long.
const patience = 3

// waitJS polls a JavaScript expression until it is truthy, for up to
// patience × timeout.
func (p *page) waitJS(what, js string, timeout time.Duration) {
	p.t.Helper()
	timeout *= patience
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
		// Awaited before the test: a promise (clipboard reads) is truthy.
		raw, err := p.evalRaw(ctx, "(async () => !!(await ("+js+")))()")
		cancel()
		if err == nil && string(raw) == "true" {
			return
		}
		if time.Now().After(deadline) {
			p.fail("timed out after %v waiting for %s (%s); last error: %v", timeout, what, js, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *page) fail(format string, args ...any) {
	p.t.Helper()
	msg := fmt.Sprintf(format, args...)
	// Dump what the user would see.
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	buf, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`window.__termhost ? String(window.__termhost.buffer() ?? '(no active terminal)') : '(app not loaded)'`))
	cancel()
	p.shot("failure-" + sanitize(p.t.Name()) + "-" + p.name)
	p.t.Fatalf("%s: %s\n--- active terminal buffer ---\n%s\n---", p.name, msg, buf)
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// shotDir is where screenshots go ($TMPDIR/termhost-shots).
func shotDir() string {
	return filepath.Join(os.TempDir(), "termhost-shots")
}

func (p *page) shot(name string) string {
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	if err := os.MkdirAll(shotDir(), 0o755); err != nil {
		p.t.Logf("screenshot dir: %v", err)
		return ""
	}
	path := filepath.Join(shotDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	p.t.Logf("screenshot: %s", path)
	return path
}

// open navigates and waits for the app to be connected.
func (p *page) open(path string) {
	p.t.Helper()
	p.do(chromedp.Navigate(p.e.URL + path))
	p.waitOnline()
}

func (p *page) waitOnline() {
	p.t.Helper()
	p.waitJS("the app to connect", `window.__termhost && window.__termhost.client.connection === 'online'`, 15*time.Second)
}

// colorScheme emulates prefers-color-scheme.
func (p *page) colorScheme(v string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}},
	}); err != nil {
		p.fail("emulate prefers-color-scheme %s: %v", v, err)
	}
}

// newTerminal creates a terminal through the UI (New Terminal button or the
// palette keybinding) and returns its id once its snapshot is on screen.
func (p *page) newTerminal() string {
	p.t.Helper()
	var before []string
	p.eval(`window.__termhost.views().map(v => v.id)`, &before)
	p.eval(`(window.__termhost.newTerminal(), true)`, nil)
	var id string
	deadline := time.Now().Add(patience * 15 * time.Second)
	for id == "" {
		var views []struct {
			ID     string `json:"id"`
			Loaded bool   `json:"loaded"`
		}
		p.eval(`window.__termhost.views()`, &views)
		for _, v := range views {
			if v.Loaded && !contains(before, v.ID) {
				id = v.ID
			}
		}
		if id == "" {
			if time.Now().After(deadline) {
				p.fail("new terminal did not load")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	p.waitPrompt(id)
	return id
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// waitPrompt waits for a shell prompt ("$" or "#" at the end) to be on screen.
func (p *page) waitPrompt(id string) {
	p.t.Helper()
	p.waitJS("a shell prompt", fmt.Sprintf(`/[$#]$/.test((window.__termhost.buffer(%q) || '').trimEnd())`, id), 15*time.Second)
}

// typeKeys focuses the terminal and types text with real key events, as a
// keyboard does: a keyDown that carries the text (keydown + keypress + input
// in the page) and a keyUp per character. chromedp's SendKeys sends a bare
// keyDown and a separate char event, which xterm.js 6 reads twice.
func (p *page) typeKeys(id, text string) {
	p.t.Helper()
	sel := fmt.Sprintf(`.terminal-view[data-terminal=%q] .xterm-helper-textarea`, id)
	p.do(chromedp.Focus(chromedp.CSS(sel)), typeText(text))
}

func typeText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, r := range text {
			down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Text: string(r), UnmodifiedText: string(r), Key: string(r)}
			switch {
			case r == '\r' || r == '\n':
				down = input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: "Enter", Code: "Enter", Text: "\r", UnmodifiedText: "\r", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
			case r >= 'a' && r <= 'z':
				down.Code = "Key" + strings.ToUpper(string(r))
				down.WindowsVirtualKeyCode = int64(r - 'a' + 'A')
			case r >= 'A' && r <= 'Z':
				down.Code = "Key" + string(r)
				down.WindowsVirtualKeyCode = int64(r)
				down.Modifiers = int64(chromedp.ModifierShift)
			case r >= '0' && r <= '9':
				down.Code = "Digit" + string(r)
				down.WindowsVirtualKeyCode = int64(r)
			case r == ' ':
				down.Code = "Space"
				down.WindowsVirtualKeyCode = 32
			}
			up := down
			up.Type = input.DispatchKeyEventTypeKeyUp
			up.Text, up.UnmodifiedText = "", ""
			for _, ev := range []input.DispatchKeyEventParams{down, up} {
				if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, ev); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// lines returns the terminal's buffer as lines.
func (p *page) lines(id string) []string {
	p.t.Helper()
	return strings.Split(p.evalString(fmt.Sprintf(`window.__termhost.buffer(%q) || ''`, id)), "\n")
}

// waitLine waits until some buffer line, trimmed, equals want.
func (p *page) waitLine(id, want string, timeout time.Duration) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf("line %q in terminal %s", want, id),
		fmt.Sprintf(`(window.__termhost.buffer(%q) || '').split('\n').some(l => l.trim() === %q)`, id, want), timeout)
}

func (p *page) countLines(id, want string) int {
	n := 0
	for _, l := range p.lines(id) {
		if strings.TrimSpace(l) == want {
			n++
		}
	}
	return n
}
