package handlers_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/termhost/termhost/internal/ahptest"
)

// TestSSOLookalikeIdentityRefused: an identity with a KELVIN SIGN or a
// fullwidth letter, which lower-casing or a profile's mapping would turn
// into kate@corp.test, gets the "not allowed" page, not kate's role.
func TestSSOLookalikeIdentityRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "roles")
	if err := os.WriteFile(path, []byte("owners: kate@corp.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSSOServer(t, "127.0.0.1/32", path)
	if status, body := s.get(t, "/", as("Kate@corp.test")); status != http.StatusOK || !strings.Contains(body, `"role":"owner"`) {
		t.Fatalf("Kate@corp.test's page = %d, want 200 as owner", status)
	}
	for _, id := range []string{"\u212Aate@corp.test", "\uff4bate@corp.test", "kate@corp.test\u202e"} {
		status, body := s.get(t, "/", as(id))
		if status != http.StatusForbidden || !strings.Contains(body, "Not allowed") || strings.Contains(body, `"role":"owner"`) {
			t.Errorf("GET / as %q = %d, want 403 Not allowed:\n%s", id, status, body)
		}
		if c, status := s.dialAs(t, as(id)); c != nil || status != http.StatusForbidden {
			t.Errorf("WebSocket upgrade as %q = %d, want 403", id, status)
		}
	}
}

// TestNamesCannotPassForOthers: presence shows names without direction or
// control characters, and a display name or share-link label that could
// pass for the one termhost gives the owner says who it really is.
func TestNamesCannotPassForOthers(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	a := s.mustDial(t, rawHeader{{idHeader, "alice@corp.com"}, {"X-Forwarded-User", "Owner"}})
	a.Initialize("1.0.0", "web-alice")
	uri, _ := a.CreateTerminal("names", "web-alice", nil)
	b := s.mustDial(t, rawHeader{{idHeader, "bob@corp.com"}, {"X-Forwarded-User", "Bo\u202eb"}})
	b.Initialize("1.0.0", "web-bob")
	b.Subscribe(uri)
	waitPresence(t, a, uri, []string{"Owner (alice@corp.com)/owner//true", "Bob/driver//false"})

	for i, label := range []string{"\u041ewner", "Ev\u202ee"} {
		tok := shareLabelled(t, a, uri, "viewer", label)
		h := rawHeader{{"Authorization", "Bearer " + tok}}
		c, _, err := ahptest.Dial(t, "ws"+strings.TrimPrefix(s.URL, "http")+"/ws?terminal=names", ahptest.Options{Header: h.header(), Versions: s.versions})
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("link-%d", i)
		c.Initialize("1.0.0", id)
		c.Subscribe(uri)
	}
	waitPresence(t, a, uri, []string{"Owner (alice@corp.com)/owner//true", "Bob/driver//false", "Eve/viewer//false", "\u041ewner (viewer link)/viewer//false"})
}
