package cli

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/label"
)

const shareAbout = `Create a share link for a terminal and print its URL on stdout. Whoever opens
the link sees that one terminal, and nothing else on the server: a viewer
only watches; a driver may also type, resize, take the claim, rename and
clear. The secret travels in the URL's fragment; links can be revoked in the
web app.

A viewer link (the default) is the safe choice. A driver link is full shell
access as the server's Unix user: whoever holds it can run any command there,
so they can read the owner token file or the server's environment and become
owner of every terminal. Give a driver link only to someone you would trust
with that account.

The link is made with termhost's AHP extension command x-share/create.`

const shareExamples = `  termhost share 3f2c9a1b0d4e
  termhost share --role driver --ttl 24h --label alice 3f2c9a1b0d4e
  termhost share --ttl 0 http://127.0.0.1:7681/t/3f2c9a1b0d4e   # never expires`

// shareCommand is "termhost share".
func (a *app) shareCommand(args []string) int {
	f := newCmdFlags("share", "share [flags] <id|url>", shareAbout, shareExamples)
	role := f.String("role", "viewer", "what the link allows: viewer (read-only, the safe choice) or driver (full shell\n      access as the server's Unix user: it can read the owner token and become owner)")
	ttlFlag := f.String("ttl", defaultShareTTL, "how long the link works: e.g. 1h, 24h, 7d, or 0 for no expiry")
	label := f.String("label", "", "who the link is for (e.g. alice): its name for everyone on the terminal")
	pos, code, ok := f.parse(a, args, false)
	if !ok {
		return code
	}
	t, code, ok := a.oneTarget(f, pos)
	if !ok {
		return code
	}
	if err := checkRole(*role); err != nil {
		return a.failf("share", "--role: %v", err)
	}
	ttl, err := parseTTL(*ttlFlag)
	if err != nil {
		return a.failf("share", "--ttl: %v", err)
	}
	ctx := context.Background()
	c, base, code := a.connect(ctx, "share", f.conn, client.Options{})
	if c == nil {
		return code
	}
	defer func() { _ = c.Close() }()
	if code, ok := a.checkPublic("share", f.conn, c, t); !ok {
		return code
	}
	cctx, cancel := context.WithTimeout(ctx, f.conn.timeout)
	defer cancel()
	sh, err := createShareLabelled(cctx, c, t.id, *role, *label, ttl)
	if err != nil {
		return a.fail("share", base, err)
	}
	fmt.Fprintln(a.stdout, sh.URL)
	fmt.Fprintf(a.stderr, "termhost: share link to %s (%s)\n", t.id, describeShare(sh))
	return exitOK
}

// defaultShareTTL is how long a share link works unless --ttl says
// otherwise: the same as the Share dialog's default (DEFAULT_SHARE_TTL_SECONDS
// in assets/workbench/share.ts; TestShareDefaultTTL keeps them equal).
const defaultShareTTL = "24h"

func checkRole(role string) error {
	if role != "viewer" && role != "driver" {
		return fmt.Errorf("want viewer or driver, got %q", role)
	}
	return nil
}

// parseTTL reads a link lifetime: a Go duration ("90m", "24h"), whole days
// ("7d"), or 0 / "never" for no expiry. It is at least a second.
func parseTTL(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "0", "never", "":
		return 0, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, fmt.Errorf("want e.g. 1h, 24h, 7d or 0, got %q", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("want e.g. 1h, 24h, 7d or 0, got %q", s)
		}
	}
	if d < time.Second {
		return 0, fmt.Errorf("must be at least 1s (or 0 for no expiry), got %q", s)
	}
	return d, nil
}

// newShareParams are the params of ext.MethodShareCreate; no ttl means no
// expiry.
func newShareParams(id, role string, ttl time.Duration) ext.ShareCreateParams {
	return ext.ShareCreateParams{Channel: ahp.RootURI, Terminal: ahp.TerminalURIOf(id), Role: role, TTLSeconds: int64(ttl / time.Second)}
}

// describeShare says what a share link allows and until when.
func describeShare(l ext.ShareInfo) string {
	what := l.Role
	if l.Label != "" {
		what = label.Clean(l.Label) + ", " + l.Role
	}
	if l.ExpiresAt == nil {
		return what + ", no expiry"
	}
	return what + ", expires " + time.UnixMilli(*l.ExpiresAt).Local().Format("2006-01-02 15:04 MST")
}

func createShare(ctx context.Context, c *client.Client, id, role string, ttl time.Duration) (ext.ShareInfo, error) {
	return createShareLabelled(ctx, c, id, role, "", ttl)
}

// createShareLabelled is createShare with a label naming who the link is for.
// A relative link (a server that does not know how people reach it) is
// resolved against the link base (client.Client.LinkBase), keeping its path.
func createShareLabelled(ctx context.Context, c *client.Client, id, role, label string, ttl time.Duration) (ext.ShareInfo, error) {
	p := newShareParams(id, role, ttl)
	p.Label = label
	l, err := c.CreateShare(ctx, p)
	if err != nil {
		return ext.ShareInfo{}, err
	}
	if l.URL == "" {
		return ext.ShareInfo{}, fmt.Errorf("%s: unexpected result without a url", ext.MethodShareCreate)
	}
	if u, err := url.Parse(l.URL); err == nil && !u.IsAbs() {
		base := c.LinkBase()
		base.Path = strings.TrimRight(base.Path, "/") + "/"
		l.URL = base.ResolveReference(u).String()
	}
	return l, nil
}
