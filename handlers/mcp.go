package handlers

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/termhost/termhost/handlers/auth"
)

// HeaderActingPerson and HeaderActingName carry, on a /mcp request handed
// to Config.MCP, the identity and display name of the person it acts for
// (an SSO owner, or the person beside the owner token); the server sets
// them once it has authenticated the request, after removing any a client
// sent. Without a person neither is set.
const (
	HeaderActingPerson = "Termhost-Acting-Person"
	HeaderActingName   = "Termhost-Acting-Name"
)

// mountMCP serves Config.MCP (termhost serve --mcp: the agent's tools over
// MCP's Streamable HTTP transport) at /mcp, for the owner only: the bearer
// owner token, the owner's sign-in or, under --auth proxy, a person whose
// role is owner; and, as the MCP spec asks of HTTP servers against DNS
// rebinding, an Origin the WebSocket would accept. The agent's actions are
// the person's (HeaderActingPerson, WithActingPerson).
func (s *Server) mountMCP(app chi.Router) {
	if s.cfg.MCP == nil {
		return
	}
	app.With(s.sameOrigin, s.requireOwnerActing).Handle("/mcp", s.cfg.MCP)
}

// requireOwnerActing is requireOwner that tells the handler whom the
// request acts for.
func (s *Server) requireOwnerActing(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.owner(w, r)
		if !ok {
			return
		}
		r.Header.Del(HeaderActingPerson)
		r.Header.Del(HeaderActingName)
		if p.Person != "" {
			r.Header.Set(HeaderActingPerson, p.Person)
			r.Header.Set(HeaderActingName, cleanLabel(firstNonEmpty(p.Name, p.Person)))
		}
		next.ServeHTTP(w, r)
	})
}

type actingKey struct{}

type acting struct{ person, name string }

// WithActingPerson marks the requests of an in-process connection (the
// agent behind /mcp, dialled for the person HeaderActingPerson named) as
// acting for that person: an owner credential on them is attributed to
// them (audit, presence). Only a context can carry it, never a header
// from the network.
func WithActingPerson(ctx context.Context, person, name string) context.Context {
	if person == "" {
		return ctx
	}
	return context.WithValue(ctx, actingKey{}, acting{person, name})
}

// actingFor adds the person a request's context acts for to an owner
// principal that names nobody.
func actingFor(r *http.Request, who auth.Principal) auth.Principal {
	a, ok := r.Context().Value(actingKey{}).(acting)
	if ok && who.Role == auth.RoleOwner && who.Share == nil && who.Person == "" {
		who.Person, who.Name = a.person, a.name
	}
	return who
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
