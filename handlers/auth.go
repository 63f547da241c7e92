package handlers

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Cookie names. The owner cookie holds a random session id; each share
// cookie holds that share's token (checked against the store on every use,
// so a revoked link stops working at once).
const (
	ownerCookie       = "termhost_session"
	shareCookiePrefix = "termhost_share_"
	sessionLifetime   = 30 * 24 * time.Hour
)

// principal is who a request acts for.
type principal struct {
	role  string
	share *share // nil for the owner
}

func (p principal) scope() string {
	if p.share == nil {
		return ""
	}
	return p.share.Terminal
}

// auth holds the owner token, owner sessions and the failed-login limiter.
type auth struct {
	disabled bool
	token    []byte
	shares   *shares

	mu       sync.Mutex
	sessions map[[32]byte]time.Time // sha256(session id) → expiry
	limiters map[string]*rate.Limiter
}

func newAuth(token string, disabled bool) *auth {
	return &auth{disabled: disabled, token: []byte(token), shares: newShares(),
		sessions: map[[32]byte]time.Time{}, limiters: map[string]*rate.Limiter{}}
}

func (a *auth) ownerToken(tok string) bool {
	return len(a.token) > 0 && subtle.ConstantTimeCompare([]byte(tok), a.token) == 1
}

func (a *auth) newSession() string {
	id := randomToken(32)
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	for h, exp := range a.sessions {
		if now.After(exp) {
			delete(a.sessions, h)
		}
	}
	a.sessions[sha256.Sum256([]byte(id))] = now.Add(sessionLifetime)
	return id
}

func (a *auth) endSession(id string) {
	h := sha256.Sum256([]byte(id))
	a.mu.Lock()
	delete(a.sessions, h)
	a.mu.Unlock()
}

func (a *auth) validSession(id string) bool {
	h := sha256.Sum256([]byte(id))
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.sessions[h]
	return ok && time.Now().Before(exp)
}

// limiter returns the failed-login limiter of a client address: a burst of
// 10 failures, then one every 6 seconds.
func (a *auth) limiter(addr string) *rate.Limiter {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.limiters) > 10000 { // bound memory under a spray of addresses
		clear(a.limiters)
	}
	l := a.limiters[addr]
	if l == nil {
		l = rate.NewLimiter(rate.Every(6*time.Second), 10)
		a.limiters[addr] = l
	}
	return l
}

// identify returns the principal of a request. terminal, when set, selects
// which share cookie to use (a browser may hold links to several terminals).
func (s *Server) identify(r *http.Request, terminal string) (principal, bool) {
	a := s.auth
	if a.disabled {
		return principal{role: RoleOwner}, true
	}
	if h := r.Header.Get("Authorization"); h != "" {
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			return principal{}, false
		}
		if a.ownerToken(tok) {
			return principal{role: RoleOwner}, true
		}
		if sh := a.shares.lookup(tok); sh != nil && (terminal == "" || sh.Terminal == terminal) {
			return principal{role: sh.Role, share: sh}, true
		}
		return principal{}, false
	}
	if c, err := r.Cookie(ownerCookie); err == nil && a.validSession(c.Value) {
		return principal{role: RoleOwner}, true
	}
	for _, c := range r.Cookies() {
		if !strings.HasPrefix(c.Name, shareCookiePrefix) {
			continue
		}
		if sh := a.shares.lookup(c.Value); sh != nil && (terminal == "" || sh.Terminal == terminal) {
			return principal{role: sh.Role, share: sh}, true
		}
	}
	return principal{}, false
}

// login exchanges an owner token or a share token (from the URL fragment,
// posted by the login page) for an HttpOnly, SameSite=Strict cookie scoped
// to the base path.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	addr := s.clientAddr(r)
	lim := s.auth.limiter(addr)
	if lim.Tokens() < 1 {
		s.metrics.authFailures.WithLabelValues("rate_limited").Inc()
		w.Header().Set("Retry-After", "6")
		http.Error(w, "too many failed logins; wait a little", http.StatusTooManyRequests)
		return
	}
	var body struct {
		Token string `json:"token"`
		Share string `json:"share"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil {
		http.Error(w, "bad login request", http.StatusBadRequest)
		return
	}
	base := basePath(r)
	cookie := &http.Cookie{Path: base + "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: requestScheme(r) == "https"}
	switch {
	case body.Token != "" && s.auth.ownerToken(body.Token):
		cookie.Name, cookie.Value = ownerCookie, s.auth.newSession()
		cookie.MaxAge = int(sessionLifetime / time.Second)
		http.SetCookie(w, cookie)
		_ = json.NewEncoder(w).Encode(map[string]string{"role": RoleOwner, "next": base + "/"})
		s.log.Info("owner logged in", "remote", addr)
		return
	case body.Share != "":
		if sh := s.auth.shares.lookup(body.Share); sh != nil {
			cookie.Name, cookie.Value = shareCookiePrefix+sh.ID, body.Share
			if !sh.ExpiresAt.IsZero() {
				cookie.Expires = sh.ExpiresAt
			}
			http.SetCookie(w, cookie)
			id := strings.TrimPrefix(sh.Terminal, "ahp-terminal:/")
			_ = json.NewEncoder(w).Encode(map[string]string{"role": sh.Role, "next": base + "/t/" + id})
			s.log.Info("share link used", "share", sh.ID, "role", sh.Role, "remote", addr)
			return
		}
	}
	lim.Allow() // count the failure
	s.metrics.authFailures.WithLabelValues("bad_token").Inc()
	s.log.Warn("failed login", "remote", addr) // never the token itself
	http.Error(w, "that link is not valid (wrong, expired or revoked)", http.StatusUnauthorized)
}

// logout ends the owner session on the server and drops its cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(ownerCookie); err == nil {
		s.auth.endSession(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: ownerCookie, Path: basePath(r) + "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

// clientAddr is the client's IP: the peer, or the address a trusted proxy
// reports in X-Forwarded-For.
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if s.trusted(r) {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			parts := strings.Split(xff, ",")
			return strings.TrimSpace(parts[len(parts)-1])
		}
	}
	return host
}
