package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/netip"
	"time"

	"golang.org/x/time/rate"

	"github.com/termhost/termhost/internal/lockrank"
)

// SessionLifetime is how long an owner session lasts.
const SessionLifetime = 30 * 24 * time.Hour

// Failed credentials per client address: a burst of FailureBurst, then one
// every FailureEvery. Failures past the burst go into debt up to another
// burst, so a parallel volley is paid for without locking an address out
// for hours.
const (
	FailureBurst = 10
	FailureEvery = 6 * time.Second
	maxLimiters  = 10000
)

// Store holds the owner token, owner sessions and the failed-credential limiters.
type Store struct {
	Disabled bool
	token    []byte
	Shares   *Shares
	persist  *persister // nil: nothing survives a restart (no state directory)

	mu       lockrank.Mutex[lockrank.Leaf]
	sessions map[[32]byte]time.Time // sha256(session id) → expiry
	gone     map[[32]byte]goneEntry // sessions ended lately, and why
	limiters map[string]*rate.Limiter
}

func New(token string, disabled bool, c Clock) *Store {
	return &Store{Disabled: disabled, token: []byte(token), Shares: NewShares(c),
		sessions: map[[32]byte]time.Time{}, gone: map[[32]byte]goneEntry{}, limiters: map[string]*rate.Limiter{}}
}

func (a *Store) OwnerToken(tok string) bool {
	return len(a.token) > 0 && subtle.ConstantTimeCompare([]byte(tok), a.token) == 1
}

func (a *Store) NewSession() string {
	id := RandomToken(32)
	a.addSession(sha256.Sum256([]byte(id)), time.Now())
	a.Save()
	return id
}

// addSession records a session hash, dropping the expired ones.
func (a *Store) addSession(h [32]byte, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for old, exp := range a.sessions {
		if now.After(exp) {
			a.endLocked(old, EndedSessionExpired, now)
		}
	}
	a.sessions[h] = now.Add(SessionLifetime)
}

func (a *Store) EndSession(id string) {
	h := sha256.Sum256([]byte(id))
	a.mu.Lock()
	if _, ok := a.sessions[h]; ok {
		a.endLocked(h, EndedSignedOut, time.Now())
	}
	a.mu.Unlock()
	a.Save()
}

// endLocked drops a session and remembers why it ended.
func (a *Store) endLocked(h [32]byte, why string, now time.Time) {
	delete(a.sessions, h)
	rememberGone(a.gone, h, goneEntry{until: now.Add(goneRetention), why: why}, now)
}

// sessionEndedWhy is why the owner session id ended lately, "" when unknown.
func (a *Store) SessionEndedWhy(id string) string {
	h := sha256.Sum256([]byte(id))
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if exp, ok := a.sessions[h]; ok && !now.Before(exp) {
		return EndedSessionExpired
	}
	return goneWhy(a.gone, h, now)
}

func (a *Store) ValidSession(id string) bool {
	h := sha256.Sum256([]byte(id))
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.sessions[h]
	return ok && time.Now().Before(exp)
}

// limiter returns the failed-credential limiter of a client address (an
// IPv6 client's whole /64, which one host usually owns).
func (a *Store) Limiter(addr string) *rate.Limiter {
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
		l = rate.NewLimiter(rate.Every(FailureEvery), FailureBurst)
		a.limiters[key] = l
	}
	return l
}

// pruneLimitersLocked bounds memory under a spray of addresses: limiters
// back at their full burst remember nothing, and only if failures come
// from too many addresses at once is everything forgotten.
func (a *Store) pruneLimitersLocked() {
	for key, l := range a.limiters {
		if l.Tokens() >= FailureBurst {
			delete(a.limiters, key)
		}
	}
	if len(a.limiters) >= maxLimiters {
		clear(a.limiters)
	}
}

// RecordFailure counts one failed credential.
func RecordFailure(lim *rate.Limiter) {
	if lim.Tokens() > -FailureBurst {
		lim.Reserve() // never refused: past the burst it goes into debt
	}
}
