package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/internal/audit"
)

// The owner cookie holds a random session id; each share cookie holds that
// share's token (checked against the store on every use, so a revoked link
// stops working at once). Their names end in a suffix of the server's public
// address (see cookieNames).
const (
	ownerCookieBase = "termhost_session_"
	shareCookieBase = "termhost_share_"
)

// tooManyFailures answers 429 when the limiter has no failure left.
func (s *Server) tooManyFailures(w http.ResponseWriter, lim *rate.Limiter) bool {
	tokens := lim.Tokens()
	if tokens >= 1 {
		return false
	}
	wait := (1 - tokens) * auth.FailureEvery.Seconds()
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait))))
	s.metrics.authFailures.WithLabelValues("rate_limited").Inc()
	http.Error(w, "too many failed sign-ins from your address; wait a little", http.StatusTooManyRequests)
	return true
}

// cookieNames are this server's cookie names. Browsers do not isolate
// cookies by port or base path, so two servers on one host would overwrite
// each other's cookies: the names end in a hash of the public base URL.
type cookieNames struct {
	owner       string
	sharePrefix string // + share id
}

func (s *Server) cookieNames(r *http.Request) cookieNames {
	sum := sha256.Sum256([]byte(strings.ToLower(s.publicBase(r))))
	suffix := hex.EncodeToString(sum[:4])
	return cookieNames{owner: ownerCookieBase + suffix, sharePrefix: shareCookieBase + suffix + "_"}
}

// cookie is one of our cookies: HttpOnly, SameSite=Strict, scoped to the
// base path, Secure whenever browsers reach us over https (the public URL
// says so even when the proxy talks plain HTTP to us).
func (s *Server) cookie(r *http.Request, name, value string) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: basePath(r) + "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.publicScheme(r) == "https"}
}

// publicScheme is the scheme browsers use: the public URL's, else the request's.
func (s *Server) publicScheme(r *http.Request) string {
	if u, err := url.Parse(s.cfg.PublicURL); err == nil && u.Scheme != "" {
		return u.Scheme
	}
	return requestScheme(r)
}

// identity is what a request's credentials say.
type identity struct {
	who   auth.Principal
	ok    bool
	why   string   // why a presented credential ended (ended*), when known
	bad   bool     // a presented credential may be a guess: wrong, or a stale owner session
	stale []string // our cookies whose session or link is gone, and why is not known
}

// identify checks a request's credentials. terminal, when set, selects
// which share cookie to use (a browser may hold links to several terminals);
// a valid link to another terminal is not a bad credential, nor is the token
// of a link revoked or expired lately (a teammate's open tab retrying it).
func (s *Server) identify(r *http.Request, terminal string, names cookieNames) identity {
	a := s.auth
	inScope := func(sh *auth.Share) bool { return terminal == "" || sh.Terminal == terminal }
	if h := r.Header.Get("Authorization"); h != "" {
		tok, isBearer := strings.CutPrefix(h, "Bearer ")
		if !isBearer {
			return identity{bad: true}
		}
		if a.OwnerToken(tok) {
			return identity{who: auth.Principal{Role: auth.RoleOwner}, ok: true}
		}
		sh := a.Shares.Lookup(tok)
		if sh == nil {
			why := a.Shares.EndedWhy(tok)
			return identity{bad: why == "", why: why}
		}
		return identity{who: auth.Principal{Role: sh.Role, Share: sh}, ok: inScope(sh)}
	}
	var id identity
	guess := false
	if c, err := r.Cookie(names.owner); err == nil {
		if a.ValidSession(c.Value) {
			return identity{who: auth.Principal{Role: auth.RoleOwner}, ok: true}
		}
		// A cookie whose end is known is kept while it is remembered: the
		// page's next request learns why (auth.TellEnded), which the refused
		// WebSocket upgrade cannot show it.
		if id.why = a.SessionEndedWhy(c.Value); id.why == "" {
			id.stale, guess = append(id.stale, c.Name), true
		}
	}
	for _, c := range r.Cookies() {
		if !strings.HasPrefix(c.Name, names.sharePrefix) {
			continue
		}
		switch sh := a.Shares.Lookup(c.Value); {
		case sh == nil:
			why := a.Shares.EndedWhy(c.Value)
			if why == "" {
				id.stale, guess = append(id.stale, c.Name), true
			} else if id.why == "" {
				id.why = why
			}
		case !id.ok && inScope(sh):
			id.who, id.ok = auth.Principal{Role: sh.Role, Share: sh}, true
		}
	}
	id.bad = !id.ok && guess
	if id.ok {
		id.why = ""
	}
	return id
}

