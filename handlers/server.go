package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/handlers/hosts"
	"github.com/termhost/termhost/handlers/sso"
	"github.com/termhost/termhost/internal/approval"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/lockrank"
)

// Config configures a Server.
type Config struct {
	Manager Terminals // a *terminals.Manager
	// Hooks are the ones given to Manager's terminals.Config.Hooks
	// (Hooks.Manager): New makes them reach this Server. nil when the
	// Manager has none: no client then inherits a claim it asked control
	// of, and the commands of SSO people are not marked with their name.
	Hooks   *Hooks
	Logger  *slog.Logger
	Version string
	// AllowedOrigins are the browser origins (scheme://host[:port]) allowed to
	// open the WebSocket and sign in (with PublicURL's origin). When none is
	// set, a trusted proxy's forwarded origin is allowed too; when none is
	// set and ListenerOrigins is empty, an Origin equal to the request's own
	// host (a same-origin page) is allowed.
	AllowedOrigins []string
	// ListenerOrigins are the listener's own origins (http://127.0.0.1:7681,
	// http://localhost:7681 …): allowed like AllowedOrigins, but they do not
	// make the forwarded origin of a trusted proxy unacceptable.
	ListenerOrigins []string
	// MaxFrame is the largest inbound WebSocket message (default 1 MiB).
	MaxFrame int64
	// SendQueue is the per-connection bound of queued outbound bytes; a
	// subscriber past it is disconnected (default 8 MiB, at least 4 MiB so
	// that a claim holder is paced by the pty's flow control, which pauses
	// the shell at 2 MiB, before it could be evicted).
	SendQueue int
	// PingInterval is the WebSocket ping period that keeps proxies from closing
	// idle connections (default 20 s).
	PingInterval time.Duration
	// WriteTimeout bounds one outbound frame write: a peer that accepts
	// nothing for this long is gone and its socket is closed (default 1 min).
	WriteTimeout time.Duration
	// Retention is how long a disconnected client can reconnect (default 10 min).
	Retention time.Duration
	// MCP, when set, is served at <base>/mcp to the owner (handlers/mcp.go).
	MCP http.Handler
	// Compression negotiates permessage-deflate with clients that offer it;
	// the zero value, CompressionAuto, does for clients not on loopback.
	Compression Compression
	// ControlAutoGrant is how long a control request waits for a holder that
	// does not type before it is granted anyway (default 20 s).
	ControlAutoGrant time.Duration
	// MaxLinkConns bounds the live connections of one share link, and
	// MaxAddrConns those of share links from one client address; past
	// either, a new connection is closed with 4029 (defaults 64 and 128).
	// Each connection of a terminal is in its presence list: the bounds
	// keep one link from flooding the others with presence. A person
	// signed in by SSO gets MaxLinkConns too, the owner
	// Budgets.MaxOwnerConns.
	MaxLinkConns, MaxAddrConns int
	// Budgets bounds each participant's connections, unsent answers,
	// costly requests and downloads (budget.go).
	Budgets Budgets

	// OwnerToken is the secret that makes a client the owner (full access).
	// NoAuth disables authentication (loopback listeners only; cmd checks):
	// then only requests whose Host is a loopback name are served (DNS
	// rebinding), and PublicURL and TrustedProxies are refused.
	OwnerToken string
	NoAuth     bool
	// StateDir, when set, is where owner sessions and share links are kept
	// (hashed) so that they survive a restart; empty keeps them in memory.
	StateDir string
	// Clients are a predecessor's client records (a hand-over, see
	// Server.Clients): their clients may reconnect.
	Clients []ClientRecord
	// BasePath serves everything under a prefix such as "/term".
	BasePath string
	// PublicURL is the URL browsers use (behind a proxy); login and share
	// links are built from it and its origin may open the WebSocket.
	PublicURL string
	// TrustedProxies may set X-Forwarded-Proto/Host/Prefix/For.
	TrustedProxies []netip.Prefix
	// TestHooks serves the test build of the browser app (window.__termhost,
	// the e2e tests' hook) instead of the production one. Only the e2e
	// harness sets it; no flag reaches it.
	TestHooks bool

	// SSO, when set, is --auth proxy: people signed in by a single sign-on
	// proxy, named by a header only TrustedPeer proxies may send (sso.go);
	// Roles says who gets which role. The owner token and share links keep
	// working beside it.
	SSO   *sso.Proxy
	Roles *sso.Directory
	// Audit, when set, is the audit trail (package audit).
	Audit *audit.Log
	// ApproveDrivers, when set, holds a driver's Enter at a shell prompt
	// until a person approves a line these rules do not allow
	// (approvedrivers.go).
	ApproveDrivers *approval.File
	// Hosts is the host list (GET /api/hosts, the x-termhost/hosts
	// notification, the home host's name in initialize); nil: no other
	// hosts, the home host named after the machine.
	Hosts *hosts.List

	clock auth.Clock // share-link expiry; tests inject a fake, nil is the wall clock
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxFrame == 0 {
		c.MaxFrame = 1 << 20
	}
	if c.SendQueue == 0 {
		c.SendQueue = 8 << 20
	}
	c.SendQueue = max(c.SendQueue, minSendQueue)
	if c.PingInterval == 0 {
		c.PingInterval = 20 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = time.Minute
	}
	if c.MaxLinkConns <= 0 {
		c.MaxLinkConns = 64
	}
	if c.MaxAddrConns <= 0 {
		c.MaxAddrConns = 128
	}
	c.Budgets.setDefaults()
	if c.ControlAutoGrant <= 0 {
		c.ControlAutoGrant = 20 * time.Second
	}
	if c.Retention == 0 {
		c.Retention = 10 * time.Minute
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.Hosts == nil {
		c.Hosts = defaultHosts()
	}
	c.BasePath = strings.TrimRight(c.BasePath, "/")
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err == nil && u.Host != "" {
			c.AllowedOrigins = append(c.AllowedOrigins, u.Scheme+"://"+u.Host)
		}
	}
}

