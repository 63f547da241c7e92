package handlers

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/static"
	"github.com/termhost/termhost/web"
)

// contentSecurityPolicy allows only our own scripts (no inline script), and
// inline styles, which xterm.js sets on its elements. The page connects to
// its own server and to the hosts its server lists (hostsCSP). 'wasm-unsafe-eval'
// lets the replay player (asciinema-player, static/dist/player.js) compile
// its terminal emulator, WebAssembly bundled in that script; it allows no
// JavaScript eval.
const contentSecurityPolicy = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// securityHeaders go on every response: pages, bundles and API answers alike.
func (s *Server) securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", *s.csp.Load())
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		if s.publicScheme(r) == "https" {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		next.ServeHTTP(w, r)
	})
}

// mountPages serves the web app: the workbench, terminal deep links and the
// bundles. Pages need a session; without one they show the login page,
// which reveals nothing (200 to a browser's navigation, see signInStatus). Bundles are public (they are the open-source app),
// their source maps only for the owner.
func (s *Server) mountPages(r chi.Router) {
	r.Handle("/static/*", http.StripPrefix("/static/", s.ownerOnlySourceMaps(s.testBundleOnlyForTests(static.Handler()))))
	r.Get("/", s.workbench)
	r.Get("/t/{id}", s.workbench)
	r.Get("/h/{host}/t/{id}", s.otherHostPage)
}

// hostNamePattern is what a host may be named in page paths (/h/<host>/…):
// the browser accepts the same names from the hosts list (assets/ahp/hosts.ts).
var hostNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// otherHostPage serves /h/<host>/t/<id>, the deep link of a terminal on
// another host (README "Many boxes"): the workbench's start page, whose
// script opens that terminal over the other host's own WebSocket. This
// server knows nothing of the terminal, so it names none: a share link's
// holder is sent to its own terminal as on the start page.
func (s *Server) otherHostPage(w http.ResponseWriter, r *http.Request) {
	if !hostNamePattern.MatchString(chi.URLParam(r, "host")) || chi.URLParam(r, "id") == "" {
		http.NotFound(w, r)
		return
	}
	s.workbenchPage(w, r, "")
}

// terminalPath is the page path of a terminal: /t/<id> for
// ahp-terminal:/<id>, /t/<escaped URI> for a URI of the client's choosing
// (agenthost-terminal:/<uuid> → /t/agenthost-terminal:%2F<uuid>).
func terminalPath(uri string) string {
	return "/t/" + url.PathEscape(ahp.TerminalIDOf(uri))
}

// pageTerminalID is the unescaped {id} of /t/{id}: chi matches the escaped
// path when it has escapes (a %2F stays inside the segment).
func pageTerminalID(r *http.Request) (string, bool) {
	id := chi.URLParam(r, "id")
	if r.URL.RawPath == "" {
		return id, true
	}
	id, err := url.PathUnescape(id)
	return id, err == nil
}

func (s *Server) workbench(w http.ResponseWriter, r *http.Request) {
	id, ok := pageTerminalID(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.workbenchPage(w, r, id)
}

// workbenchPage is the workbench with the terminal of this server that id
// names ("" the start page).
func (s *Server) workbenchPage(w http.ResponseWriter, r *http.Request, id string) {
	terminal := ""
	if id != "" {
		terminal = ahp.TerminalURIOf(id)
	}
	page := web.Page{BasePath: basePath(r), TerminalID: id, Version: s.cfg.Version, TestHooks: s.cfg.TestHooks}
	w.Header().Set("Cache-Control", "no-store")
	who, ok, limited := s.authenticate(w, r, terminal)
	if limited {
		return
	}
	if !ok && who.Person != "" {
		s.notAllowed(w, r, page, who)
		return
	}
	if !ok {
		status := signInStatus(r)
		if s.cfg.SSO != nil {
			// Behind SSO the proxy signs people in: a request without a
			// believable identity is refused (the page still takes the
			// owner token, for break-glass access).
			status = http.StatusUnauthorized
		}
		render(w, r, status, web.Login(page))
		return
	}
	if who.Share != nil && id == "" {
		// A teammate's bookmark of the workbench: their link grants one terminal.
		http.Redirect(w, r, page.BasePath+terminalPath(who.Share.Terminal), http.StatusFound)
		return
	}
	page.Role = who.Role
	if who.Person != "" {
		// The status bar names them, and presence tells their own tabs
		// from the owner token's other clients (the CLI).
		page.Person = personLabel(who.Name, who.Person)
	}
	page.Scrollback = s.m.Config().Scrollback
	if who.Role == auth.RoleOwner { // for the Share dialog's warning about driver links
		page.ServerUser, page.ServerHost = shellAccount()
	}
	if id != "" && !s.m.Exists(terminal) {
		render(w, r, http.StatusNotFound, web.NotFound(page))
		return
	}
	if who.Share == nil {
		// Whoever may list the hosts (GET /api/hosts, mayList) gets the list
		// in the page, so that it opens every host's WebSocket at once with
		// its own; a share link's page reaches its one terminal only. The
		// page may connect to exactly these hosts: its Content-Security-Policy
		// is made from the same list, even if the file changed since the
		// middleware set the header.
		l := s.cfg.Hosts.Current()
		page.Hosts = &l
		w.Header().Set("Content-Security-Policy", hostsCSP(l))
	}
	render(w, r, http.StatusOK, web.Workbench(page))
}

// signInStatus is the status of the sign-in page: 200 when a browser
// navigates to it (a login or share link: it is the sign-in step, and a
// browser logs every 4xx page as a console error), 401 to anything else:
// the page's own access probe (connectionBanner.ts) and scripts learn that
// the request had no valid credential.
func signInStatus(r *http.Request) int {
	if r.Header.Get("Sec-Fetch-Mode") == "navigate" {
		return http.StatusOK
	}
	return http.StatusUnauthorized
}

// ownerOnlySourceMaps answers 404 for a source map to anyone but the owner.
func (s *Server) ownerOnlySourceMaps(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".map") {
			who, ok, limited := s.authenticate(w, r, "")
			if limited {
				return
			}
			if !ok || who.Role != auth.RoleOwner {
				http.NotFound(w, r)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = c.Render(r.Context(), w)
}
