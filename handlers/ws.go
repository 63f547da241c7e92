package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
)

// Close codes of our own (4000–4999).
const (
	closeSlowConsumer = websocket.StatusCode(4001) // queue overflow: reconnect to resume
)

// originAllowed checks a browser's Origin against the configured public
// origins. Requests without an Origin header are not from a browser page.
func (s *Server) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if len(s.cfg.AllowedOrigins) == 0 {
		return strings.EqualFold(u.Host, r.Host)
	}
	for _, allowed := range s.cfg.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(allowed, "/"), u.Scheme+"://"+u.Host) {
			return true
		}
	}
	return false
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !s.originAllowed(r) {
		s.log.Warn("websocket refused: origin not allowed", "origin", r.Header.Get("Origin"),
			"allowed", s.cfg.AllowedOrigins, "remote", r.RemoteAddr)
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true}) // origin checked above
	if err != nil {
		s.log.Debug("websocket accept", "err", err)
		return
	}
	ws.SetReadLimit(s.cfg.MaxFrame)
	s.conns.Add(1)
	defer s.conns.Done()
	c := newConn(s, ws, r.RemoteAddr)
	c.run()
}

// conn is one WebSocket speaking JSON-RPC. One reader goroutine (run) handles
// every inbound message in order; one writer goroutine drains the bounded
// outbound queue; one pinger keeps proxies awake.
type conn struct {
	s   *Server
	ws  *websocket.Conn
	log interface {
		Debug(string, ...any)
		Info(string, ...any)
		Warn(string, ...any)
	}
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	queue   [][]byte
	queued  int
	wake    chan struct{}
	evicted bool

	// Protocol state: written by the reader before any subscription exists,
	// so the hub's reads under its lock happen after.
	initialized bool
	clientID    string
	version     string
	shape       ahp.Shape
	scope       string
}

var errSlow = errors.New("slow consumer")

func newConn(s *Server, ws *websocket.Conn, remote string) *conn {
	c := &conn{s: s, ws: ws, wake: make(chan struct{}, 1)}
	c.log = s.log.With("remote", remote)
	c.ctx, c.cancel = context.WithCancelCause(s.ctx)
	return c
}

// Shape, Scope and Deliver make conn a terminals.Subscriber.
func (c *conn) Shape() ahp.Shape { return c.shape }
func (c *conn) Scope() string    { return c.scope }

// Deliver queues a frame without blocking; past the queue bound the connection
// is marked for eviction and the caller drops it.
func (c *conn) Deliver(frame []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.evicted {
		return false
	}
	if c.queued+len(frame) > c.s.cfg.SendQueue {
		c.evicted = true
		c.cancel(errSlow)
		return false
	}
	c.queue = append(c.queue, frame)
	c.queued += len(frame)
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// send queues a response or notification of our own.
func (c *conn) send(frame []byte) {
	if !c.Deliver(frame) {
		c.s.m.Leave(c)
	}
}

func (c *conn) run() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.writeLoop() }()
	go func() { defer wg.Done(); c.pingLoop() }()
	err := c.readLoop()
	c.cancel(err)
	wg.Wait()
	c.s.m.Leave(c)
	if c.initialized {
		c.s.m.Disconnected(c.clientID)
		c.s.forget(c.clientID)
	}
	cause := context.Cause(c.ctx)
	switch {
	case errors.Is(cause, errSlow):
		c.log.Info("evicted slow subscriber", "client", c.clientID)
		_ = c.ws.Close(closeSlowConsumer, "too slow: reconnect to resume")
	case errors.Is(c.s.ctx.Err(), context.Canceled):
		_ = c.ws.Close(websocket.StatusGoingAway, "server shutting down")
	case errors.Is(cause, websocket.ErrMessageTooBig):
		c.log.Warn("closed: inbound message over the limit", "limit", c.s.cfg.MaxFrame, "client", c.clientID)
	case errors.Is(cause, errUnsupportedVersion):
		_ = c.ws.Close(websocket.StatusPolicyViolation, "unsupported protocol version")
	default:
		c.log.Debug("connection closed", "client", c.clientID, "cause", cause)
		_ = c.ws.CloseNow()
	}
}

func (c *conn) readLoop() error {
	for {
		_, data, err := c.ws.Read(c.ctx)
		if err != nil {
			return err
		}
		if stop := c.handle(data); stop != nil {
			return stop
		}
	}
}

func (c *conn) writeLoop() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.wake:
		}
		c.mu.Lock()
		batch := c.queue
		c.queue = nil
		c.mu.Unlock()
		for _, frame := range batch {
			if err := c.ws.Write(c.ctx, websocket.MessageText, frame); err != nil {
				c.cancel(err)
				return
			}
			c.mu.Lock()
			c.queued -= len(frame)
			c.mu.Unlock()
		}
	}
}

func (c *conn) pingLoop() {
	t := time.NewTicker(c.s.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(c.ctx, c.s.cfg.PingInterval)
			err := c.ws.Ping(ctx)
			cancel()
			if err != nil && c.ctx.Err() == nil {
				c.log.Info("websocket ping failed", "client", c.clientID, "err", err)
				c.cancel(err)
				return
			}
		}
	}
}
