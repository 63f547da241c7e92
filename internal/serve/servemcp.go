package serve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/agent"
	"github.com/termhost/termhost/internal/buildinfo"
)

// serveMCP is termhost serve --mcp: the agent's tools over MCP's
// Streamable HTTP transport at <base>/mcp. Each MCP session's AHP
// connection reaches the server in-process, through a pipe listener, so it
// needs no network, certificate or proxy of its own.
type serveMCP struct {
	agent   *agent.Agent
	handler http.Handler
	pipe    *pipeListener
	hs      *http.Server
	done    chan struct{}
}

// newServeMCP builds the MCP handler. inner returns the termhost handler
// the agent's connections are served by (set once it exists); token is the
// owner token; base is the server's public base URL, for links.
func newServeMCP(inner func() http.Handler, token, basePath string, base *url.URL, log *slog.Logger, configure ...func(*agent.Config)) *serveMCP {
	m := &serveMCP{pipe: newPipeListener(), done: make(chan struct{})}
	m.hs = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { inner().ServeHTTP(w, r) }),
		ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// A connection dialled for a person (the /mcp request's, see
		// handlers.HeaderActingPerson) acts for them: its owner token is
		// theirs in the audit trail and presence.
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if lc, ok := c.(loopbackConn); ok {
				return handlers.WithActingPerson(ctx, lc.person.ID, lc.person.Name)
			}
			return ctx
		}}
	go func() {
		defer close(m.done)
		_ = m.hs.Serve(m.pipe)
	}()
	// No kept-alive connections: each is dialled for one person.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return m.pipe.dial(ctx) }}}
	cfg := agent.Config{Base: base, Logger: log.With("component", "mcp"), Version: buildinfo.Release,
		// /t/<id>/output.txt takes the owner token as a bearer, and a
		// person the proxy signs in, like /mcp.
		LinkCredentials: "send the same Authorization header you send to this MCP server (behind single sign-on, the same sign-in)",
		PersonOf: func(h http.Header) agent.Person {
			return agent.Person{ID: h.Get(handlers.HeaderActingPerson), Name: h.Get(handlers.HeaderActingName)}
		},
		Dial: func(ctx context.Context, opts client.Options) (*client.Client, error) {
			opts.Token, opts.HTTPClient = token, hc
			// The host is a loopback name: the pipe ignores it, and a
			// server without authentication accepts only loopback hosts.
			return client.Dial(ctx, "http://127.0.0.1"+basePath, opts)
		}}
	for _, f := range configure {
		f(&cfg)
	}
	m.agent = agent.New(cfg)
	// The SDK's own DNS-rebinding check is left off: handlers checks the
	// Origin and the owner token, also behind a reverse proxy.
	m.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m.agent.Server() },
		&mcp.StreamableHTTPOptions{SessionTimeout: 30 * time.Minute, DisableLocalhostProtection: true, Logger: log.With("component", "mcp")})
	return m
}

// close ends the MCP sessions and their AHP connections.
func (m *serveMCP) close() {
	m.agent.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.hs.Shutdown(ctx); err != nil {
		_ = m.hs.Close()
	}
	_ = m.pipe.Close()
	<-m.done
}

// pipeListener is a net.Listener whose connections are made by dial, in
// process (net.Pipe).
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	server, clientEnd := net.Pipe()
	select {
	case l.conns <- loopbackConn{server, agent.PersonFrom(ctx)}:
		return clientEnd, nil
	case <-l.done:
	case <-ctx.Done():
	}
	_, _ = server.Close(), clientEnd.Close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, errors.New("termhost mcp: the server is stopping")
}

// pipeAddr is the address of in-process connections: loopback, as they
// never leave this process.
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "127.0.0.1:0" }

// loopbackConn is the server end of an in-process connection, addressed
// as loopback (the server treats its peers by address: rate limits,
// loopback-only modes).
type loopbackConn struct {
	net.Conn
	person agent.Person // whom the agent's connection acts for, if anyone
}

func (loopbackConn) LocalAddr() net.Addr  { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
func (loopbackConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// publicBase is the server's base URL as people reach it, without a
// trailing slash, for links and the log: --public-url, else the listener's
// address (loopback for a wildcard one) with --base-path.
func publicBase(o serveOptions, setup serveSetup, addr *net.TCPAddr) *url.URL {
	if u, err := client.ParseServer(o.publicURL); o.publicURL != "" && err == nil {
		return u
	}
	host := addr.String()
	if addr.IP.IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", strconv.Itoa(addr.Port))
	}
	return &url.URL{Scheme: setup.scheme(), Host: host, Path: strings.TrimRight(o.basePath, "/")}
}
