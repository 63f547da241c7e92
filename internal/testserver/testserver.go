// Package testserver runs the real termhost server in-process for tests: a
// terminals.Manager behind handlers.Server on httptest, and a TCP proxy in
// front of it that a test can cut, refuse, freeze and resume like a network.
// Like coder/websocket's internal/test, it is the one copy every package's
// tests share.
package testserver

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/terminals"
)

// OwnerToken is the owner secret of a server that does not choose another.
const OwnerToken = "test-owner-token"

// Server is a running in-process termhost.
type Server struct {
	*httptest.Server
	Manager *terminals.Manager
	Handler *handlers.Server
	// Hooks connect Manager to Handler; a Server built over Manager
	// later (a restart of the HTTP side) is given them too.
	Hooks *handlers.Hooks
	Home  string // the shells' $HOME and working directory
	Token string // the owner token ("" with NoAuth)
}

// Option changes the configuration before the server starts.
type Option func(*terminals.Config, *handlers.Config)

// Terminals changes the terminal manager's configuration.
func Terminals(f func(*terminals.Config)) Option {
	return func(tc *terminals.Config, _ *handlers.Config) { f(tc) }
}

// Handlers changes the HTTP server's configuration.
func Handlers(f func(*handlers.Config)) Option {
	return func(_ *terminals.Config, hc *handlers.Config) { f(hc) }
}

// Token sets the owner token.
func Token(token string) Option {
	return Handlers(func(c *handlers.Config) { c.OwnerToken = token })
}

// NoAuth serves every request as the owner's (loopback only).
func NoAuth() Option {
	return Handlers(func(c *handlers.Config) { c.NoAuth, c.OwnerToken = true, "" })
}

// BasePath serves everything under prefix (such as "/term").
func BasePath(prefix string) Option {
	return Handlers(func(c *handlers.Config) { c.BasePath = prefix })
}

// TestHooks serves the test build of the browser app (window.__termhost).
func TestHooks() Option {
	return Handlers(func(c *handlers.Config) { c.TestHooks = true })
}

// Env adds variables to the shells' environment.
func Env(vars ...string) Option {
	return Terminals(func(c *terminals.Config) { c.Env = append(c.Env, vars...) })
}

// New starts a server whose shell is bash --norc --noprofile with the prompt
// "$ " in a fresh home, authenticated by OwnerToken. Cleanup stops it.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	return NewAt(t, func(string) []Option { return opts })
}

// NewAt is New for a configuration that needs the server's own URL (a
// reverse proxy in front of it): opts gets the URL before the server starts.
// Cleanups the options register run after the server has stopped.
func NewAt(t testing.TB, opts func(url string) []Option) *Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	s := &Server{Server: ts, Home: t.TempDir()}
	t.Cleanup(s.close)
	log := Logger(t)
	tc := terminals.Config{Shell: "/bin/bash", ShellArgs: []string{"--norc", "--noprofile"}, Cwd: s.Home,
		Logger: log, DisposeGrace: 500 * time.Millisecond,
		// Tests type as soon as a shell exists: on a loaded machine the
		// first prompt of a shell with integration (a test's own Shell)
		// can take longer than the default hold, and keys let through
		// before it are echoed twice (by the tty, then by readline).
		// Such a shell always prompts, so waiting is safe. (The default
		// bash --norc has none: its input is never held.)
		InputHold: 20 * time.Second,
		Env:       []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.Home, "PS1=$ ", "LANG=C.UTF-8", "HISTFILE=/dev/null"}}
	hc := handlers.Config{Logger: log, OwnerToken: OwnerToken}
	for _, o := range opts("http://" + ts.Listener.Addr().String()) {
		o(&tc, &hc)
	}
	s.Hooks = new(handlers.Hooks)
	tc.Hooks, hc.Hooks = s.Hooks.Manager(), s.Hooks
	var err error
	if s.Manager, err = terminals.NewManager(tc); err != nil {
		t.Fatalf("terminals.NewManager: %v", err)
	}
	hc.Manager = s.Manager
	if s.Handler, err = handlers.New(hc); err != nil {
		t.Fatalf("handlers.New: %v", err)
	}
	s.Token = hc.OwnerToken
	ts.Config.Handler = s.Handler
	ts.Start()
	return s
}

// close stops what started: connections, the server, then the shells.
func (s *Server) close() {
	http.DefaultClient.CloseIdleConnections()
	s.CloseClientConnections()
	if s.Handler != nil {
		s.Handler.Close()
	}
	s.Server.Close()
	if s.Manager != nil {
		s.Manager.Close()
	}
}

// Logger writes warnings and errors to the test's output.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}