// presentsCredential: the request carries a token or one of our cookies.
func presentsCredential(r *http.Request, names cookieNames) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	for _, c := range r.Cookies() {
		if c.Name == names.owner || strings.HasPrefix(c.Name, names.sharePrefix) {
			return true
		}
	}
	return false
}

// authenticate identifies a request under the failed-credential limit. An
// address with too many recent failures gets 429 (written here: limited)
// before its credential is even looked at. A wrong credential counts as a
// failure; a stale cookie is dropped so that the browser stops sending it.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, terminal string) (who auth.Principal, ok, limited bool) {
	if s.cfg.SSO != nil {
		who, ok, limited = s.authenticateSSO(w, r, terminal) // sso.go
	} else {
		who, ok, limited = s.authenticateToken(w, r, terminal)
	}
	if ok {
		who = actingFor(r, who) // mcp.go
	}
	return who, ok, limited
}

// authenticateToken is authenticate by token and cookies alone (--auth token).
func (s *Server) authenticateToken(w http.ResponseWriter, r *http.Request, terminal string) (who auth.Principal, ok, limited bool) {
	if s.auth.Disabled {
		return auth.Principal{Role: auth.RoleOwner}, true, false
	}
	names := s.cookieNames(r)
	if !presentsCredential(r, names) {
		return auth.Principal{}, false, false
	}
	addr := s.clientAddr(r)
	lim := s.auth.Limiter(addr)
	if s.tooManyFailures(w, lim) {
		return auth.Principal{}, false, true
	}
	id := s.identify(r, terminal, names)
	if !id.ok {
		auth.TellEnded(w, id.why)
	}
	for _, name := range id.stale {
		c := s.cookie(r, name, "")
		c.MaxAge = -1
		http.SetCookie(w, c)
	}
	if id.bad {
		auth.RecordFailure(lim)
		s.metrics.authFailures.WithLabelValues("bad_credential").Inc()
		s.log.Info("refused a wrong, expired or revoked credential", "remote", addr, "path", ahp.Clip(r.URL.Path)) // never the credential
	}
	return id.who, id.ok, false
}

// sameOriginJSON refuses (403) a request that a page of another site could
// have sent: a cross-site fetch or form post (Sec-Fetch-Site, else Origin
// against the allowed origins), or any body but JSON, which a cross-origin
// page can only send after a CORS preflight that is never granted.
func (s *Server) sameOriginJSON(w http.ResponseWriter, r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err := s.csrf.Check(r); err != nil || mt != "application/json" {
		s.metrics.authFailures.WithLabelValues("cross_site").Inc()
		s.log.Warn("refused a cross-site or non-JSON sign-in request", "remote", s.clientAddr(r),
			"origin", ahp.Clip(r.Header.Get("Origin")), "fetchSite", ahp.Clip(r.Header.Get("Sec-Fetch-Site")), "contentType", ahp.Clip(mt))
		http.Error(w, "cross-site request refused", http.StatusForbidden)
		return false
	}
	return true
}

// newCrossOriginProtection trusts the configured and listener origins.
func (s *Server) newCrossOriginProtection() *http.CrossOriginProtection {
	cop := http.NewCrossOriginProtection()
	for _, o := range append(append([]string{}, s.cfg.AllowedOrigins...), s.cfg.ListenerOrigins...) {
		if err := cop.AddTrustedOrigin(strings.TrimSuffix(o, "/")); err != nil {
			s.log.Warn("ignoring a malformed allowed origin for sign-in", "origin", o, "err", err)
		}
	}
	return cop
}

