package handlers

import (
	"net/http"
	"os"
	"os/user"
	"path"
	"sync"

	"github.com/termhost/termhost/web"
)

// testBundleOnlyForTests answers 404 for the app's test build (it exposes
// window.__termhost) unless the server is configured for tests: a production
// page can never be made to load it.
func (s *Server) testBundleOnlyForTests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.cfg.TestHooks && path.Base(path.Clean("/"+r.URL.Path)) == web.TestBundle {
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// shellAccount is the Unix user and host the shells run as (this process's):
// the Share dialog names them when it warns that a driver link is a shell.
// Either is "" when unknown.
var shellAccount = sync.OnceValues(func() (string, string) {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name, host
})
