package auth

import (
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestStateFileFormat pins the sign-in file's keys: a file written by an
// earlier termhost must restore (a renamed key would sign everyone out at
// the upgrade), and a file written now must read the same way.
func TestStateFileFormat(t *testing.T) {
	const token = "owner-token-for-the-format-test"
	dir := t.TempDir()
	salt := digest{1, 2, 3}
	mac := ownerMAC(salt, []byte(token))
	session := sha256.Sum256([]byte("a-session-id"))
	link := sha256.Sum256([]byte("a-share-token"))
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	doc := map[string]any{
		"version":  1,
		"owner":    map[string]any{"salt": salt, "mac": mac},
		"sessions": []any{map[string]any{"hash": digest(session), "expires": later}},
		"shares": []any{map[string]any{"id": "sh1", "terminal": "ahp-terminal:/t", "role": RoleDriver, "label": "alice",
			"hash": digest(link), "createdAt": time.Now().UTC().Format(time.RFC3339)}},
		"gone": []any{},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, StateFileName), b, 0o600); err != nil {
		t.Fatal(err)
	}

	a := New(token, false, nil)
	if err := a.Restore(dir, func(string) bool { return true }, quietLog); err != nil {
		t.Fatal(err)
	}
	if !a.ValidSession("a-session-id") {
		t.Error("the saved owner session did not survive the restore")
	}
	sh := a.Shares.Lookup("a-share-token")
	if sh == nil || sh.ID != "sh1" || sh.Role != RoleDriver || sh.Label != "alice" {
		t.Fatalf("the saved share link restored as %+v", sh)
	}

	// What is written now has the same keys.
	var written map[string]json.RawMessage
	b, err = os.ReadFile(filepath.Join(dir, StateFileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &written); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"version", "owner", "sessions", "shares", "gone"} {
		if _, ok := written[key]; !ok {
			t.Errorf("the state file written now lacks %q: %s", key, b)
		}
	}
}

// TestShareLinkRules: a share link is a viewer or a driver, never the
// owner; its label is short text; it stops at its expiry instant; a
// revoked one is remembered as revoked, not taken for a guess.
func TestShareLinkRules(t *testing.T) {
	st := NewShares(nil)
	if _, _, err := st.Create("ahp-terminal:/t", RoleOwner, 0); err == nil {
		t.Error("a share link with the owner role was created")
	}
	if _, _, err := st.CreateLabelled("ahp-terminal:/t", RoleViewer, "bad\x1blabel", 0); err == nil {
		t.Error("a label with a control character was accepted")
	}
	if _, _, err := st.Create("ahp-terminal:/t", RoleViewer, -time.Second); err == nil {
		t.Error("a negative lifetime was accepted")
	}
	sh, tok, err := st.CreateLabelled("ahp-terminal:/t", RoleViewer, "  bob  ", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if sh.Label != "bob" || st.Lookup(tok) != sh || st.Lookup("") != nil || st.Lookup(tok+"x") != nil {
		t.Fatalf("lookup of a fresh link: label %q, found %v", sh.Label, st.Lookup(tok))
	}
	if !sh.Expired(sh.ExpiresAt) || sh.Expired(sh.ExpiresAt.Add(-time.Nanosecond)) {
		t.Error("a link must stop working at its expiry instant, not before")
	}
	if _, ok := st.Revoke(sh.ID); !ok {
		t.Fatal("revoke of a live link failed")
	}
	if st.Lookup(tok) != nil || st.EndedWhy(tok) != EndedRevoked || !st.WasValid(tok) {
		t.Errorf("after revoke: lookup %v, ended %q", st.Lookup(tok), st.EndedWhy(tok))
	}
	if st.EndedWhy("never-a-token") != "" {
		t.Error("an unknown token is said to have ended")
	}
}
