//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/testserver"
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
	hooks   *handlers.Hooks // m's, for a server built over m again
	srv     *handlers.Server
	backend *httptest.Server
	proxy   *testserver.Proxy
	URL     string // what the browser uses: the proxy's URL (with the base path behind nginx)
	browser context.Context
	home    string
	token   string // the owner token (empty with NoAuth)
	nginx   *nginx
}

// shellOptions make the server's shells bash with shell integration in a
// fresh home, as a user's would be.
func shellOptions() testserver.Option {
	return testserver.Terminals(func(c *terminals.Config) {
		home := c.Cwd
		c.Shell, c.ShellArgs, c.ShellIntegration = "/bin/bash", nil, true
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", `PS1=\w $ `, "HISTFILE=/dev/null"}
	})
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

// newEnvWith is newEnv with changes to the server's configuration (and
// more test server options, applied last).
func newEnvWith(t *testing.T, configure func(*handlers.Config), opts ...testserver.Option) *env {
	t.Helper()
	s := testserver.New(t, append([]testserver.Option{shellOptions(), testserver.NoAuth(), testserver.TestHooks(),
		testserver.Handlers(func(c *handlers.Config) {
			c.Version = "e2e"
			if configure != nil {
				configure(c)
			}
		})}, opts...)...)
	p := testserver.NewProxy(t, s.Listener.Addr().String())
	e := &env{t: t, m: s.Manager, hooks: s.Hooks, srv: s.Handler, backend: s.Server, proxy: p, URL: p.URL(), home: s.Home}
	t.Cleanup(e.startBrowser())
	return e
}

// startBrowser opens a fresh browser context (its own cookies, storage and
// permissions, like a new profile) in the package's Chromium, started by the
// first test that needs it; the returned func closes the context.
func (e *env) startBrowser() func() {
	t := e.t
	t.Helper()
	root := chromium.get(t)
	bctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(bctx); err != nil {
		cancel()
		t.Fatalf("new browser context: %v", err)
	}
	e.browser = bctx
	return cancel
}

// chromium is the package's headless Chromium: one process for every test
// (launching one per test took a second or more of each test on a loaded
// machine), each test in a browser context of its own. TestMain stops it.
var chromium sharedBrowser

type sharedBrowser struct {
	mu      sync.Mutex
	ctx     context.Context // the browser's first tab; done once it is gone
	stop    func()
	profile string
}

// get returns the running browser's context, starting Chromium when none
// runs (the first call, or after the browser died: the test that killed it
// fails, not every test after it).
func (b *sharedBrowser) get(t *testing.T) context.Context {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx != nil && b.ctx.Err() == nil {
		return b.ctx
	}
	b.stopLocked()
	path := chromiumPath(t)
	profile, err := os.MkdirTemp("", "termhost-e2e-chromium-")
	if err != nil {
		t.Fatal(err)
	}
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
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	b.ctx, b.profile = bctx, profile
	b.stop = func() {
		cancelBrowser()
		cancelAlloc()
	}
	if err := chromedp.Do(bctx); err != nil {
		b.stopLocked()
		t.Fatalf("start chromium %s: %v", path, err)
	}
	return b.ctx
}

// close stops the browser, if one runs, and removes its profile.
func (b *sharedBrowser) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopLocked()
}

func (b *sharedBrowser) stopLocked() {
	if b.stop != nil {
		b.stop()
		_ = os.RemoveAll(b.profile)
	}
	b.ctx, b.stop, b.profile = nil, nil, ""
}

func TestMain(m *testing.M) {
	code := m.Run()
	chromium.close()
	termhostBinary.remove()
	os.Exit(code)
}

// termhostBinary is cmd/termhost built once for the tests that run it as
// a process of its own (each building it again cost a link of the whole
// program).
var termhostBinary builtOnce

type builtOnce struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// buildTermhost returns the path of cmd/termhost, built on the first call.
func buildTermhost(t *testing.T) string {
	t.Helper()
	b := &termhostBinary
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "termhost-e2e-bin-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "termhost")
		if out, err := exec.Command("go", "build", "-o", b.path, "../cmd/termhost").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func (b *builtOnce) remove() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
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
