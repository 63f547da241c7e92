package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/handlers/hosts"
	"github.com/termhost/termhost/internal/agent"
)

// Hosts (README, "Many boxes"): the configured server is the home host;
// its hosts file lists the others (GET <base>/api/hosts). The home host's
// token goes to the home host alone: another host gets its own token from
// TERMHOST_TOKEN_<NAME>, or none.

// hostTokenVar is the environment variable holding host name's own token.
func hostTokenVar(name string) string { return agent.HostTokenVar(name) }

// splitHostTarget splits a host/id argument ("box2/3f2c9a1b0d4e",
// "box2/agenthost-terminal:/…"); ok is false for anything else (an id, a
// terminal URI, a URL: their first '/' comes after a ':').
func splitHostTarget(arg string) (host, rest string, ok bool) {
	host, rest, ok = strings.Cut(strings.TrimSpace(arg), "/")
	if !ok || rest == "" || strings.Contains(host, ":") {
		return "", "", false
	}
	return host, rest, true
}

// fetchHosts asks the home host (cf's server, with cf's credential) for its
// host list.
func (a *app) fetchHosts(ctx context.Context, cf *connFlags) (ext.HostList, *url.URL, error) {
	base, err := client.ParseServer(cf.server)
	if err != nil {
		return ext.HostList{}, nil, fmt.Errorf("--server: %v (want e.g. http://127.0.0.1:7681)", err)
	}
	tok, err := a.resolveToken(cf, base)
	if err != nil {
		return ext.HostList{}, base, err
	}
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimSuffix(base.String(), "/")+"/api/hosts", nil)
	if err != nil {
		return ext.HostList{}, base, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ext.HostList{}, base, errors.New(explainError(base, err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return ext.HostList{}, base, fmt.Errorf("the server at %s refused the token (HTTP 401); pass --token-file or set TERMHOST_TOKEN", base)
	case resp.StatusCode == http.StatusNotFound:
		return ext.HostList{}, base, fmt.Errorf("the server at %s lists no hosts (it predates hosts files)", base)
	case resp.StatusCode != http.StatusOK:
		return ext.HostList{}, base, fmt.Errorf("the server at %s answered the host list with HTTP %s", base, resp.Status)
	}
	var l ext.HostList
	if err := json.Unmarshal(body, &l); err != nil || !hosts.ValidName(l.Home.Name) {
		return ext.HostList{}, base, fmt.Errorf("the server at %s sent a host list that does not parse", base)
	}
	return l, base, nil
}

// hostNamed finds name in l: the home host (nil, true) or another.
func hostNamed(l ext.HostList, name string) (*ext.Host, bool) {
	if name == l.Home.Name {
		return nil, true
	}
	for i := range l.Hosts {
		if l.Hosts[i].Name == name {
			return &l.Hosts[i], true
		}
	}
	return nil, false
}

// hostNames lists l's names, the home host first.
func hostNames(l ext.HostList) string {
	names := []string{l.Home.Name + " (home)"}
	for _, h := range l.Hosts {
		names = append(names, h.Name)
	}
	return strings.Join(names, ", ")
}

// forHost makes cf reach host h (nil: the home host, left as it is) with
// h's own credential only.
func (a *app) forHost(cf *connFlags, h *ext.Host) {
	if h == nil {
		return
	}
	cf.server, cf.explicit = strings.TrimSuffix(h.URL, "/"), true
	cf.otherHost, cf.hostToken = h.Name, strings.TrimSpace(a.env(hostTokenVar(h.Name)))
	cf.shareToken, cf.tokenFile, cf.elsewhere = "", "", ""
}

// useHost points cf at the host called name in the home host's list; an
// unknown name, or a home host that cannot say, is a usage error.
func (a *app) useHost(cmd string, cf *connFlags, name string) (int, bool) {
	if !hosts.ValidName(name) {
		return a.failf(cmd, "bad host name %q: %s", name, hosts.NameRule), false
	}
	l, _, err := a.fetchHosts(context.Background(), cf)
	if err != nil {
		return a.failf(cmd, "%v", err), false
	}
	h, ok := hostNamed(l, name)
	if !ok {
		return a.failf(cmd, "unknown host %q: the server lists %s", name, hostNames(l)), false
	}
	a.forHost(cf, h)
	return 0, true
}

// needsSignIn says how to give the CLI another host's token.
func needsSignIn(cf *connFlags) string {
	if cf.hostToken == "" {
		return fmt.Sprintf("host %s needs sign-in: set %s to its owner token", cf.otherHost, hostTokenVar(cf.otherHost))
	}
	return fmt.Sprintf("host %s refused the token in %s", cf.otherHost, hostTokenVar(cf.otherHost))
}
