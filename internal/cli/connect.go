package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

// connect resolves the server and token and dials.
func (a *app) connect(ctx context.Context, cmd string, cf *connFlags, opts client.Options) (*client.Client, *url.URL, int) {
	base, err := client.ParseServer(cf.server)
	if err != nil {
		return nil, nil, a.failf(cmd, "--server: %v (want e.g. http://127.0.0.1:7681)", err)
	}
	tok, err := a.resolveToken(cf, base)
	if err != nil {
		if cf.elsewhere != "" {
			return nil, base, a.refuseElsewhere(cmd, cf)
		}
		return nil, base, a.failf(cmd, "%v", err)
	}
	opts.Token = tok
	if a.liveness != nil {
		a.liveness(&opts)
	}
	dctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	c, err := client.Dial(dctx, base.String(), opts)
	if err != nil {
		if cf.elsewhere != "" {
			return nil, base, a.refuseElsewhere(cmd, cf)
		}
		if cf.otherHost != "" && errors.Is(err, client.ErrUnauthorized) {
			return nil, base, a.failf(cmd, "%s", needsSignIn(cf))
		}
		return nil, base, a.fail(cmd, base, err)
	}
	return c, base, 0
}

// resolveToken picks, in order: a share link's own token, --token-file,
// $TERMHOST_TOKEN, or the token file of a server on this machine (a missing
// file means no token). The local file is never sent to a remote server.
func (a *app) resolveToken(cf *connFlags, base *url.URL) (string, error) {
	if cf.otherHost != "" {
		// Another host than the home host: its own token alone, never the
		// home host's (flag, environment or local file).
		return cf.hostToken, nil
	}
	if cf.shareToken != "" {
		return cf.shareToken, nil
	}
	if cf.tokenFile != "" {
		tok, err := client.ReadToken(cf.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		return tok, nil
	}
	if tok := strings.TrimSpace(a.env("TERMHOST_TOKEN")); tok != "" {
		return tok, nil
	}
	if !client.IsLoopback(base) {
		return "", nil
	}
	path, err := client.LocalTokenPath(a.env)
	if err != nil {
		return "", nil
	}
	tok, err := client.ReadToken(path)
	if errors.Is(err, client.ErrNoToken) {
		return "", nil
	}
	return tok, err
}

// target is a terminal named on the command line.
type target struct {
	id     string // as ahp.TerminalIDOf gives it: <id> of ahp-terminal:/<id>, else the whole URI
	server string // from a URL argument, "" otherwise
	share  string // the token of a share link URL (#share=…), "" otherwise
	// public is set for a URL argument not on the configured server's
	// origin: it names the terminal only if its server is the configured
	// server's public URL (--public-url), which checkPublic checks once
	// connected.
	public bool
}

// parseTarget accepts an id, a terminal URI (ahp-terminal:/<id> or one a
// client chose, e.g. agenthost-terminal:/<uuid>), or a terminal page URL
// <server>/t/<id or escaped URI>, possibly a share link (…#share=<token>).
func parseTarget(arg string) (target, error) {
	arg = strings.TrimSpace(arg)
	u, err := url.Parse(arg)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return parseTargetURL(u, arg)
	}
	uri := ahp.TerminalURIOf(arg)
	if err := ahp.CheckTerminalURI(uri); err != nil {
		return target{}, fmt.Errorf("bad terminal id %q: %w", arg, err)
	}
	return target{id: ahp.TerminalIDOf(uri)}, nil
}

// parseTargetURL reads a terminal page URL or share link.
func parseTargetURL(u *url.URL, arg string) (target, error) {
	path := u.EscapedPath()
	i := strings.LastIndex(path, "/t/")
	if i < 0 {
		return target{}, fmt.Errorf("bad terminal URL %q: want <server>/t/<id>", arg)
	}
	id, err := url.PathUnescape(strings.TrimSuffix(path[i+len("/t/"):], "/"))
	if err != nil {
		return target{}, fmt.Errorf("bad terminal URL %q: %w", arg, err)
	}
	uri := ahp.TerminalURIOf(id)
	if err := ahp.CheckTerminalURI(uri); err != nil {
		return target{}, fmt.Errorf("bad terminal URL %q: %w", arg, err)
	}
	basePath, err := url.PathUnescape(path[:i])
	if err != nil {
		return target{}, fmt.Errorf("bad terminal URL %q: %w", arg, err)
	}
	base := url.URL{Scheme: u.Scheme, Host: u.Host, Path: basePath}
	share := ""
	if frag, err := url.ParseQuery(u.Fragment); err == nil {
		share = frag.Get("share")
	}
	return target{id: ahp.TerminalIDOf(uri), server: base.String(), share: share}, nil
}

// oneTarget takes the single terminal argument of attach, share and kill.
// A share link's URL brings its own server and token. Any other URL must be
// on the configured server's origin, or its public URL (a link termhost
// printed, checked by checkPublic once connected): the owner token goes
// nowhere else, so a pasted link to another host cannot collect it. A URL
// on the configured origin brings its base path unless --server was given.
func (a *app) oneTarget(f *cmdFlags, pos []string) (target, int, bool) {
	if len(pos) != 1 {
		return target{}, a.failf(f.name, "want one terminal id or URL, got %d arguments (see termhost %s --help)", len(pos), f.name), false
	}
	arg := pos[0]
	if host, rest, ok := splitHostTarget(arg); ok {
		if code, ok := a.useHost(f.name, f.conn, host); !ok {
			return target{}, code, false
		}
		arg = rest
	}
	t, err := parseTarget(arg)
	if err != nil {
		return target{}, a.failf(f.name, "%v", err), false
	}
	if t.server != "" && f.conn.otherHost != "" {
		return target{}, a.failf(f.name, "want host/id, not host/URL: %s", redactURL(pos[0])), false
	}
	switch {
	case t.server == "":
	case t.share != "":
		f.conn.server, f.conn.shareToken = t.server, t.share
	case !sameOrigin(t.server, f.conn.server):
		t.public, f.conn.elsewhere = true, redactURL(pos[0])
	case !f.conn.explicit:
		f.conn.server = t.server
	}
	return t, 0, true
}

// checkPublic accepts a target whose URL is not on the configured server's
// origin only when its server is the public URL the connected server stated
// (client.Client.PublicURL): the link termhost printed behind a proxy.
func (a *app) checkPublic(cmd string, cf *connFlags, c *client.Client, t target) (int, bool) {
	if !t.public {
		return 0, true
	}
	if pub := c.PublicURL(); pub != nil && sameOrigin(t.server, pub.String()) {
		if u, err := client.ParseServer(t.server); err == nil && u.Path == pub.Path {
			return 0, true
		}
	}
	return a.refuseElsewhere(cmd, cf), false
}

// refuseElsewhere refuses cf.elsewhere, a URL on another server.
func (a *app) refuseElsewhere(cmd string, cf *connFlags) int {
	return a.failf(cmd, "%s is not on the configured server %s, and the owner token is only sent there; "+
		"set --server or TERMHOST_SERVER to that server if you trust it, or use a share link", cf.elsewhere, cf.server)
}

// sameOrigin reports whether two server URLs have the same scheme, host and
// port (default ports made explicit); unparsable URLs never match.
func sameOrigin(a, b string) bool {
	ua, errA := client.ParseServer(a)
	ub, errB := client.ParseServer(b)
	return errA == nil && errB == nil && origin(ua) == origin(ub)
}

func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// redactURL drops a URL's fragment and user info before it is printed.
func redactURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "the URL"
	}
	u.Fragment, u.RawFragment, u.User = "", "", nil
	return u.String()
}
