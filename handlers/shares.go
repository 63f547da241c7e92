package handlers

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Roles of a connection.
const (
	RoleOwner  = "owner"
	RoleDriver = "driver" // may type, resize, claim, rename, clear one terminal
	RoleViewer = "viewer" // may only watch one terminal
)

// share is one share link. Only the hash of its token is kept.
type share struct {
	ID        string    `json:"id"`
	Terminal  string    `json:"terminal"`
	Role      string    `json:"role"`
	Label     string    `json:"label,omitempty"` // who it is for ("alice"): its name in presence
	CreatedAt time.Time `json:"-"`
	ExpiresAt time.Time `json:"-"` // zero = never
	hash      [32]byte
}

// expired: a link stops working at its expiry instant, not a moment later.
func (s *share) expired(now time.Time) bool { return !s.ExpiresAt.IsZero() && !now.Before(s.ExpiresAt) }

// clock is the time source of share expiry; tests inject a fake one.
type clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) timer
}

type timer interface{ Stop() bool }

type wallClock struct{}

func (wallClock) Now() time.Time                            { return time.Now() }
func (wallClock) AfterFunc(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }

// shares is the in-memory share-link store.
type shares struct {
	mu      sync.Mutex
	byID    map[string]*share
	clock   clock
	changed chan struct{} // signalled when the earliest expiry may have changed
	// onChange saves the store (auth.save) after a change; nil saves nothing.
	// Called without mu held.
	onChange func()
	// gone holds the token hashes of revoked and expired links for a while:
	// a browser still presenting one is not guessing (see identify).
	gone map[[32]byte]goneEntry
}

func newShares(c clock) *shares {
	if c == nil {
		c = wallClock{}
	}
	return &shares{byID: map[string]*share{}, clock: c, changed: make(chan struct{}, 1), gone: map[[32]byte]goneEntry{}}
}

func (st *shares) now() time.Time { return st.clock.Now() }

func (st *shares) saveChange() {
	if st.onChange != nil {
		st.onChange()
	}
}

// signal wakes the expiry loop (Server.expireShares) without blocking.
func (st *shares) signal() {
	select {
	case st.changed <- struct{}{}:
	default:
	}
}

// randomToken returns n random bytes, base64url encoded.
func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // the kernel's CSPRNG does not fail
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// create adds a share and returns it with its secret token (shown once).
func (st *shares) create(terminal, role string, ttl time.Duration) (*share, string, error) {
	return st.createLabelled(terminal, role, "", ttl)
}

// maxLabel bounds a share link's label (a name, shown to everyone on the terminal).
const maxLabel = 64

// checkLabel trims a share link's label and refuses one too long or with
// control characters.
func checkLabel(label string) (string, error) {
	label = strings.TrimSpace(label)
	if utf8.RuneCountInString(label) > maxLabel || !utf8.ValidString(label) {
		return "", fmt.Errorf("label must be valid text of at most %d characters", maxLabel)
	}
	if strings.ContainsFunc(label, unicode.IsControl) {
		return "", fmt.Errorf("label must not contain control characters")
	}
	return label, nil
}

// createLabelled is create with a label naming who the link is for.
func (st *shares) createLabelled(terminal, role, label string, ttl time.Duration) (*share, string, error) {
	label, err := checkLabel(label)
	if err != nil {
		return nil, "", err
	}
	if role != RoleViewer && role != RoleDriver {
		return nil, "", fmt.Errorf("role must be %q or %q", RoleViewer, RoleDriver)
	}
	if ttl < 0 {
		return nil, "", fmt.Errorf("ttl must not be negative")
	}
	token := randomToken(32)
	now := st.now()
	s := &share{ID: randomToken(9), Terminal: terminal, Role: role, Label: label, CreatedAt: now, hash: sha256.Sum256([]byte(token))}
	if ttl > 0 {
		s.ExpiresAt = now.Add(ttl)
	}
	st.mu.Lock()
	st.byID[s.ID] = s
	st.mu.Unlock()
	st.saveChange()
	st.signal()
	return s, token, nil
}

// lookup finds the live share whose token is token. Every share's hash is
// compared in constant time, so timing says nothing about near misses.
func (st *shares) lookup(token string) *share {
	if token == "" {
		return nil
	}
	h := sha256.Sum256([]byte(token))
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	var found *share
	for _, s := range st.byID {
		if subtle.ConstantTimeCompare(h[:], s.hash[:]) == 1 && !s.expired(now) {
			found = s
		}
	}
	return found
}

// dropExpired removes the shares that have expired and returns them with
// the earliest expiry among those left (zero if none expires).
func (st *shares) dropExpired() (expired []*share, next time.Time) {
	now := st.now()
	st.mu.Lock()
	for _, s := range st.byID {
		switch {
		case s.expired(now):
			expired = append(expired, s)
			st.removeLocked(s, now, endedExpired)
		case !s.ExpiresAt.IsZero() && (next.IsZero() || s.ExpiresAt.Before(next)):
			next = s.ExpiresAt
		}
	}
	st.mu.Unlock()
	if len(expired) > 0 {
		st.saveChange()
	}
	return expired, next
}

// removeLocked drops a share and remembers its token hash as gone, and why.
func (st *shares) removeLocked(s *share, now time.Time, why string) {
	delete(st.byID, s.ID)
	rememberGone(st.gone, s.hash, goneEntry{until: now.Add(goneRetention), why: why}, now)
}

// wasValid reports whether token belonged to a link revoked or expired
// recently: presenting it again is a stale cookie or bookmark, not a guess.
func (st *shares) wasValid(token string) bool { return st.endedWhy(token) != "" }

// endedWhy is why token's link ended lately (an ended* reason), "" when it
// is not known as a link that ended.
func (st *shares) endedWhy(token string) string {
	h := sha256.Sum256([]byte(token))
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	return goneWhy(st.gone, h, now)
}

// valid reports whether the share still exists and has not expired.
func (st *shares) valid(id string) bool {
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.byID[id]
	return s != nil && !s.expired(now)
}

func (st *shares) revoke(id string) (*share, bool) {
	now := st.now()
	st.mu.Lock()
	s := st.byID[id]
	if s != nil {
		st.removeLocked(s, now, endedRevoked)
	}
	st.mu.Unlock()
	if s != nil {
		st.saveChange()
	}
	st.signal()
	return s, s != nil
}

// revokeTerminal drops every share of a disposed terminal.
func (st *shares) revokeTerminal(terminal string) []*share {
	now := st.now()
	st.mu.Lock()
	var out []*share
	for _, s := range st.byID {
		if s.Terminal == terminal {
			out = append(out, s)
			st.removeLocked(s, now, endedTerminalClosed)
		}
	}
	st.mu.Unlock()
	if len(out) > 0 {
		st.saveChange()
		st.signal()
	}
	return out
}

// list returns the live shares, of one terminal or all, oldest first.
func (st *shares) list(terminal string) []*share {
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*share
	for _, s := range st.byID {
		// Expired links are left for dropExpired, which also cuts their connections.
		if !s.expired(now) && (terminal == "" || s.Terminal == terminal) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}
