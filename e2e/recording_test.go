//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestRecordingUI: the owner starts a recording from the
// command palette, the side bar shows the red dot, the download commands
// fetch the .cast and the plain text, and stopping removes the dot.
func TestRecordingUI(t *testing.T) {
	t.Parallel()
	s := testserver.New(t, shellOptions(), testserver.NoAuth(), testserver.TestHooks(),
		testserver.Terminals(func(c *terminals.Config) { c.RecordDir = t.TempDir() }),
		testserver.Handlers(func(c *handlers.Config) { c.Version = "e2e" }))
	proxy := testserver.NewProxy(t, s.Listener.Addr().String())
	e := &env{t: t, m: s.Manager, srv: s.Handler, backend: s.Server, proxy: proxy, URL: proxy.URL(), home: s.Home}
	t.Cleanup(e.startBrowser())
	p := e.newPage("owner")
	p.open("/")
	id := p.newTerminal()
	dot := fmt.Sprintf(`!!document.querySelector('#terminals-view .terminal-item[data-terminal=%q] .recording-dot')`, id)
	// Downloads are anchors clicked by the page: keep their URLs instead.
	p.eval(`(window.__downloads = [], HTMLAnchorElement.prototype.click = function () { window.__downloads.push(this.href) }, true)`, nil)

	p.run(t, "start recording shows the dot", func(t *testing.T) {
		p.eval(`(window.__termhost.run('terminal.startRecording'), true)`, nil)
		p.waitJS("the red dot", dot, 5*time.Second)
		p.typeKeys(id, "printf 'rec''orded-\\033[1mbold\\n'"+kb.Enter)
		p.waitLine(id, "recorded-bold", 10*time.Second)
	})
	download := func(t *testing.T, command, want string) {
		t.Helper()
		p.eval(fmt.Sprintf(`(window.__termhost.run(%q), true)`, command), nil)
		p.waitJS("a download", `window.__downloads.length > 0`, 5*time.Second)
		// The recorder writes in the background: fetch until the command's output is in.
		var ok bool
		p.eval(fmt.Sprintf(`(async () => { const u = window.__downloads[window.__downloads.length - 1];
			for (let i = 0; i < 60; i++) { const t = await (await fetch(u)).text(); if (t.includes(%q)) return true; await new Promise(r => setTimeout(r, 50)); }
			return false })()`, want), &ok)
		if !ok {
			t.Errorf("%s: the download never held %q", command, want)
		}
	}
	p.run(t, "download the recording", func(t *testing.T) {
		download(t, "terminal.downloadRecording", `"version":2`)
		download(t, "terminal.downloadRecording", `recorded-\u001b[1mbold`)
	})
	p.run(t, "download the output as text", func(t *testing.T) {
		download(t, "terminal.downloadOutput", "recorded-bold\n")
		var text string
		p.eval(`fetch(window.__downloads[window.__downloads.length - 1]).then(r => r.text())`, &text)
		if strings.Contains(text, "\x1b") {
			t.Errorf("output.txt holds escape sequences: %q", text)
		}
	})
	p.run(t, "stop recording removes the dot", func(t *testing.T) {
		p.eval(`(window.__termhost.run('terminal.stopRecording'), true)`, nil)
		p.waitJS("no red dot", "!"+dot, 5*time.Second)
	})
}
