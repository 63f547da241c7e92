package auth

import (
	"net/http"
	"time"
)

// Why a credential that once worked no longer does. A request that
// presents one gets its 401 with the reason in EndedHeader, so that a page
// can tell its user what happened instead of guessing: the front end's
// access.ts has the words for each.
const (
	EndedSignedOut      = "signed-out"      // the owner session was signed out
	EndedSessionExpired = "session-expired" // the owner session ran out
	EndedTokenChanged   = "token-changed"   // a new owner token (--new-token) signed everyone out
	EndedRevoked        = "revoked"         // the owner revoked the share link
	EndedExpired        = "expired"         // the share link expired
	EndedTerminalClosed = "terminal-closed" // the owner closed the link's terminal
	EndedRestart        = "restart"         // the link's terminal did not survive a restart
)

// EndedLinkText is what the sign-in page says about a share link that
// ended, by reason.
var EndedLinkText = map[string]string{
	EndedRevoked:        "this share link was revoked: ask the person who shared the terminal for a new link",
	EndedExpired:        "this share link has expired: ask the person who shared the terminal for a new link",
	EndedTerminalClosed: "the shared terminal was closed by its owner, which ended this link",
	EndedRestart:        "termhost restarted and the shared terminal did not survive it, which ended this link: ask for a new one",
	EndedTokenChanged:   "the owner signed everyone out (a new owner token), which ended this link: ask for a new one",
}

// EndedHeader carries the reason on a 401.
const EndedHeader = "Termhost-Ended"

// goneEntry remembers an ended credential's hash for a while: presenting
// it again is a stale cookie or bookmark, not a guess, and its holder is
// told why it ended.
type goneEntry struct {
	until time.Time
	why   string
}

// Retention and bound of the ended credentials remembered.
const (
	goneRetention = 24 * time.Hour
	maxGone       = 10000
)

// rememberGone adds an ended credential to m, bounded: when full, the
// entries past their retention go, then everything.
func rememberGone(m map[[32]byte]goneEntry, h [32]byte, e goneEntry, now time.Time) {
	if len(m) >= maxGone {
		for k, old := range m {
			if now.After(old.until) {
				delete(m, k)
			}
		}
		if len(m) >= maxGone {
			clear(m)
		}
	}
	m[h] = e
}

// goneWhy is why the credential of hash h ended, "" when m does not know it.
func goneWhy(m map[[32]byte]goneEntry, h [32]byte, now time.Time) string {
	if e, ok := m[h]; ok && !now.After(e.until) {
		return e.why
	}
	return ""
}

// TellEnded says why a refused credential ended, when known.
func TellEnded(w http.ResponseWriter, why string) {
	if why != "" {
		w.Header().Set(EndedHeader, why)
	}
}
