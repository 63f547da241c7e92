// Package handlers is termhost's HTTP side: the chi router, middleware, pages,
// the AHP WebSocket endpoint with its JSON-RPC connections, health and metrics.
package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals"
)

// Config configures a Server.
type Config struct {
	Manager *terminals.Manager
	Logger  *slog.Logger
	Version string
	// AllowedOrigins are the browser origins (scheme://host[:port]) allowed to
	// open the WebSocket. Empty means only an Origin equal to the request's own
	// host (a same-origin page) is allowed.
	AllowedOrigins []string
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
	// Retention is how long a disconnected client can reconnect (default 10 min).
	Retention time.Duration

	// OwnerToken is the secret that makes a client the owner (full access).
	// NoAuth disables authentication (loopback listeners only; cmd checks).
	OwnerToken string
	NoAuth     bool
	// BasePath serves everything under a prefix such as "/term".
	BasePath string
	// PublicURL is the URL browsers use (behind a proxy); login and share
	// links are built from it and its origin may open the WebSocket.
	PublicURL string
	// TrustedProxies may set X-Forwarded-Proto/Host/Prefix/For.
	TrustedProxies []netip.Prefix
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
	if c.Retention == 0 {
		c.Retention = 10 * time.Minute
	}
	if c.Version == "" {
		c.Version = "dev"
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
	m      *terminals.Manager
	router chi.Router

	ctx    context.Context // cancelled by Close: ends every WebSocket
	cancel context.CancelFunc
	conns  sync.WaitGroup

	auth    *auth
	metrics *metrics

	mu      sync.Mutex
	clients map[string]*clientRecord  // by clientId, for reconnect
	byShare map[string]map[*conn]bool // live connections of each share link
}

// clientRecord is what a reconnect needs to know about a client.
type clientRecord struct {
	version string
	shape   ahp.Shape
	live    int
	expires time.Time // when live == 0
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
	s := &Server{cfg: cfg, log: cfg.Logger.With("component", "http"), m: cfg.Manager,
		clients: map[string]*clientRecord{}, byShare: map[string]map[*conn]bool{},
		auth: newAuth(cfg.OwnerToken, cfg.NoAuth)}
	s.metrics = newMetrics(func() float64 { return float64(len(s.m.Terminals())) })
	s.ctx, s.cancel = context.WithCancel(context.Background())

	app := chi.NewRouter()
	app.Get("/healthz", s.healthz)
	app.Get("/readyz", s.readyz)
	app.Post("/auth/login", s.login)
	app.Post("/auth/logout", s.logout)
	app.Get("/ws", s.serveWS)
	app.With(s.requireOwner).Get("/metrics", s.metrics.handler().ServeHTTP)
	s.mountPages(app)

	root := chi.NewRouter()
	root.Use(s.withRequestInfo)
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
		if p, ok := s.identify(r, ""); !ok || p.role != RoleOwner {
			s.metrics.authFailures.WithLabelValues("unauthenticated").Inc()
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// expireShares closes the connections of share links that expired.
func (s *Server) expireShares() {
	defer s.conns.Done()
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.mu.Lock()
			var ids []string
			for id := range s.byShare {
				if !s.auth.shares.valid(id) {
					ids = append(ids, id)
				}
			}
			s.mu.Unlock()
			for _, id := range ids {
				s.disconnectShare(id, "share link expired")
			}
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

func (s *Server) trackShare(c *conn, id string, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.byShare[id] == nil {
			s.byShare[id] = map[*conn]bool{}
		}
		s.byShare[id][c] = true
		return
	}
	delete(s.byShare[id], c)
	if len(s.byShare[id]) == 0 {
		delete(s.byShare, id)
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// Close ends every WebSocket connection (close code 1001) and waits for their
// handlers. Terminals are not touched: the Manager owns them.
func (s *Server) Close() {
	s.cancel()
	s.conns.Wait()
}

// remember records a client's negotiated version for reconnect.
func (s *Server) remember(clientID, version string, shape ahp.Shape) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.clients[clientID]
	if rec == nil {
		rec = &clientRecord{}
		s.clients[clientID] = rec
	}
	rec.version, rec.shape = version, shape
	rec.live++
	s.pruneLocked()
}

// resume returns a known client's record and marks it live again.
func (s *Server) resume(clientID string) (*clientRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked()
	rec := s.clients[clientID]
	if rec == nil {
		return nil, false
	}
	rec.live++
	return rec, true
}

func (s *Server) forget(clientID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec := s.clients[clientID]; rec != nil {
		if rec.live--; rec.live <= 0 {
			rec.expires = time.Now().Add(s.cfg.Retention)
		}
	}
}

func (s *Server) pruneLocked() {
	now := time.Now()
	for id, rec := range s.clients {
		if rec.live <= 0 && now.After(rec.expires) {
			delete(s.clients, id)
		}
	}
}