const minSendQueue = 4 << 20

// Server serves termhost over HTTP.
type Server struct {
	cfg    Config
	log    *slog.Logger
	m      Terminals
	router chi.Router

	ctx    context.Context // cancelled by Close: ends every WebSocket
	cancel context.CancelFunc
	conns  sync.WaitGroup

	auth    *auth.Store
	csrf    *http.CrossOriginProtection // sign-in and sign-out
	metrics *metrics

	restarting atomic.Bool            // set by CloseForRestart: WebSockets close with 1012
	stopRoles  func()                 // stops applyRoles on role changes (sso.go)
	stopHosts  func()                 // stops hostsChanged (hostlist.go)
	csp        atomic.Pointer[string] // the pages' Content-Security-Policy (hostsCSP)

	mu      lockrank.Mutex[lockrank.Server]
	closed  bool                      // Close has begun: no new connections
	clients map[string]*clientRecord  // by clientId, for reconnect
	byShare map[string]map[*conn]bool // live connections of each share link
	byAddr  map[string]int            // live share-link connections of each client address
	// participants counts each principal's connections and downloads (budget.go).
	participants map[string]*participant
	heldTotal    atomic.Int64 // unsent answer bytes of all participants but the owner
	connected    atomic.Int64 // participants but the owner with a connection (budget.go)
	paused       atomic.Int64 // readers waiting for their answers to be sent (awaitAnswers)
	pausedInput  atomic.Int64 // readers waiting for room for their input (awaitInput)
	// byPerson are the live connections whose role came from the roles
	// directory (sso.go, applyRoles).
	byPerson map[*conn]bool

	controls  controls  // pending control requests (control.go)
	approvals approvals // pending approvals (approval.go)
	hostSubs  hostSubs  // connections told of host list changes (hostlist.go)
	people    people    // when SSO people were last admitted (sso.go)
	persons   sync.Map  // clientId → an SSO person's display name (sso.go)
}

// clientRecord is what a reconnect needs to know about a client, and the
// principal its clientId is bound to. Its live connections are counted by
// the manager (terminals.Manager.Connections), the one count claims use too.
type clientRecord struct {
	principal string // principal.ID() of the first user; nobody else may use the clientId
	version   string // "" while only a claim names the clientId
	shape     ahp.Shape
	binary    bool               // asked for binary data messages (ext.CapabilityBinaryData)
	expires   time.Time          // once no connection of the client is live
	info      ahp.Implementation // its clientInfo, for presence (presence.go)
}

