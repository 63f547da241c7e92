package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/termhost/termhost/internal/lockrank"
)

// Roles of a connection.
const (
	RoleOwner  = "owner"
	RoleDriver = "driver" // may type, resize, claim, rename, clear one terminal
	RoleViewer = "viewer" // may only watch one terminal
)

// Share is one share link. Only the hash of its token is kept.
type Share struct {
	ID        string    `json:"id"`
	Terminal  string    `json:"terminal"`
	Role      string    `json:"role"`
	Label     string    `json:"label,omitempty"` // who it is for ("alice"): its name in presence
	CreatedAt time.Time `json:"-"`
	ExpiresAt time.Time `json:"-"` // zero = never
	hash      [32]byte
}

// expired: a link stops working at its expiry instant, not a moment later.
func (s *Share) Expired(now time.Time) bool { return !s.ExpiresAt.IsZero() && !now.Before(s.ExpiresAt) }

// Clock is the time source of share expiry; tests inject a fake one.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

type Timer interface{ Stop() bool }

type WallClock struct{}

func (WallClock) Now() time.Time                            { return time.Now() }
func (WallClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Shares is the in-memory share-link store.
type Shares struct {
	mu      lockrank.Mutex[lockrank.Leaf]
	byID    map[string]*Share
	clock   Clock
	changed chan struct{} // signalled when the earliest expiry may have changed
	// onChange saves the store (auth.save) after a change; nil saves nothing.
	// Called without mu held.
	onChange func()
	// gone holds the token hashes of revoked and expired links for a while:
	// a browser still presenting one is not guessing (see identify).
	gone map[[32]byte]goneEntry
}

func NewShares(c Clock) *Shares {
	if c == nil {
		c = WallClock{}
	}
	return &Shares{byID: map[string]*Share{}, clock: c, changed: make(chan struct{}, 1), gone: map[[32]byte]goneEntry{}}
}

func (st *Shares) Now() time.Time { return st.clock.Now() }

func (st *Shares) saveChange() {
	if st.onChange != nil {
		st.onChange()
	}
}

// Changed is signalled when the earliest expiry may have changed: a link
// was created or revoked, or a wake-up set by WakeAt fired.
func (st *Shares) Changed() <-chan struct{} { return st.changed }

// WakeAt signals Changed at next (on the store's clock).
func (st *Shares) WakeAt(next time.Time) Timer {
	return st.clock.AfterFunc(next.Sub(st.Now()), st.signal)
}

// signal wakes the expiry loop (Server.expireShares) without blocking.
func (st *Shares) signal() {
	select {
	case st.changed <- struct{}{}:
	default:
	}
}

// RandomToken returns n random bytes, base64url encoded.
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // the kernel's CSPRNG does not fail
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Create adds a share and returns it with its secret token (shown once).
func (st *Shares) Create(terminal, role string, ttl time.Duration) (*Share, string, error) {
	return st.CreateLabelled(terminal, role, "", ttl)
}

// MaxLabel bounds a share link's label (a name, shown to everyone on the terminal).
const MaxLabel = 64

// CheckLabel trims a share link's label and refuses one too long or with
// control characters.
func CheckLabel(label string) (string, error) {
	label = strings.TrimSpace(label)
	if utf8.RuneCountInString(label) > MaxLabel || !utf8.ValidString(label) {
		return "", fmt.Errorf("label must be valid text of at most %d characters", MaxLabel)
	}
	if strings.ContainsFunc(label, unicode.IsControl) {
		return "", fmt.Errorf("label must not contain control characters")
	}
	return label, nil
}

// createLabelled is create with a label naming who the link is for.
func (st *Shares) CreateLabelled(terminal, role, label string, ttl time.Duration) (*Share, string, error) {
	label, err := CheckLabel(label)
	if err != nil {
		return nil, "", err
	}
	if role != RoleViewer && role != RoleDriver {
		return nil, "", fmt.Errorf("role must be %q or %q", RoleViewer, RoleDriver)
	}
	if ttl < 0 {
		return nil, "", fmt.Errorf("ttl must not be negative")
	}
	token := RandomToken(32)
	now := st.Now()
	s := &Share{ID: RandomToken(9), Terminal: terminal, Role: role, Label: label, CreatedAt: now, hash: sha256.Sum256([]byte(token))}
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

// Lookup finds the live share whose token is token. Every share's hash is
// compared in constant time, so timing says nothing about near misses.
func (st *Shares) Lookup(token string) *Share {
	if token == "" {
		return nil
	}
	h := sha256.Sum256([]byte(token))
	now := st.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	var found *Share
	for _, s := range st.byID {
		if subtle.ConstantTimeCompare(h[:], s.hash[:]) == 1 && !s.Expired(now) {
			found = s
		}
	}
	return found
}

// DropExpired removes the shares that have expired and returns them with
// the earliest expiry among those left (zero if none expires).
func (st *Shares) DropExpired() (expired []*Share, next time.Time) {
	now := st.Now()
	st.mu.Lock()
	for _, s := range st.byID {
		switch {
		case s.Expired(now):
			expired = append(expired, s)
			st.removeLocked(s, now, EndedExpired)
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
func (st *Shares) removeLocked(s *Share, now time.Time, why string) {
	delete(st.byID, s.ID)
	rememberGone(st.gone, s.hash, goneEntry{until: now.Add(goneRetention), why: why}, now)
}

// wasValid reports whether token belonged to a link revoked or expired
// recently: presenting it again is a stale cookie or bookmark, not a guess.
func (st *Shares) WasValid(token string) bool { return st.EndedWhy(token) != "" }

// endedWhy is why token's link ended lately (an ended* reason), "" when it
// is not known as a link that ended.
func (st *Shares) EndedWhy(token string) string {
	h := sha256.Sum256([]byte(token))
	now := st.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	return goneWhy(st.gone, h, now)
}

// Valid reports whether the share still exists and has not expired.
func (st *Shares) Valid(id string) bool {
	now := st.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.byID[id]
	return s != nil && !s.Expired(now)
}

func (st *Shares) Revoke(id string) (*Share, bool) {
	now := st.Now()
	st.mu.Lock()
	s := st.byID[id]
	if s != nil {
		st.removeLocked(s, now, EndedRevoked)
	}
	st.mu.Unlock()
	if s != nil {
		st.saveChange()
	}
	st.signal()
	return s, s != nil
}

// RevokeTerminal drops every share of a disposed terminal.
func (st *Shares) RevokeTerminal(terminal string) []*Share {
	now := st.Now()
	st.mu.Lock()
	var out []*Share
	for _, s := range st.byID {
		if s.Terminal == terminal {
			out = append(out, s)
			st.removeLocked(s, now, EndedTerminalClosed)
		}
	}
	st.mu.Unlock()
	if len(out) > 0 {
		st.saveChange()
		st.signal()
	}
	return out
}

// List returns the live shares, of one terminal or all, oldest first.
func (st *Shares) List(terminal string) []*Share {
	now := st.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*Share
	for _, s := range st.byID {
		// Expired links are left for dropExpired, which also cuts their connections.
		if !s.Expired(now) && (terminal == "" || s.Terminal == terminal) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}
