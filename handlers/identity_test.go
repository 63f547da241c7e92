package handlers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/poll"
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

// TestSSORoleLoweredClosesConnections: a person removed from the owners
// while connected can do nothing more as an owner from that connection
// (its next owner-only request is refused, or the socket is closed with
// 4004), and once reconnected gets the role they now have: no share link.
// A connection on the owner token is not the roles' to close.
func TestSSORoleLoweredClosesConnections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "roles")
	if err := os.WriteFile(path, []byte("owners: dave@else.org\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSSOServer(t, "127.0.0.1/32", path)
	d := s.mustDial(t, as("dave@else.org"))
	d.Initialize("1.0.0", "web-dave")
	uri, _ := d.CreateTerminal("demo", "web-dave", nil)
	shareLabelled(t, d, uri, "driver", "before") // an owner may
	tokenConn := s.mustDial(t, rawHeader{{idHeader, "dave@else.org"}, {"Authorization", "Bearer " + s.Token}})
	tokenConn.Initialize("1.0.0", "cli-dave")

	if err := os.WriteFile(path, []byte("drivers: dave@else.org\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.roles.Reload(); err != nil { // what SIGHUP does
		t.Fatal(err)
	}
	create := map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": "driver"}
	id, sendErr := d.Send("x-share/create", create)
	if err := d.WaitClosed(); websocket.CloseStatus(err) != 4004 {
		t.Errorf("the demoted owner's connection closed with %v, want 4004", err)
	}
	if sendErr == nil {
		// Answered before the close, if at all: with -32009, never a link.
		for _, f := range d.Frames() {
			var m ahp.Message
			if json.Unmarshal(f, &m) == nil && m.Method == "" && string(m.ID) == id &&
				(m.Error == nil || m.Error.Code != ahp.CodePermissionDenied) {
				t.Errorf("x-share/create after the demotion answered %s, want -32009 or the socket closed", f)
			}
		}
	}
	again := s.mustDial(t, as("dave@else.org"))
	again.Initialize("1.0.0", "web-dave-2")
	again.CallErr("x-share/create", create, ahp.CodePermissionDenied)
	tokenConn.MustCall("x-share/list", map[string]any{"channel": ahp.RootURI}) // the owner token's connection stays
	changed := s.events(t, audit.Filter{Events: []string{audit.RoleChanged}})
	if len(changed) != 1 || changed[0].Who != "dave@else.org" || changed[0].Role != "driver" {
		t.Errorf("role-changed events = %+v, want dave's, now a driver", changed)
	}
}

// TestAuditBudgetOfALink: a thousand connections of one share link, each
// opened and closed, add a bounded number of bytes to the audit trail,
// whose summaries count them exactly; another participant's connections
// and the link's creation are still one line each.
func TestAuditBudgetOfALink(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 300
	}
	s := newSSOServer(t, "127.0.0.1/32", "")
	a := s.mustDial(t, as("alice@corp.com"))
	a.Initialize("1.0.0", "web-alice")
	uri, _ := a.CreateTerminal("flood", "web-alice", nil)
	tok := shareLabelled(t, a, uri, "viewer", "flood")
	wsURL := "ws" + strings.TrimPrefix(s.URL, "http") + "/ws?terminal=flood"
	start := time.Now()
	for range n {
		c, _, err := websocket.Dial(t.Context(), wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}})
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Close(websocket.StatusNormalClosure, "")
	}
	for range 3 {
		b := s.mustDial(t, as("bob@corp.com"))
		_ = b.Conn().Close(websocket.StatusNormalClosure, "")
	}
	metrics := func() string {
		req, _ := http.NewRequest("GET", s.URL+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+s.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	poll.Until(t, 30*time.Second, "every connection but alice's closed", func() bool {
		return strings.Contains(metrics(), "\ntermhost_connections 1\n")
	})
	if err := s.audit.Close(); err != nil { // writes the summaries
		t.Fatal(err)
	}
	// The budget is per window: 6 KiB holds one window's lines and
	// summaries. A loaded machine can take longer than one window for the
	// thousand connections (seen at load 36): each window started may add
	// as much again.
	windows := int(time.Since(start)/audit.Window) + 1
	trail, err := os.ReadFile(s.auditPath)
	if err != nil {
		t.Fatal(err)
	}
	var linkBytes int
	count := map[string]int{}
	for _, line := range bytes.SplitAfter(trail, []byte("\n")) {
		var e audit.Event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		if strings.HasPrefix(e.Who, "share:") {
			linkBytes += len(line)
		}
		count[e.Who+" "+e.Event] += max(e.Count, 1)
	}
	share := "share:" + func() string {
		for k := range count {
			if strings.HasPrefix(k, "share:") {
				return strings.Fields(k)[0][len("share:"):]
			}
		}
		return ""
	}()
	if linkBytes > windows*6<<10 {
		t.Errorf("%d connections of one link wrote %d bytes to the trail over %d audit windows, want at most 6 KiB a window", n, linkBytes, windows)
	}
	if count[share+" connect"] != n || count[share+" disconnect"] != n {
		t.Errorf("the trail counts %d connects and %d disconnects of the link, want %d each", count[share+" connect"], count[share+" disconnect"], n)
	}
	if count["bob@corp.com connect"] != 3 || count["bob@corp.com disconnect"] != 3 || count["alice@corp.com share-created"] != 1 {
		t.Errorf("bob's connections %d/%d and alice's share link %d, want 3, 3 and 1", count["bob@corp.com connect"], count["bob@corp.com disconnect"], count["alice@corp.com share-created"])
	}
	t.Logf("%d connections of one link: %d bytes of its events in the trail (%d in all)", n, linkBytes, len(trail))
}
