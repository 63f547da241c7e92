// Package handlers is termhost's HTTP side: the chi router, middleware, pages,
// the AHP WebSocket endpoint with its JSON-RPC connections, health and metrics.
package handlers

import (
	"context"
	"log/slog"
	"net/http"
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

	mu      sync.Mutex
	clients map[string]*clientRecord // by clientId, for reconnect
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
	s := &Server{cfg: cfg, log: cfg.Logger.With("component", "http"), m: cfg.Manager, clients: map[string]*clientRecord{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	r := chi.NewRouter()
	r.Get("/ws", s.serveWS)
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	s.mountPages(r)
	s.router = r
	return s, nil
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