// New builds the router.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	if cfg.Manager == nil {
		return nil, errors.New("handlers: a terminals.Manager is required")
	}
	if !cfg.NoAuth && cfg.OwnerToken == "" {
		return nil, errors.New("handlers: an owner token is required unless NoAuth is set")
	}
	if cfg.SSO != nil && (cfg.NoAuth || len(cfg.SSO.Trusted) == 0 || cfg.SSO.Header == "" || cfg.Roles == nil) {
		return nil, errors.New("handlers: SSO needs an identity header, trusted proxies and roles, and no NoAuth")
	}
	if cfg.NoAuth && (cfg.PublicURL != "" || len(cfg.TrustedProxies) > 0) {
		// A reverse proxy connects from loopback: everyone behind it would get a shell.
		return nil, errors.New("handlers: NoAuth cannot be combined with PublicURL or TrustedProxies")
	}
	s := &Server{cfg: cfg, log: cfg.Logger.With("component", "http"), m: cfg.Manager,
		clients: map[string]*clientRecord{}, byShare: map[string]map[*conn]bool{}, byAddr: map[string]int{}, participants: map[string]*participant{}, byPerson: map[*conn]bool{},
		auth: auth.New(cfg.OwnerToken, cfg.NoAuth, cfg.clock)}
	s.restoreClients(cfg.Clients)
	if cfg.Hooks != nil {
		cfg.Hooks.srv.Store(s)
	}
	if cfg.StateDir != "" {
		if err := s.auth.Restore(cfg.StateDir, s.m.Exists, s.log); err != nil {
			return nil, fmt.Errorf("handlers: restore sign-ins: %w", err)
		}
	}
	s.csrf = s.newCrossOriginProtection()
	s.metrics = newMetrics(func() float64 { return float64(len(s.m.Terminals())) })
	s.ctx, s.cancel = context.WithCancel(context.Background())

	app := chi.NewRouter()
	app.Get("/healthz", s.healthz)
	app.Get("/readyz", s.readyz)
	app.Post("/auth/login", s.login)
	app.Post("/auth/logout", s.logout)
	app.Get("/ws", s.serveWS)
	app.With(s.requireOwner).Get("/metrics", s.metrics.handler().ServeHTTP)
	app.Get("/api/hosts", s.apiHosts)
	app.Get("/api/whoami", s.whoami)
	s.mountPages(app)
	s.mountRecordings(app)
	s.mountMCP(app)

	root := chi.NewRouter()
	root.Use(s.withRequestInfo, s.securityHeaders)
	if cfg.NoAuth {
		root.Use(loopbackHostOnly)
	}
	if cfg.BasePath == "" {
		root.Mount("/", app)
	} else {
		root.Get("/healthz", s.healthz)
		root.Get("/readyz", s.readyz)
		root.Get(cfg.BasePath, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, basePath(r)+"/", http.StatusMovedPermanently)
		})
		root.Mount(cfg.BasePath+"/", http.StripPrefix(cfg.BasePath, app))
	}
	s.router = root
	s.conns.Add(1)
	go s.expireShares()
	if cfg.Roles != nil {
		s.stopRoles = cfg.Roles.OnChange(s.applyRoles)
	}
	csp := hostsCSP(cfg.Hosts.Current())
	s.csp.Store(&csp)
	s.stopHosts = cfg.Hosts.OnChange(s.hostsChanged)
	return s, nil
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }

// readyz says whether the server accepts work (not while shutting down).
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if s.ctx.Err() != nil {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// requireOwner lets only the owner through.
func (s *Server) requireOwner(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.owner(w, r); ok {
			next.ServeHTTP(w, r)
		}
	})
}

// owner returns the owner principal that made r, or answers it (401, or
// the sign-in limiter's refusal) and returns false.
func (s *Server) owner(w http.ResponseWriter, r *http.Request) (auth.Principal, bool) {
	p, ok, limited := s.authenticate(w, r, "")
	if limited {
		return p, false
	}
	if !ok || p.Role != auth.RoleOwner {
		s.metrics.authFailures.WithLabelValues("unauthenticated").Inc()
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return p, false
	}
	return p, true
}

// expireShares closes the connections of each share link at its expiry: a
// timer is set for the earliest expiry and set again whenever a link is
// created or revoked.
func (s *Server) expireShares() {
	defer s.conns.Done()
	st := s.auth.Shares
	var t auth.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		expired, next := st.DropExpired()
		for _, sh := range expired {
			s.log.Info("share link expired", "share", sh.ID, "terminal", sh.Terminal)
			s.disconnectShare(sh.ID, "share link expired")
		}
		if t != nil {
			t.Stop()
			t = nil
		}
		if !next.IsZero() {
			t = st.WakeAt(next)
		}
		select {
		case <-s.ctx.Done():
			return
		case <-st.Changed():
		}
	}
}

// disconnectShare closes every live connection of a share link.
func (s *Server) disconnectShare(id, reason string) {
	s.mu.Lock()
	conns := s.byShare[id]
	delete(s.byShare, id)
	s.mu.Unlock()
	for c := range conns {
		c.closeWith(closeRevoked, reason)
	}
}

// trackShare counts a share link's connection from addr in, or returns why
// it must close at once: too many connections of the link, or of links from
// addr. A refused connection is not counted (it frees no slot as it goes),
// so whoever sees it refused may open another as soon as one closes.
func (s *Server) trackShare(c *conn, id, addr string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(s.byShare[id]) >= s.cfg.MaxLinkConns:
		return fmt.Sprintf("too many connections of this share link (at most %d)", s.cfg.MaxLinkConns)
	case s.byAddr[addr] >= s.cfg.MaxAddrConns:
		return fmt.Sprintf("too many share-link connections from this address (at most %d)", s.cfg.MaxAddrConns)
	}
	if s.byShare[id] == nil {
		s.byShare[id] = map[*conn]bool{}
	}
	s.byShare[id][c] = true
	s.byAddr[addr]++
	return ""
}

