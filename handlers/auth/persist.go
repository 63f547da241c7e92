package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/lockrank"
	"github.com/termhost/termhost/internal/statefile"
)

// StateFileName is the sign-in document in the state directory.
const StateFileName = "signins.json"

// savedSignins is what survives a restart: owner sessions and share links,
// only as hashes of their secrets, and a salted MAC of the owner token that
// tells whether the sessions were opened with the token in use now.
type savedSignins struct {
	Version  int            `json:"version"`
	Owner    savedOwner     `json:"owner"`
	Sessions []savedSession `json:"sessions"`
	Shares   []savedShare   `json:"shares"`
	Gone     []savedGone    `json:"gone"` // revoked or expired lately (see shares.gone)
	// Owner sessions ended lately (see auth.gone).
	GoneSessions []savedGone `json:"goneSessions,omitempty"`
}

const savedVersion = 1

type savedOwner struct {
	Salt digest `json:"salt"`
	MAC  digest `json:"mac"` // HMAC-SHA256(salt, owner token)
}

type savedSession struct {
	Hash    digest    `json:"hash"`
	Expires time.Time `json:"expires"`
}

type savedShare struct {
	ID        string    `json:"id"`
	Terminal  string    `json:"terminal"`
	Role      string    `json:"role"`
	Label     string    `json:"label,omitempty"`
	Hash      digest    `json:"hash"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

type savedGone struct {
	Hash  digest    `json:"hash"`
	Until time.Time `json:"until"`
	Why   string    `json:"why,omitempty"` // ended*; older files have none
}

// digest is a SHA-256 sized value, written in hex.
type digest [32]byte

func (d digest) MarshalText() ([]byte, error) { return []byte(hex.EncodeToString(d[:])), nil }

func (d *digest) UnmarshalText(b []byte) error {
	n, err := hex.Decode(d[:], b)
	if err == nil && n != len(d) {
		err = fmt.Errorf("digest of %d bytes, want %d", n, len(d))
	}
	return err
}

// persister writes the sign-ins after every change. Writes are synchronous
// (a sign-in is rare, and a reply must not promise what a crash would lose)
// and serialized, so the file never goes back to an older state.
type persister struct {
	mu    lockrank.Mutex[lockrank.SignIns] // held across snapshot and write
	file  *statefile.File
	owner savedOwner
	log   *slog.Logger
}

func ownerMAC(salt digest, token []byte) digest {
	m := hmac.New(sha256.New, salt[:])
	m.Write(token)
	return digest(m.Sum(nil))
}

// Restore loads the sign-ins saved in dir and keeps saving them there. Owner
// sessions are dropped when the owner token changed; share links when they
// expired or their terminal is gone (exists says which terminals live). A
// corrupt file is set aside and the server starts with no sign-ins.
func (a *Store) Restore(dir string, exists func(terminal string) bool, log *slog.Logger) error {
	f, err := statefile.Open(dir, StateFileName)
	if err != nil {
		return err
	}
	if f.Loosened != 0 {
		log.Warn("the state directory was open to other users: made it private (0700)", "path", dir, "was", f.Loosened.String())
	}
	var saved savedSignins
	found, err := f.Load(&saved)
	if errors.Is(err, statefile.ErrCorrupt) {
		aside, aerr := f.SetAside("corrupt")
		log.Error("the sign-in state file is corrupt: starting with no sign-ins (owner sessions and share links must sign in again)",
			"err", err, "setAside", aside, "setAsideErr", aerr)
		saved, found = savedSignins{}, false
	} else if err != nil {
		return err
	}
	p := &persister{file: f, log: log}
	_, _ = rand.Read(p.owner.Salt[:]) // never fails (crypto/rand)
	if found && saved.Version == savedVersion {
		p.owner.Salt = saved.Owner.Salt
		mac := ownerMAC(saved.Owner.Salt, a.token)
		sameToken := hmac.Equal(mac[:], saved.Owner.MAC[:])
		a.loadSessions(saved.Sessions, saved.GoneSessions, sameToken)
		if !sameToken && len(saved.Sessions)+len(saved.Shares) > 0 {
			log.Info("the owner token changed: owner sessions and share links from before are signed out",
				"sessions", len(saved.Sessions), "shares", len(saved.Shares))
		}
		a.Shares.load(saved.Shares, saved.Gone, exists, sameToken, log)
	} else if found {
		// Perhaps written by a newer termhost: keep it for a person (or a
		// downgrade undone) to read, never overwrite it.
		aside, aerr := f.SetAside(fmt.Sprintf("v%d", saved.Version))
		log.Warn("the sign-in state file has an unknown version: set aside, starting with no sign-ins",
			"path", f.Path(), "version", saved.Version, "setAside", aside, "setAsideErr", aerr)
	}
	p.owner.MAC = ownerMAC(p.owner.Salt, a.token)
	a.persist = p
	a.Shares.onChange = a.Save
	if err := a.saveErr(); err != nil {
		return fmt.Errorf("state directory %s: %w", dir, err)
	}
	log.Info("sign-ins restored", "path", f.Path(), "sessions", len(a.sessions), "shares", len(a.Shares.byID))
	return nil
}

// loadSessions restores the owner sessions when the token is the same;
// after a token change they are remembered as ended by it.
func (a *Store) loadSessions(list []savedSession, gone []savedGone, sameToken bool) {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, g := range gone {
		rememberGone(a.gone, [32]byte(g.Hash), goneEntry{until: g.Until, why: g.Why}, now)
	}
	for _, s := range list {
		switch {
		case !now.Before(s.Expires):
		case sameToken:
			a.sessions[[32]byte(s.Hash)] = s.Expires
		default:
			a.endLocked([32]byte(s.Hash), EndedTokenChanged, now)
		}
	}
}

// load adds the saved share links that still hold: not expired, their
// terminal alive, the owner token the same. The others go to gone, so that
// a browser presenting one again is not taken for a guesser, and is told
// why its link ended.
func (st *Shares) load(list []savedShare, gone []savedGone, exists func(string) bool, sameToken bool, log *slog.Logger) {
	now := st.Now()
	alive := make(map[string]bool, len(list)) // asked before locking: st.mu is a leaf
	for _, s := range list {
		alive[s.Terminal] = exists(s.Terminal)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, g := range gone {
		if now.Before(g.Until) {
			why := g.Why
			if why == "" {
				why = EndedRevoked // a file from before reasons were kept
			}
			rememberGone(st.gone, [32]byte(g.Hash), goneEntry{until: g.Until, why: why}, now)
		}
	}
	for _, s := range list {
		if s.Role != RoleViewer && s.Role != RoleDriver {
			// A share link is never the owner, whatever the file says.
			log.Warn("a saved share link has an invalid role: dropped", "share", s.ID, "role", ahp.Clip(s.Role))
			continue
		}
		sh := &Share{ID: s.ID, Terminal: s.Terminal, Role: s.Role, Label: s.Label, CreatedAt: s.CreatedAt, ExpiresAt: s.ExpiresAt, hash: [32]byte(s.Hash)}
		st.byID[sh.ID] = sh
		switch {
		case sh.Expired(now):
			st.removeLocked(sh, now, EndedExpired)
		case !sameToken:
			st.removeLocked(sh, now, EndedTokenChanged)
		case !alive[sh.Terminal]:
			st.removeLocked(sh, now, EndedRestart)
		}
	}
}

// Save writes the sign-ins, if a state directory is set; a failure is
// logged: the server goes on, only a restart would lose the change.
func (a *Store) Save() {
	if err := a.saveErr(); err != nil {
		a.persist.log.Warn("could not save sign-ins: changes since the last save would not survive a restart", "err", err)
	}
}

func (a *Store) saveErr() error {
	p := a.persist
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	doc := savedSignins{Version: savedVersion, Owner: p.owner}
	doc.Sessions, doc.GoneSessions = a.savedSessions()
	doc.Shares, doc.Gone = a.Shares.saved()
	return p.file.Save(doc)
}

func (a *Store) savedSessions() ([]savedSession, []savedGone) {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	out, gone := []savedSession{}, []savedGone{}
	for h, exp := range a.sessions {
		if now.Before(exp) {
			out = append(out, savedSession{Hash: digest(h), Expires: exp})
		}
	}
	for h, g := range a.gone {
		if now.Before(g.until) {
			gone = append(gone, savedGone{Hash: digest(h), Until: g.until, Why: g.why})
		}
	}
	return out, gone
}

func (st *Shares) saved() ([]savedShare, []savedGone) {
	now := st.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	Shares, gone := []savedShare{}, []savedGone{}
	for _, s := range st.byID {
		Shares = append(Shares, savedShare{ID: s.ID, Terminal: s.Terminal, Role: s.Role, Label: s.Label, Hash: digest(s.hash),
			CreatedAt: s.CreatedAt, ExpiresAt: s.ExpiresAt})
	}
	for h, g := range st.gone {
		if now.Before(g.until) {
			gone = append(gone, savedGone{Hash: digest(h), Until: g.until, Why: g.why})
		}
	}
	return Shares, gone
}