// login exchanges an owner token or a share token (from the URL fragment,
// posted by the login page) for an HttpOnly, SameSite=Strict cookie scoped
// to the base path.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !s.sameOriginJSON(w, r) {
		return
	}
	addr := s.clientAddr(r)
	lim := s.auth.Limiter(addr)
	if s.tooManyFailures(w, lim) {
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
	base, names := basePath(r), s.cookieNames(r)
	switch {
	case body.Token != "" && s.auth.OwnerToken(body.Token):
		cookie := s.cookie(r, names.owner, s.auth.NewSession())
		cookie.MaxAge = int(auth.SessionLifetime / time.Second)
		http.SetCookie(w, cookie)
		_ = json.NewEncoder(w).Encode(map[string]string{"role": auth.RoleOwner, "next": base + "/"})
		s.log.Info("owner logged in", "remote", addr)
		s.cfg.Audit.Record(audit.Event{Event: audit.SignIn, Who: auth.RoleOwner, Role: auth.RoleOwner, Remote: addr, Detail: "owner token"})
		return
	case body.Share != "":
		if sh := s.auth.Shares.Lookup(body.Share); sh != nil {
			cookie := s.cookie(r, names.sharePrefix+sh.ID, body.Share)
			if !sh.ExpiresAt.IsZero() {
				cookie.Expires = sh.ExpiresAt
			}
			http.SetCookie(w, cookie)
			_ = json.NewEncoder(w).Encode(map[string]string{"role": sh.Role, "next": base + terminalPath(sh.Terminal)})
			s.log.Info("share link used", "share", sh.ID, "role", sh.Role, "remote", addr)
			s.cfg.Audit.Record(audit.Event{Event: audit.ShareUsed, Who: "share:" + sh.ID, Name: sh.Label, Role: sh.Role,
				Remote: addr, Terminal: sh.Terminal, Title: s.titleOf(sh.Terminal), Share: sh.ID})
			return
		}
	}
	if why := s.auth.Shares.EndedWhy(body.Share); body.Share != "" && why != "" {
		// A link that worked once, opened again: not a guess; say why it ended.
		auth.TellEnded(w, why)
		http.Error(w, auth.EndedLinkText[why], http.StatusUnauthorized)
		return
	}
	auth.RecordFailure(lim)
	s.metrics.authFailures.WithLabelValues("bad_credential").Inc()
	s.log.Warn("failed login", "remote", addr) // never the token itself
	http.Error(w, "that link is not valid (wrong, expired or revoked)", http.StatusUnauthorized)
}

// logout ends the owner session on the server and drops its cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if !s.sameOriginJSON(w, r) {
		return
	}
	names := s.cookieNames(r)
	if c, err := r.Cookie(names.owner); err == nil {
		s.auth.EndSession(c.Value)
	}
	cookie := s.cookie(r, names.owner, "")
	cookie.MaxAge = -1
	http.SetCookie(w, cookie)
	w.WriteHeader(http.StatusNoContent)
}

// clientAddr is the client's IP: the peer, or, when the peer is a trusted
// proxy, the right-most X-Forwarded-For entry: the address that proxy saw
// and appended. Entries left of it come from the client and can say
// anything, so rotating them changes nothing here.
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if s.trusted(r) {
		if ip, ok := lastForwardedFor(r.Header); ok {
			return ip
		}
	}
	return host
}

// lastForwardedFor is the last entry of the last X-Forwarded-For line (a
// proxy may append a line of its own rather than extend the client's).
func lastForwardedFor(h http.Header) (string, bool) {
	lines := h.Values("X-Forwarded-For")
	if len(lines) == 0 {
		return "", false
	}
	last := lines[len(lines)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	ip, err := netip.ParseAddr(strings.TrimSpace(last))
	if err != nil {
		return "", false
	}
	return ip.Unmap().String(), true
}