// untrackShare counts a share link's connection counted in by trackShare out.
func (s *Server) untrackShare(c *conn, id, addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byShare[id], c)
	if len(s.byShare[id]) == 0 {
		delete(s.byShare, id)
	}
	if s.byAddr[addr]--; s.byAddr[addr] <= 0 {
		delete(s.byAddr, addr)
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// Close ends every WebSocket connection (close code 1001) and waits for their
// handlers. Terminals are not touched: the Manager owns them.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	if s.stopRoles != nil {
		s.stopRoles()
	}
	s.stopHosts()
	s.conns.Wait()
	s.controls.stop()
	s.approvals.stop()
}

// CloseForRestart is Close for a hand-over to a new termhost process
// (an upgrade): WebSockets close with 1012 "service restart", so clients
// reconnect at once, to the successor.
func (s *Server) CloseForRestart() {
	s.restarting.Store(true)
	s.Close()
}

// enter counts a connection handler in, unless Close has begun (a
// WaitGroup must not grow while Wait may be returning).
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns.Add(1)
	return true
}

// remember records a client's negotiated version and capabilities for reconnect, binds its
// clientId to principal and counts the connection in. It returns false, and
// records nothing, when another principal holds the clientId.
func (s *Server) remember(clientID, principal, version string, shape ahp.Shape, binary bool) bool {
	claimed := s.m.ClaimedClients()
	s.mu.Lock()
	s.pruneLocked(claimed)
	rec := s.clients[clientID]
	if rec == nil {
		rec = &clientRecord{principal: principal}
		s.clients[clientID] = rec
	}
	if rec.principal != principal {
		s.mu.Unlock()
		return false
	}
	rec.version, rec.shape, rec.binary = version, shape, binary
	s.keepLocked(rec)
	s.mu.Unlock()
	s.m.Connected(clientID)
	return true
}

// resume returns a known client's record and counts the connection in; a
// clientId bound to another principal is refused like an unknown one.
func (s *Server) resume(clientID, principal string) (*clientRecord, *ahp.Error) {
	claimed := s.m.ClaimedClients()
	s.mu.Lock()
	s.pruneLocked(claimed)
	rec := s.clients[clientID]
	switch {
	case rec != nil && rec.principal != principal:
		s.mu.Unlock()
		return nil, errClientIDTaken(clientID)
	case rec == nil || rec.version == "": // never initialized (only named by a claim)
		s.mu.Unlock()
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "unknown or expired clientId %q: send initialize", ahp.Clip(clientID))
	}
	s.keepLocked(rec)
	s.mu.Unlock()
	s.m.Connected(clientID)
	return rec, nil
}

// keepLocked keeps rec from being pruned until its connection is counted
// in. That happens after s.mu is released: counting in a holder that was
// away clears its mark in the catalogue, under the hub's lock, which ranks
// before Server's (package lockrank).
func (s *Server) keepLocked(rec *clientRecord) {
	if exp := time.Now().Add(s.cfg.Retention); exp.After(rec.expires) {
		rec.expires = exp
	}
}

// bindClaimed binds a clientId that a terminal claim is about to name to
// principal, unless a principal already holds it; the binding then lasts
// as long as a claim names it (see pruneLocked).
func (s *Server) bindClaimed(clientID, principal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.clients[clientID]
	if rec == nil {
		rec = &clientRecord{principal: principal}
		s.clients[clientID] = rec
	}
	if s.m.Connections(clientID) <= 0 {
		// Outlive the claim being set: prune may have read the claims just before.
		if exp := time.Now().Add(s.cfg.Retention); exp.After(rec.expires) {
			rec.expires = exp
		}
	}
}

// forget counts a connection of clientID out; the record is kept for the
// retention once none is left. A client that left (closed normally) hands
// its claims on at once, one that dropped after the claim grace.
func (s *Server) forget(clientID string, left bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	disconnected := s.m.ConnectionLost
	if left {
		disconnected = s.m.ConnectionClosedByClient
	}
	if disconnected(clientID) > 0 {
		return
	}
	if rec := s.clients[clientID]; rec != nil {
		rec.expires = time.Now().Add(s.cfg.Retention)
	}
}

// pruneLocked drops the records of clients gone for longer than the
// retention, except those a terminal claim names: their binding keeps
// another principal from taking the clientId, and with it the claim.
func (s *Server) pruneLocked(claimed map[string]bool) {
	now := time.Now()
	for id, rec := range s.clients {
		if now.After(rec.expires) && !claimed[id] && s.m.Connections(id) <= 0 {
			delete(s.clients, id)
			s.persons.Delete(id)
		}
	}
}
