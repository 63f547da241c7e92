package agent

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"syscall"

	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
)

// Hosts (README, "Many boxes"): with Config.Hosts the tools take an
// optional host, a name from the home host's hosts file, and
// list_terminals lists every host's terminals. An MCP session has one AHP
// connection per host it uses, each dialled by Config.DialHost with that
// host's own credential: the home host's never goes to another host.

// hosted is a tool input that names a host ("" for the home host).
type hosted interface{ hostName() string }

// HostTokenVar is the environment variable holding host name's own owner
// token for termhost mcp and the CLI: TERMHOST_TOKEN_ and the name
// upper-cased, with '-' and '.' as '_'.
func HostTokenVar(name string) string {
	return "TERMHOST_TOKEN_" + strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToUpper(name))
}

// ErrNeedsSignIn is Config.DialHost's error for a host that refused the
// credential (or was given none).
var ErrNeedsSignIn = errors.New("needs sign-in")

// onHost is the session of this MCP session on host name: s itself for
// "" and the home host, else one of its own, made at the first use.
func (s *session) onHost(ctx context.Context, name string) (*session, error) {
	if name == "" || s.host != "" {
		return s, nil
	}
	if s.a.cfg.Hosts == nil || s.a.cfg.DialHost == nil {
		return nil, fmt.Errorf("unknown host %q: this termhost server lists no other hosts; leave host out", name)
	}
	list, err := s.a.cfg.Hosts(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot learn the hosts of the termhost server: %v", err)
	}
	if name == list.Home.Name {
		return s, nil
	}
	var h *ext.Host
	for i := range list.Hosts {
		if list.Hosts[i].Name == name {
			h = &list.Hosts[i]
		}
	}
	if h == nil {
		names := []string{list.Home.Name}
		for _, o := range list.Hosts {
			names = append(names, o.Name)
		}
		return nil, fmt.Errorf("unknown host %q: the hosts are %s", name, strings.Join(names, ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if o := s.others[name]; o != nil && o.hostURL == h.URL {
		return o, nil
	} else if o != nil {
		defer o.close() // the host moved: a new connection to its new URL
	}
	o := newSession(s.a, s.name)
	o.person, o.host, o.hostURL = s.person, h.Name, h.URL
	host := *h
	o.dial = func(ctx context.Context, opts client.Options) (*client.Client, error) {
		return s.a.cfg.DialHost(ctx, host, opts)
	}
	if u, err := url.Parse(strings.TrimSuffix(h.URL, "/")); err == nil {
		o.base = u
	}
	if s.others == nil {
		s.others = map[string]*session{}
	}
	s.others[name] = o
	return o, nil
}

// hostError is a host list_terminals could not list.
type hostError struct {
	Host  string `json:"host"`
	Error string `json:"error"`
}

// listHosts lists the terminals of every host of the home host's list, the
// home host's first, each with its host.
func (a *Agent) listHosts(ctx context.Context, s *session, list ext.HostList) (listOut, error) {
	out := listOut{Terminals: []Terminal{}}
	home, err := a.listOn(ctx, s, list.Home.Name)
	if err != nil {
		return out, err
	}
	out.Terminals = append(out.Terminals, home...)
	results := make([][]Terminal, len(list.Hosts))
	errs := make([]error, len(list.Hosts))
	var wg sync.WaitGroup
	for i, h := range list.Hosts {
		wg.Go(func() {
			o, err := s.onHost(ctx, h.Name)
			if err == nil {
				results[i], err = a.listOn(ctx, o, h.Name)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, h := range list.Hosts {
		if errs[i] != nil {
			out.Unreachable = append(out.Unreachable, hostError{Host: h.Name, Error: errs[i].Error()})
			continue
		}
		out.Terminals = append(out.Terminals, results[i]...)
	}
	return out, nil
}

// listOn lists the terminals s may use on its host, named host.
func (a *Agent) listOn(ctx context.Context, s *session, host string) ([]Terminal, error) {
	c, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	root, _ := c.Root()
	var out []Terminal
	for _, info := range root.Terminals {
		if s.mayUse(info.Resource) != nil {
			continue
		}
		t := s.describe(c, info)
		t.Host = host
		out = append(out, t)
	}
	return out, nil
}

// explain is Agent.explain for this session's host.
func (s *session) explain(err error) error {
	if s.host == "" {
		return s.a.explain(err)
	}
	where := "host " + s.host + " at " + s.hostURL
	switch {
	case errors.Is(err, errClosed):
		return err
	case errors.Is(err, ErrNeedsSignIn), errors.Is(err, client.ErrUnauthorized):
		return fmt.Errorf("host %s needs sign-in: the user should give termhost mcp its owner token in %s", s.host, HostTokenVar(s.host))
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach %s: connection refused (is its termhost running?)", where)
	}
	return fmt.Errorf("talking to %s: %v", where, err)
}
