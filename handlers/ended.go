package handlers

import (
	"net/http"
	"time"
)

// Why a credential that once worked no longer does. A request that
// presents one gets its 401 with the reason in endedHeader, so that a page
// can tell its user what happened instead of guessing: the front end's
// access.ts has the words for each.
const (
	endedSignedOut      = "signed-out"      // the owner session was signed out
	endedSessionExpired = "session-expired" // the owner session ran out
	endedTokenChanged   = "token-changed"   // a new owner token (--new-token) signed everyone out
	endedRevoked        = "revoked"         // the owner revoked the share link
	endedExpired        = "expired"         // the share link expired
	endedTerminalClosed = "terminal-closed" // the owner closed the link's terminal
	endedRestart        = "restart"         // the link's terminal did not survive a restart
)

// endedLinkText is what the sign-in page says about a share link that
// ended, by reason.
var endedLinkText = map[string]string{
	endedRevoked:        "this share link was revoked: ask the person who shared the terminal for a new link",
	endedExpired:        "this share link has expired: ask the person who shared the terminal for a new link",
	endedTerminalClosed: "the shared terminal was closed by its owner, which ended this link",
	endedRestart:        "termhost restarted and the shared terminal did not survive it, which ended this link: ask for a new one",
	endedTokenChanged:   "the owner signed everyone out (a new owner token), which ended this link: ask for a new one",
}

// endedHeader carries the reason on a 401.
const endedHeader = "Termhost-Ended"

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

// tellEnded says why a refused credential ended, when known.
func tellEnded(w http.ResponseWriter, why string) {
	if why != "" {
		w.Header().Set(endedHeader, why)
	}
}
