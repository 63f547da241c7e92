package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers/auth"
)

// whoami answers GET <base>/api/whoami: who the request's credential is
// on this host, {"name", "role"}, or, when it has none that works here,
// 401 (no credential, or a wrong or ended one) or 403 (a person the SSO
// proxy names who has no role here) with {"login": this host's absolute
// login URL}. A workbench on another host's page probes it to tell "not
// signed in here" (sign in at login) from "down" (no answer); only the
// origins the server accepts WebSockets from may read the answer (CORS).
func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	s.allowWorkbenchOrigin(w, r)
	who, ok, limited := s.authenticate(w, r, "")
	if limited {
		return
	}
	h.Set("Content-Type", "application/json")
	if !ok {
		status := http.StatusUnauthorized
		if who.Person != "" {
			status = http.StatusForbidden
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"login": s.publicBase(r) + "/"})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"name": whoName(who), "role": who.Role, "host": s.cfg.Hosts.Home()})
}

// whoName is how a principal is named to itself: the person the SSO proxy
// names, a share link's label, else its role.
func whoName(who auth.Principal) string {
	switch {
	case who.Person != "":
		return personLabel(who.Name, who.Person)
	case who.Share != nil && who.Share.Label != "":
		return cleanLabel(who.Share.Label)
	case who.Share != nil:
		return who.Role + " link"
	}
	return auth.RoleOwner
}

// allowWorkbenchOrigin lets a workbench on one of the configured origins
// (another host's page) read this answer with its credentials (CORS), and
// no other origin.
func (s *Server) allowWorkbenchOrigin(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Add("Vary", "Origin")
	if origin := r.Header.Get("Origin"); origin != "" && s.corsAllowed(origin) {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
}

// corsAllowed: origin is one of the configured origins (--allowed-origin,
// --public-url's), exactly; never an arbitrary one echoed back.
func (s *Server) corsAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" {
		return false
	}
	got := strings.ToLower(origin)
	return slices.ContainsFunc(s.cfg.AllowedOrigins, func(a string) bool {
		return got == strings.ToLower(strings.TrimSuffix(a, "/"))
	})
}

// hostsCSP is the Content-Security-Policy for the host list l: the page
// may open WebSockets to (and probe /api/whoami on) every host it lists.
func hostsCSP(l ext.HostList) string {
	var extra []string
	seen := map[string]bool{}
	for _, h := range l.Hosts {
		u, err := url.Parse(h.URL)
		if err != nil || u.Host == "" {
			continue
		}
		ws := "ws"
		if u.Scheme == "https" {
			ws = "wss"
		}
		for _, src := range []string{u.Scheme + "://" + u.Host, ws + "://" + u.Host} {
			if !seen[src] {
				seen[src] = true
				extra = append(extra, src)
			}
		}
	}
	if len(extra) == 0 {
		return contentSecurityPolicy
	}
	return strings.Replace(contentSecurityPolicy, "connect-src 'self'", "connect-src 'self' "+strings.Join(extra, " "), 1)
}
