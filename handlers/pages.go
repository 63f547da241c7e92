package handlers

import (
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/static"
	"github.com/termhost/termhost/web"
)

// mountPages serves the web app: the workbench, terminal deep links and the
// bundles. Pages need a session; without one they show the login page,
// which reveals nothing. Bundles are public (they are the open-source app).
func (s *Server) mountPages(r chi.Router) {
	r.Handle("/static/*", http.StripPrefix("/static/", static.Handler()))
	r.Get("/", s.workbench)
	r.Get("/t/{id}", s.workbench)
}

func (s *Server) workbench(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	terminal := ""
	if id != "" {
		terminal = ahp.TerminalURI(id)
	}
	page := web.Page{BasePath: basePath(r), TerminalID: id, Version: s.cfg.Version}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	who, ok := s.identify(r, terminal)
	if !ok {
		if hasShareCookie(r) && id == "" {
			// A teammate's bookmark of the workbench: their link grants one terminal.
			if sh, ok := s.identify(r, ""); ok && sh.share != nil {
				http.Redirect(w, r, page.BasePath+"/t/"+strings.TrimPrefix(sh.share.Terminal, ahp.TerminalScheme+"/"), http.StatusFound)
				return
			}
		}
		render(w, r, http.StatusUnauthorized, web.Login(page))
		return
	}
	if who.share != nil && id == "" {
		http.Redirect(w, r, page.BasePath+"/t/"+strings.TrimPrefix(who.share.Terminal, ahp.TerminalScheme+"/"), http.StatusFound)
		return
	}
	page.Role = who.role
	if id != "" && !s.m.Exists(terminal) {
		render(w, r, http.StatusNotFound, web.NotFound(page))
		return
	}
	render(w, r, http.StatusOK, web.Workbench(page))
}

func hasShareCookie(r *http.Request) bool {
	for _, c := range r.Cookies() {
		if strings.HasPrefix(c.Name, shareCookiePrefix) {
			return true
		}
	}
	return false
}

func render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = c.Render(r.Context(), w)
}
