// Package hosts reads a server's hosts file: the other termhost servers
// ("hosts") a person reaches from this one's workbench and CLI, each with
// the base URL a browser uses for it (docs/protocol.md, "Hosts"). Every
// host keeps its own shells, sign-ins and tokens; the list only names them.
package hosts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/watchfile"
)

// MaxHosts bounds a hosts file: a workbench opens a connection to each.
const MaxHosts = 256

// ValidName reports whether s is a host name: a letter or digit, then up
// to 62 letters, digits, dots, underscores and dashes.
func ValidName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '-')) {
			return false
		}
	}
	return true
}

// NameRule says what ValidName accepts, for error messages.
const NameRule = "a letter or digit, then up to 62 letters, digits, '.', '_' or '-'"

// DefaultName is a host name made from the machine's name (os.Hostname):
// its longest prefix that is a valid name, else "termhost".
func DefaultName(hostname string) string {
	n := 0
	for n < len(hostname) && n < 63 && ValidName(hostname[:n+1]) {
		n++
	}
	if n == 0 {
		return "termhost"
	}
	return hostname[:n]
}

// NormalizeURL checks a host's base URL (an absolute http or https URL
// without user info, query or fragment) and returns it ending with a slash.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return "", fmt.Errorf("%q is not an absolute URL such as https://dev.example.com/box2/", raw)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%q is not an http or https URL", raw)
	case u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("%q has no host", raw)
	case u.User != nil:
		return "", fmt.Errorf("%q has user info: a host's URL never carries a credential", raw)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		return "", fmt.Errorf("%q has a query or a fragment: give the base URL alone", raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u.String(), nil
}

// Parse reads a hosts file: one host a line, "NAME URL"; "#" starts a
// comment; blank lines are skipped. file names it in errors, which say
// file:line. Names and URLs are unique.
func Parse(data []byte, file string) ([]ext.Host, error) {
	out := []ext.Host{}
	names := map[string]int{}
	urls := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"NAME URL\", got %d fields", file, n, len(fields))
		}
		name, raw := fields[0], fields[1]
		if !ValidName(name) {
			return nil, fmt.Errorf("%s:%d: bad host name %q: %s", file, n, name, NameRule)
		}
		u, err := NormalizeURL(raw)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: host %s: %v", file, n, name, err)
		}
		if prev, dup := names[name]; dup {
			return nil, fmt.Errorf("%s:%d: host %s is named twice (first on line %d)", file, n, name, prev)
		}
		if prev, dup := urls[u]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice (first on line %d)", file, n, u, prev)
		}
		if len(out) == MaxHosts {
			return nil, fmt.Errorf("%s:%d: more than %d hosts", file, n, MaxHosts)
		}
		names[name], urls[u] = n, n
		out = append(out, ext.Host{Name: name, URL: u})
	}
	return out, nil
}

// List is the host list in force: the home host and, with a hosts file,
// the hosts it lists but the home host itself (the same file may be copied
// to every box). Reload (SIGHUP) and the watcher re-read the file; a file
// that no longer parses keeps the list in force (and is logged).
type List struct {
	path    string
	home    string // the home host's name
	homeURL string // its public URL, normalized ("" without one)
	log     *slog.Logger
	cur     atomic.Pointer[ext.HostList]

	mu    sync.Mutex // serializes loads and guards hooks
	hooks map[*func(ext.HostList)]bool
}

// Open loads the hosts file at path ("": no other hosts). home is this
// server's name, publicURL its --public-url (may be ""). A file that does
// not parse is an error.
func Open(path, home, publicURL string, log *slog.Logger) (*List, error) {
	if !ValidName(home) {
		return nil, fmt.Errorf("--host-name %q: %s", home, NameRule)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &List{path: path, home: home, log: log.With("component", "hosts")}
	if publicURL != "" {
		u, err := NormalizeURL(publicURL)
		if err != nil {
			return nil, fmt.Errorf("--public-url: %w", err)
		}
		l.homeURL = u
	}
	l.cur.Store(&ext.HostList{Home: ext.HomeHost{Name: home}, Hosts: []ext.Host{}})
	if err := l.Reload(); err != nil {
		return nil, err
	}
	return l, nil
}

// WithLogger makes l log to log (the list is loaded before the server's
// logger exists).
func (l *List) WithLogger(log *slog.Logger) *List {
	l.log = log.With("component", "hosts")
	return l
}

// Path is the hosts file's path, "" without one.
func (l *List) Path() string { return l.path }

// Home is the home host's name.
func (l *List) Home() string { return l.home }

// Current is the list in force. Callers must not change it.
func (l *List) Current() ext.HostList { return *l.cur.Load() }

// OnChange calls f with the new list after every load that changed it, on
// the loading goroutine, before Reload returns; remove stops it.
func (l *List) OnChange(f func(ext.HostList)) (remove func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hooks == nil {
		l.hooks = map[*func(ext.HostList)]bool{}
	}
	key := &f
	l.hooks[key] = true
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.hooks, key)
	}
}

// Reload re-reads the hosts file.
func (l *List) Reload() error { return l.load(false) }

var errEmpty = errors.New("hosts file is empty")

func (l *List) load(skipEmpty bool) error {
	if l.path == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	data, err := os.ReadFile(l.path)
	if err != nil {
		return fmt.Errorf("read hosts file: %w", err)
	}
	if skipEmpty && len(bytes.TrimSpace(data)) == 0 {
		return errEmpty // most likely a write in place under way: its next event reloads
	}
	all, err := Parse(data, l.path)
	if err != nil {
		return err
	}
	next := ext.HostList{Home: ext.HomeHost{Name: l.home}, Hosts: []ext.Host{}}
	for _, h := range all {
		if h.Name == l.home || (l.homeURL != "" && h.URL == l.homeURL) {
			continue // the home host itself: the same file serves every box
		}
		next.Hosts = append(next.Hosts, h)
	}
	if reflect.DeepEqual(next, *l.cur.Load()) {
		return nil
	}
	l.cur.Store(&next)
	l.log.Info("hosts loaded", "hosts", len(next.Hosts), "file", l.path)
	for f := range l.hooks {
		(*f)(next)
	}
	return nil
}

// Watch re-reads the hosts file whenever it changes, until ctx ends; the
// returned wait waits for the watcher to end. Without a file there is
// nothing to watch.
func (l *List) Watch(ctx context.Context) (wait func(), err error) {
	if l.path == "" {
		return func() {}, nil
	}
	wait, err = watchfile.Watch(ctx, l.path, func() {
		if err := l.load(true); err != nil && !errors.Is(err, errEmpty) {
			l.log.Warn("hosts file not reloaded; the previous hosts stay in force", "err", err)
		}
	}, func(err error) { l.log.Warn("watching the hosts file", "err", err) })
	if err != nil {
		return nil, fmt.Errorf("watch hosts file: %w", err)
	}
	return wait, nil
}
