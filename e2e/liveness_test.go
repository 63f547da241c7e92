//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/termhost/termhost/internal/testserver"
)

// Short liveness timings for the page's client (the defaults are 5 s + 5 s).
const (
	pingInterval = 300 * time.Millisecond
	pingTimeout  = 700 * time.Millisecond
	openTimeout  = 1500 * time.Millisecond
)

// withClientTimings makes the test build's client use short liveness
// timings in every document the tab loads from now on.
func (p *page) withClientTimings() {
	p.t.Helper()
	js := fmt.Sprintf(`window.__termhostClientOptions = {pingIntervalMs: %d, pingTimeoutMs: %d, openTimeoutMs: %d};`,
		pingInterval.Milliseconds(), pingTimeout.Milliseconds(), openTimeout.Milliseconds())
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: js}); err != nil {
		p.fail("add the client timings script: %v", err)
	}
}

// TestDeadLinkShowsReconnecting: a network path that
// stops forwarding without closing (a frozen proxy) is noticed within the
// ping interval + timeout: the page says Reconnecting…, never "Connected",
// and blocks input; once the path comes back (resume), or its held
// connections are dropped (cut), it recovers by replay with every line
// exactly once and nothing typed meanwhile executed.
func TestDeadLinkShowsReconnecting(t *testing.T) {
	for _, tc := range []struct {
		name    string
		recover func(p *testserver.Proxy)
	}{
		{"resume", func(p *testserver.Proxy) { p.Resume() }},
		{"cut", func(p *testserver.Proxy) { p.Cut(); p.Resume() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.newPage("tab")
			p.withClientTimings()
			p.open("/")
			id := p.newTerminal()
			const ticks = 12
			p.typeKeys(id, fmt.Sprintf("for i in $(seq 1 %d); do echo tick-$i; sleep 0.25; done; echo loop-done", ticks)+kb.Enter)
			p.waitLine(id, "tick-1", 10*time.Second)

			e.proxy.Freeze()
			// Bounded: before the fix the page said "Connected" for minutes.
			p.waitJS("Reconnecting… in the status bar and the banner",
				`document.getElementById('status.connection').textContent.includes('Reconnecting') && !document.getElementById('offline-banner').hidden && document.getElementById('workbench').classList.contains('offline')`,
				pingInterval+pingTimeout+3*time.Second)
			p.shot("dead-link-" + tc.name)
			if got := p.evalString(`String(window.__termhost.type('echo lost\r'))`); got != "undefined" {
				t.Errorf("dispatch over a dead link returned %s, want undefined (blocked)", got)
			}
			p.typeKeys(id, "echo lost2"+kb.Enter)
			if s := p.evalString(`document.getElementById('status.connection').textContent`); strings.Contains(s, "Connected") {
				t.Errorf("status bar says %q over a dead link", s)
			}

			tc.recover(e.proxy)
			p.waitOnline()
			p.waitLine(id, "loop-done", 15*time.Second)
			p.waitPrompt(id)
			for i := 1; i <= ticks; i++ {
				if n := p.countLines(id, "tick-"+strconv.Itoa(i)); n != 1 {
					t.Errorf("after recovery: %d lines tick-%d, want exactly 1\n%s", n, i, strings.Join(p.lines(id), "\n"))
				}
			}
			p.typeKeys(id, "echo back"+kb.Enter)
			p.waitLine(id, "back", 10*time.Second)
			for _, l := range p.lines(id) {
				if s := strings.TrimSpace(l); s == "lost" || s == "lost2" {
					t.Errorf("input typed over the dead link was executed: %q", l)
				}
			}
			p.waitJS("a latency measured on the new link", `/Connected · [0-9.]+ ms/.test(document.getElementById('status.connection').textContent)`, 5*time.Second)
		})
	}
}
