package handlers

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// mountMCP serves Config.MCP (termhost serve --mcp: the agent's tools over
// MCP's Streamable HTTP transport) at /mcp, for the owner only: the bearer
// owner token (or the owner's sign-in), and, as the MCP spec asks of HTTP
// servers against DNS rebinding, an Origin the WebSocket would accept.
func (s *Server) mountMCP(app chi.Router) {
	if s.cfg.MCP == nil {
		return
	}
	app.With(s.sameOrigin, s.requireOwner).Handle("/mcp", s.cfg.MCP)
}

// sameOrigin refuses a request whose Origin is not one of the server's.
func (s *Server) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.originAllowed(r) {
			s.metrics.authFailures.WithLabelValues("cross_site").Inc()
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
