// Package agent lets coding agents drive termhost terminals over the Model
// Context Protocol while people watch: an MCP server (the official Go SDK)
// whose tools open terminals, run commands and read them back through an
// AHP connection to the running termhost server, so that everything the
// agent does shows live in the workbench and can be taken over.
//
// Files: agent.go (the MCP server and its sessions), session.go (one MCP
// session's AHP connection and event pump), track.go (what is kept of each
// terminal's output), plaintext.go (output as text, through an emulator),
// page.go (results within maxBytes, and output in pages),
// access.go (which terminals a session may use, and who controls them),
// keys.go (named keys), errors.go (errors as sentences), and one file per
// tool: tool_list.go, tool_open.go, tool_run.go, tool_read.go,
// tool_input.go, tool_wait.go, tool_close.go.
package agent

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/approval"
)

// Config configures an Agent.
type Config struct {
	// Dial connects to the termhost server as an AHP client. The agent
	// sets opts' client id, clientInfo and subscriptions; Dial adds the
	// credentials.
	Dial func(ctx context.Context, opts client.Options) (*client.Client, error)
	// Base is the server's base URL, for terminal links when the server
	// states no public URL in its initialize result (client.PublicURL),
	// which wins: the agent may reach the server by another address.
	Base *url.URL
	// LinkCredentials, when set, tells the agent how to fetch the links it
	// returns (fullOutputUrl): termhost serve --mcp sets it, as the
	// credential the agent sends to /mcp (the owner token as a bearer, or
	// its sign-in through the proxy) also opens them. Without it those
	// links open only in a browser signed in as the owner.
	LinkCredentials string
	// AllowAnyTerminal lets the agent use every terminal, not only those
	// it opened.
	AllowAnyTerminal bool
	// RenderBudget bounds the emulator's time for each rendering of output
	// as plain text (see Plain): read_terminal gets all of it, wait_for
	// and run_command a tenth of their timeout, at most all of it.
	// Default defaultRenderBudget.
	RenderBudget time.Duration
	Logger       *slog.Logger
	Version      string
	// PersonOf, when set, is whom a tool call acts for, from the headers
	// of its HTTP request (termhost serve --mcp: the server sets them once
	// it has authenticated the request). An MCP session acts for the
	// person of its first call, and its connection is dialled with them
	// in the context (PersonOf).
	PersonOf func(http.Header) Person
	// Approve is when a command line (run_command's, or one send_input
	// submits) waits for a person's approval: ApproveNever (or "", the
	// default), ApproveRules (Rules decides) or ApproveAlways.
	Approve string
	// Rules is the policy of ApproveRules (nil: the built-in defaults
	// alone); a person's "always allow" adds a rule to its file.
	Rules *approval.File
	// Hosts, when set with DialHost, is the home host's host list (GET
	// <base>/api/hosts): the tools then take an optional host and
	// list_terminals lists every host's terminals (hosts.go).
	Hosts func(ctx context.Context) (ext.HostList, error)
	// DialHost connects to another host than the home host with that
	// host's own credential (never the home host's); ErrNeedsSignIn when
	// it has none.
	DialHost func(ctx context.Context, h ext.Host, opts client.Options) (*client.Client, error)
}

// Person is whom an MCP session acts for: the person signed in by single
// sign-on whose session connected the agent; zero for the owner token.
type Person struct{ ID, Name string }

type personKey struct{}

// PersonFrom is the person a Config.Dial's context acts for (zero when
// none): the dialler passes them on to the server.
func PersonFrom(ctx context.Context) Person {
	p, _ := ctx.Value(personKey{}).(Person)
	return p
}

// Agent is the MCP server. Each MCP session gets its own AHP connection,
// dialled at its first tool call and closed when the session ends.
type Agent struct {
	cfg Config
	srv *mcp.Server

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*session
	closed   bool
	wg       sync.WaitGroup // one watcher per session, waiting for its end
}

// New builds the MCP server with its tools.
func New(cfg Config) *Agent {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.RenderBudget <= 0 {
		cfg.RenderBudget = defaultRenderBudget
	}
	a := &Agent{cfg: cfg, sessions: map[*mcp.ServerSession]*session{}}
	a.srv = mcp.NewServer(&mcp.Implementation{Name: "termhost", Title: "termhost terminals", Version: cfg.Version},
		&mcp.ServerOptions{Instructions: instructions, Logger: cfg.Logger, Capabilities: &mcp.ServerCapabilities{}})
	a.addTools()
	return a
}

const instructions = `Terminals on the user's termhost server, which people watch live in their browser.
Open a terminal with open_terminal, then run_command to run a shell command and get its exit code and output.
Use send_input and wait_for for interactive programs, read_terminal to see the screen. Close what you opened
with close_terminal. A person may take control of a terminal at any time: then input fails until they hand it back.
Results carry at most maxBytes of text (default 16384): longer output is cut, and the result gives the cursor
from which read_terminal with mode output reads the rest, a page at a time.`

// Server is the MCP server, to Run on a transport or serve over HTTP.
func (a *Agent) Server() *mcp.Server { return a.srv }

// Close ends every session's AHP connection and waits for them.
func (a *Agent) Close() {
	a.mu.Lock()
	a.closed = true
	list := make(map[*mcp.ServerSession]*session, len(a.sessions))
	for ss, s := range a.sessions {
		list[ss] = s
	}
	a.mu.Unlock()
	for ss, s := range list {
		s.close()
		_ = ss.Close()
	}
	a.wg.Wait()
}

// session returns the state of the MCP session making req, creating it at
// its first call; it is closed when the MCP session ends.
func (a *Agent) session(req *mcp.CallToolRequest) (*session, error) {
	ss := req.Session
	var person Person
	if a.cfg.PersonOf != nil && req.Extra != nil && req.Extra.Header != nil {
		person = a.cfg.PersonOf(req.Extra.Header)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, errClosed
	}
	if s := a.sessions[ss]; s != nil {
		if s.person != person {
			return nil, errOtherPerson
		}
		return s, nil
	}
	name := "MCP client"
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		name = firstNonEmpty(p.ClientInfo.Title, p.ClientInfo.Name, name)
	}
	s := newSession(a, name)
	s.person = person
	a.sessions[ss] = s
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		_ = ss.Wait()
		s.close()
		a.mu.Lock()
		delete(a.sessions, ss)
		a.mu.Unlock()
	}()
	return s, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// linkBase is the base of the links returned to the agent: the public URL
// the server stated on c (termhost serve --public-url), else the host's
// URL (Config.Base for the home host); nil without either.
func (s *session) linkBase(c *client.Client) *url.URL {
	if c != nil {
		if u := c.PublicURL(); u != nil {
			return u
		}
	}
	if s.base != nil {
		return s.base
	}
	return s.a.cfg.Base
}
