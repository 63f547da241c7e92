//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
)

// TestCopyLinkUsesPublicURL: the owner's page, opened at the server's own
// address while its public URL (--public-url, behind a proxy that strips
// /term) is elsewhere, copies the terminal's link on the public URL, as
// the server states it in initialize: the link a teammate can open.
func TestCopyLinkUsesPublicURL(t *testing.T) {
	t.Parallel()
	const token = "e2e-public-url-owner-token"
	var public string
	s := testserver.NewAt(t, func(u string) []testserver.Option {
		// The page's own origin, so its WebSocket is allowed; another path.
		public = u + "/term"
		return []testserver.Option{shellOptions(), testserver.TestHooks(), testserver.Handlers(func(c *handlers.Config) {
			c.Version, c.OwnerToken, c.PublicURL = "e2e", token, public+"/"
		})}
	})
	e := &env{t: t, m: s.Manager, hooks: s.Hooks, srv: s.Handler, backend: s.Server, URL: s.URL, home: s.Home, token: token}
	t.Cleanup(e.startBrowser())
	p := e.newPage("owner")
	e.grantClipboard(p)
	p.do(chromedp.Navigate(e.URL + "/#token=" + token))
	p.waitOnline()
	id := p.newTerminal()
	p.eval(`(window.__termhost.run('terminal.copyLink'), true)`, nil)
	want := public + "/t/" + id
	var got string
	// clipboard() awaits the read; the copy itself is asynchronous.
	if !poll.Eventually(patience*5*time.Second, func() bool { got = p.clipboard(); return got == want }) {
		t.Errorf("Copy Link to Terminal copied %q, want %q (the public URL)", got, want)
	}
}
