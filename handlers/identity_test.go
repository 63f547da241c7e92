package handlers_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
