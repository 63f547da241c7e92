// Package e2e drives the real termhost server with headless Chromium
// (chromedp): the workbench, real shells, reconnects, shell integration.
package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/terminals"
)

// chromiumPath finds the browser. A missing browser fails the test: these
// tests are the only check of the web app in a real browser.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("TERMHOST_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	t.Fatal("chromium not found: install the Debian package \"chromium\" (apt-get install -y chromium) or set TERMHOST_CHROMIUM")
	return ""
}

// env is one server (behind a cuttable proxy, or nginx) and one browser.
type env struct {
	t       *testing.T
	m       *terminals.Manager
	srv     *handlers.Server
	backend *httptest.Server
	proxy   *proxy
	URL     string // what the browser uses: the proxy's URL (with the base path behind nginx)
	browser context.Context
	home    string
	token   string // the owner token (empty with NoAuth)
	nginx   *nginx
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// newManager is the terminal manager of a test: bash with shell integration
// in a fresh home.
func newManager(t *testing.T, log *slog.Logger) (*terminals.Manager, string) {
	t.Helper()
	home := t.TempDir()
	m, err := terminals.NewManager(terminals.Config{
		Shell:            "/bin/bash",
		Cwd:              home,
		ShellIntegration: true,
		DisposeGrace:     500 * time.Millisecond,
		Logger:           log,
		Env: []string{
			"PATH=" + os.Getenv("PATH"),
			"HOME=" + home,
			"LANG=C.UTF-8",
			`PS1=\w $ `,
			"HISTFILE=/dev/null",
		},
	})
	if err != nil {
		t.Fatalf("terminals.NewManager: %v", err)
	}
	return m, home
}

// newEnv is a server without authentication (every page is the owner's)
// with the test build of the app (window.__termhost).
func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newAuthEnv is newEnv with an owner token: pages need a login, and share
// links give viewers and drivers their roles.
func newAuthEnv(t *testing.T) *env {
	t.Helper()
	token := "e2e-owner-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	e := newEnvWith(t, func(c *handlers.Config) {
		c.NoAuth = false
		c.OwnerToken = token
	})
	e.token = token
	return e
}

// newEnvWith is newEnv with changes to the server's configuration.
func newEnvWith(t *testing.T, configure func(*handlers.Config)) *env {
	t.Helper()
	log := testLogger(t)
	m, home := newManager(t, log)
	cfg := handlers.Config{Manager: m, Logger: log, Version: "e2e", NoAuth: true, TestHooks: true}
	if configure != nil {
		configure(&cfg)
	}
	srv, err := handlers.New(cfg)
	if err != nil {
		t.Fatalf("handlers.New: %v", err)
	}
	backend := httptest.NewServer(srv)
	p := newProxy(t, strings.TrimPrefix(backend.URL, "http://"))
	e := &env{t: t, m: m, srv: srv, backend: backend, proxy: p, URL: "http://" + p.addr(), home: home}
	cancelBrowser := e.startBrowser()
	t.Cleanup(func() {
		cancelBrowser()
		p.close()
		backend.CloseClientConnections()
		srv.Close()
		backend.Close()
		m.Close()
	})
	return e
}

// startBrowser starts headless Chromium with a fresh profile; the returned
// func stops it.
func (e *env) startBrowser() func() {
	t := e.t
	t.Helper()
	path := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoDefaultBrowserCheck,
		// Background tabs must keep rendering (the second viewer is one).
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("start chromium %s: %v", path, err)
	}
	e.browser = bctx
	return func() {
		cancelBrowser()
		cancelAlloc()
	}
}

// page is one browser tab.
type page struct {
	t      *testing.T
	e      *env
	ctx    context.Context
	cancel context.CancelFunc
	name   string

	mu   sync.Mutex
	logs []string
	exc  []string
}

// newPage opens a tab (fresh sessionStorage, so a fresh AHP clientId).
// chromedp.WithNewBrowserContext() makes it an incognito-like window with
// its own cookies.
func (e *env) newPage(name string, opts ...chromedp.ContextOption) *page {
	e.t.Helper()
	ctx, cancel := chromedp.NewContext(e.browser, opts...)
	e.t.Cleanup(cancel)
	p := &page{t: e.t, e: e, ctx: ctx, cancel: cancel, name: name}
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

// close closes the tab (its WebSocket goes away with it).
func (p *page) close() {
	p.cancel()
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

// waitJS polls a JavaScript expression until it is truthy.
func (p *page) waitJS(what, js string, timeout time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
		raw, err := p.evalRaw(ctx, "!!("+js+")")
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
	deadline := time.Now().Add(15 * time.Second)
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

// proxy is a TCP proxy in front of the server whose connections the test can
// cut (as a network failure would) and which can refuse connections for a while.
type proxy struct {
	t        *testing.T
	ln       net.Listener
	upstream string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newProxy(t *testing.T, upstream string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			_ = c.Close()
			continue
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c] = struct{}{}
		p.conns[u] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		pipe := func(dst, src net.Conn) {
			defer p.wg.Done()
			_, _ = io.Copy(dst, src)
			_ = dst.Close()
			_ = src.Close()
			p.mu.Lock()
			delete(p.conns, dst)
			delete(p.conns, src)
			p.mu.Unlock()
		}
		go pipe(u, c)
		go pipe(c, u)
	}
}

// cut drops every open connection; with down, new ones are refused until up().
func (p *proxy) cut(down bool) {
	p.mu.Lock()
	p.down = down
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
}

func (p *proxy) up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

func (p *proxy) close() {
	_ = p.ln.Close()
	p.cut(true)
	p.wg.Wait()
}

// httpGet fetches a page without the browser.
func (e *env) httpGet(path string) (int, string) {
	e.t.Helper()
	resp, err := http.Get(e.URL + path)
	if err != nil {
		e.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.EOF) {
		e.t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(b)
}
