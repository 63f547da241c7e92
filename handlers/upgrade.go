package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/idlemem"
	"github.com/termhost/termhost/internal/label"
)

// originAllowed checks a browser's Origin against the public origins: the
// configured ones (--public-url, --allowed-origin) and the listener's own.
// Only when none is configured does a trusted proxy's forwarded origin
// count, and only when nothing at all is known (embedded use and tests) a
// same-origin page by its bare Host header. Requests without an Origin are
// not from a browser page.
func (s *Server) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	got := strings.ToLower(u.Scheme + "://" + u.Host)
	for _, allowed := range slices.Concat(s.cfg.AllowedOrigins, s.cfg.ListenerOrigins) {
		if got == strings.ToLower(strings.TrimSuffix(allowed, "/")) {
			return true
		}
	}
	if len(s.cfg.AllowedOrigins) > 0 {
		// The public URL names the origin: a forwarded Host cannot widen it.
		return false
	}
	if s.trusted(r) {
		info := requestInfo(r)
		if got == strings.ToLower(info.scheme+"://"+info.host) {
			return true
		}
	}
	return len(s.cfg.ListenerOrigins) == 0 && strings.EqualFold(u.Host, r.Host)
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !s.originAllowed(r) {
		s.metrics.authFailures.WithLabelValues("origin").Inc()
		s.log.Warn("websocket refused: Origin is not an allowed origin (set --public-url or --allowed-origin)",
			"origin", ahp.Clip(r.Header.Get("Origin")), "allowed", s.cfg.AllowedOrigins, "remote", s.clientAddr(r))
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	r = withQueryToken(r)
	terminal := ""
	if id := r.URL.Query().Get("terminal"); id != "" {
		terminal = ahp.TerminalURIOf(id)
	}
	who, ok, limited := s.authenticate(w, r, terminal)
	if limited {
		return
	}
	if !ok && who.Person != "" {
		s.metrics.authFailures.WithLabelValues("not_allowed").Inc()
		http.Error(w, "not allowed: "+label.Clean(who.Person)+" has no role on this server", http.StatusForbidden)
		return
	}
	if !ok {
		s.metrics.authFailures.WithLabelValues("unauthenticated").Inc()
		s.log.Info("websocket refused: not authenticated", "remote", s.clientAddr(r))
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return
	}
	if !s.enter() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	// Accept hijacks the connection, which clears the http.Server's deadlines:
	// ReadTimeout does not end a long-lived WebSocket (TestServeTimeouts).
	ws, err := websocket.Accept(leanBuffers{w}, r, &websocket.AcceptOptions{InsecureSkipVerify: true, // origin checked above
		CompressionMode: s.compressionMode(r)})
	if err != nil {
		s.conns.Done()
		s.log.Debug("websocket accept", "err", err)
		return
	}
	ws.SetReadLimit(s.cfg.MaxFrame)
	addr := s.clientAddr(r)
	c := newConn(s, ws, addr)
	c.role, c.scope, c.publicBase = who.Role, who.Scope(), s.publicBase(r)
	c.principal = who.ID()
	c.person, c.name, c.remote = who.Person, cleanLabel(who.Name), addr
	c.presence.device = deviceLabel(r.UserAgent())
	// The connection runs on goroutines of its own (counted in s.conns) and
	// this handler returns, so that net/http lets go of the hijacked
	// connection: its 4 KiB buffers and its goroutine, whose stack the
	// router's frames have grown. An idle tab keeps one shallow goroutine.
	go s.serveConn(c, who, terminal)
}

// serveConn starts an accepted connection; its reader undoes what this
// set up once the connection has ended.
func (s *Server) serveConn(c *conn, who auth.Principal, terminal string) {
	addr := c.remote
	end := []func(){s.conns.Done} // run last to first
	if over := s.admit(c, who); over != "" {
		s.metrics.overBudget.WithLabelValues("connections").Inc()
		s.log.Info("websocket closed: "+over, "remote", addr, "who", c.who())
		c.closeWith(closeTooMany, over)
	} else {
		end = append(end, func() { s.leave(c) })
	}
	if who.Share != nil {
		c.shareID, c.presence.label = who.Share.ID, who.Share.Label
		over := s.trackShare(c, c.shareID, addr)
		untrack := func() { s.untrackShare(c, c.shareID, addr) }
		switch {
		case over != "":
			s.log.Info("websocket closed: "+over, "remote", addr, "share", c.shareID)
			c.closeWith(closeTooMany, over)
		case !s.auth.Shares.Valid(c.shareID):
			// Revoked or expired since identify, before trackShare: no one else will cut it.
			end = append(end, untrack)
			c.closeWith(closeRevoked, "share link revoked or expired")
		default:
			end = append(end, untrack)
		}
	}
	if who.FromRoles {
		end = append(end, s.trackPerson(c))
	}
	s.metrics.connections.Inc()
	idlemem.Touch() // opening a tab leaves garbage: give it back once all is quiet
	// The connect is audited once the client says who it is (recordConnect).
	c.connectedAt, c.connectedTo = time.Now(), terminal
	end = append(end, s.metrics.connections.Dec, idlemem.Touch, func() {
		c.recordConnect()
		c.record(audit.Disconnect, terminal, nil)
	})
	c.start(end)
}

// withQueryToken turns ?tkn=<token> (owner or share token) into the bearer
// credential it stands for: VS Code's browser WebSocket can send neither a
// header nor our cookie. Only the upgrade accepts it (a token in a page URL
// would end up in history and Referer), a header wins over it, and it is
// removed from the URL so that nothing after this point can log it. A wrong
// one counts against the failed-credential limit like any other credential.
func withQueryToken(r *http.Request) *http.Request {
	q := r.URL.Query()
	tok, ok := q["tkn"]
	if !ok {
		return r
	}
	q.Del("tkn")
	r = r.Clone(r.Context())
	r.URL.RawQuery = q.Encode()
	r.RequestURI = r.URL.RequestURI()
	if r.Header.Get("Authorization") == "" && tok[0] != "" {
		r.Header.Set("Authorization", "Bearer "+tok[0])
	}
	return r
}
