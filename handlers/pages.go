package handlers

import "github.com/go-chi/chi/v5"

// mountPages serves the web app (workbench, terminal deep links, assets).
func (s *Server) mountPages(r chi.Router) {}
