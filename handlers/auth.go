package handlers

import (
	"crypto/sha256"
	"crypto/subtle"
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
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/termhost/termhost/ahp"
)

// The owner cookie holds a random session id; each share cookie holds that
// share's token (checked against the store on every use, so a revoked link
// stops working at once). Their names end in a suffix of the server's public
// address (see cookieNames).
const (
	ownerCookieBase = "termhost_session_"
	shareCookieBase = "termhost_share_"
	sessionLifetime = 30 * 24 * time.Hour
)

// Failed credentials per client address: a burst of failureBurst, then one
// every failureEvery. Failures past the burst go into debt up to another
// burst, so a parallel volley is paid for without locking an address out
// for hours.
const (
	failureBurst = 10
	failureEvery = 6 * time.Second
	maxLimiters  = 10000
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

// auth holds the owner token, owner sessions and the failed-credential limiters.
type auth struct {
	disabled bool
	token    []byte
	shares   *shares
	persist  *persister // nil: nothing survives a restart (no state directory)

	mu       sync.Mutex
	sessions map[[32]byte]time.Time // sha256(session id) → expiry
	gone     map[[32]byte]goneEntry // sessions ended lately, and why
	limiters map[string]*rate.Limiter
}

func newAuth(token string, disabled bool, c clock) *auth {
	return &auth{disabled: disabled, token: []byte(token), shares: newShares(c),
		sessions: map[[32]byte]time.Time{}, gone: map[[32]byte]goneEntry{}, limiters: map[string]*rate.Limiter{}}
}

func (a *auth) ownerToken(tok string) bool {
	return len(a.token) > 0 && subtle.ConstantTimeCompare([]byte(tok), a.token) == 1
}

func (a *auth) newSession() string {
	id := randomToken(32)
	a.addSession(sha256.Sum256([]byte(id)), time.Now())
	a.save()
	return id
}

// addSession records a session hash, dropping the expired ones.
func (a *auth) addSession(h [32]byte, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for old, exp := range a.sessions {
		if now.After(exp) {
			a.endLocked(old, endedSessionExpired, now)
		}
	}
	a.sessions[h] = now.Add(sessionLifetime)
}

func (a *auth) endSession(id string) {
	h := sha256.Sum256([]byte(id))
	a.mu.Lock()
	if _, ok := a.sessions[h]; ok {
		a.endLocked(h, endedSignedOut, time.Now())
	}
	a.mu.Unlock()
	a.save()
}

// endLocked drops a session and remembers why it ended.
func (a *auth) endLocked(h [32]byte, why string, now time.Time) {
	delete(a.sessions, h)
	rememberGone(a.gone, h, goneEntry{until: now.Add(goneRetention), why: why}, now)
}

// sessionEndedWhy is why the owner session id ended lately, "" when unknown.
func (a *auth) sessionEndedWhy(id string) string {
	h := sha256.Sum256([]byte(id))
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if exp, ok := a.sessions[h]; ok && !now.Before(exp) {
		return endedSessionExpired
	}
	return goneWhy(a.gone, h, now)
}

func (a *auth) validSession(id string) bool {
	h := sha256.Sum256([]byte(id))
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.sessions[h]
	return ok && time.Now().Before(exp)
}

// limiter returns the failed-credential limiter of a client address (an
// IPv6 client's whole /64, which one host usually owns).
func (a *auth) limiter(addr string) *rate.Limiter {
	key := addr
	if ip, err := netip.ParseAddr(addr); err == nil && ip.Is6() && !ip.Is4In6() {
		key = netip.PrefixFrom(ip, 64).Masked().String()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.limiters) >= maxLimiters {
		a.pruneLimitersLocked()
	}
	l := a.limiters[key]
	if l == nil {
		l = rate.NewLimiter(rate.Every(failureEvery), failureBurst)
		a.limiters[key] = l
	}
	return l
}

// pruneLimitersLocked bounds memory under a spray of addresses: limiters
// back at their full burst remember nothing, and only if failures come
// from too many addresses at once is everything forgotten.
func (a *auth) pruneLimitersLocked() {
	for key, l := range a.limiters {
		if l.Tokens() >= failureBurst {
			delete(a.limiters, key)
		}
	}
	if len(a.limiters) >= maxLimiters {
		clear(a.limiters)
	}
}

// recordFailure counts one failed credential.
func recordFailure(lim *rate.Limiter) {
	if lim.Tokens() > -failureBurst {
		lim.Reserve() // never refused: past the burst it goes into debt
	}
}

// tooManyFailures answers 429 when the limiter has no failure left.
func (s *Server) tooManyFailures(w http.ResponseWriter, lim *rate.Limiter) bool {
	tokens := lim.Tokens()
	if tokens >= 1 {
		return false
	}
	wait := (1 - tokens) * failureEvery.Seconds()
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
	who   principal
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
	inScope := func(sh *share) bool { return terminal == "" || sh.Terminal == terminal }
	if h := r.Header.Get("Authorization"); h != "" {
		tok, isBearer := strings.CutPrefix(h, "Bearer ")
		if !isBearer {
			return identity{bad: true}
		}
		if a.ownerToken(tok) {
			return identity{who: principal{role: RoleOwner}, ok: true}
		}
		sh := a.shares.lookup(tok)
		if sh == nil {
			why := a.shares.endedWhy(tok)
			return identity{bad: why == "", why: why}
		}
		return identity{who: principal{role: sh.Role, share: sh}, ok: inScope(sh)}
	}
	var id identity
	guess := false
	if c, err := r.Cookie(names.owner); err == nil {
		if a.validSession(c.Value) {
			return identity{who: principal{role: RoleOwner}, ok: true}
		}
		// A cookie whose end is known is kept while it is remembered: the
		// page's next request learns why (tellEnded), which the refused
		// WebSocket upgrade cannot show it.
		if id.why = a.sessionEndedWhy(c.Value); id.why == "" {
			id.stale, guess = append(id.stale, c.Name), true
		}
	}
	for _, c := range r.Cookies() {
		if !strings.HasPrefix(c.Name, names.sharePrefix) {
			continue
		}
		switch sh := a.shares.lookup(c.Value); {
		case sh == nil:
			why := a.shares.endedWhy(c.Value)
			if why == "" {
				id.stale, guess = append(id.stale, c.Name), true
			} else if id.why == "" {
				id.why = why
			}
		case !id.ok && inScope(sh):
			id.who, id.ok = principal{role: sh.Role, share: sh}, true
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
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, terminal string) (who principal, ok, limited bool) {
	if s.auth.disabled {
		return principal{role: RoleOwner}, true, false
	}
	names := s.cookieNames(r)
	if !presentsCredential(r, names) {
		return principal{}, false, false
	}
	addr := s.clientAddr(r)
	lim := s.auth.limiter(addr)
	if s.tooManyFailures(w, lim) {
		return principal{}, false, true
	}
	id := s.identify(r, terminal, names)
	if !id.ok {
		tellEnded(w, id.why)
	}
	for _, name := range id.stale {
		c := s.cookie(r, name, "")
		c.MaxAge = -1
		http.SetCookie(w, c)
	}
	if id.bad {
		recordFailure(lim)
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
	lim := s.auth.limiter(addr)
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
	case body.Token != "" && s.auth.ownerToken(body.Token):
		cookie := s.cookie(r, names.owner, s.auth.newSession())
		cookie.MaxAge = int(sessionLifetime / time.Second)
		http.SetCookie(w, cookie)
		_ = json.NewEncoder(w).Encode(map[string]string{"role": RoleOwner, "next": base + "/"})
		s.log.Info("owner logged in", "remote", addr)
		return
	case body.Share != "":
		if sh := s.auth.shares.lookup(body.Share); sh != nil {
			cookie := s.cookie(r, names.sharePrefix+sh.ID, body.Share)
			if !sh.ExpiresAt.IsZero() {
				cookie.Expires = sh.ExpiresAt
			}
			http.SetCookie(w, cookie)
			_ = json.NewEncoder(w).Encode(map[string]string{"role": sh.Role, "next": base + terminalPath(sh.Terminal)})
			s.log.Info("share link used", "share", sh.ID, "role", sh.Role, "remote", addr)
			return
		}
	}
	if why := s.auth.shares.endedWhy(body.Share); body.Share != "" && why != "" {
		// A link that worked once, opened again: not a guess; say why it ended.
		tellEnded(w, why)
		http.Error(w, endedLinkText[why], http.StatusUnauthorized)
		return
	}
	recordFailure(lim)
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
		s.auth.endSession(c.Value)
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
