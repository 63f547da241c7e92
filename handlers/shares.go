package handlers

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"sort"
	"sync"
	"time"
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
	CreatedAt time.Time `json:"-"`
	ExpiresAt time.Time `json:"-"` // zero = never
	hash      [32]byte
}

func (s *share) expired(now time.Time) bool { return !s.ExpiresAt.IsZero() && now.After(s.ExpiresAt) }

// shares is the in-memory share-link store.
type shares struct {
	mu   sync.Mutex
	byID map[string]*share
	now  func() time.Time
}

func newShares() *shares { return &shares{byID: map[string]*share{}, now: time.Now} }

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
	if role != RoleViewer && role != RoleDriver {
		return nil, "", fmt.Errorf("role must be %q or %q", RoleViewer, RoleDriver)
	}
	if ttl < 0 {
		return nil, "", fmt.Errorf("ttl must not be negative")
	}
	token := randomToken(32)
	now := st.now()
	s := &share{ID: randomToken(9), Terminal: terminal, Role: role, CreatedAt: now, hash: sha256.Sum256([]byte(token))}
	if ttl > 0 {
		s.ExpiresAt = now.Add(ttl)
	}
	st.mu.Lock()
	st.byID[s.ID] = s
	st.mu.Unlock()
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

// valid reports whether the share still exists and has not expired.
func (st *shares) valid(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.byID[id]
	return s != nil && !s.expired(st.now())
}

func (st *shares) revoke(id string) (*share, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.byID[id]
	delete(st.byID, id)
	return s, s != nil
}

// revokeTerminal drops every share of a disposed terminal.
func (st *shares) revokeTerminal(terminal string) []*share {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*share
	for id, s := range st.byID {
		if s.Terminal == terminal {
			out = append(out, s)
			delete(st.byID, id)
		}
	}
	return out
}

// list returns the live shares, of one terminal or all, oldest first.
func (st *shares) list(terminal string) []*share {
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*share
	for id, s := range st.byID {
		if s.expired(now) {
			delete(st.byID, id)
			continue
		}
		if terminal == "" || s.Terminal == terminal {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}
