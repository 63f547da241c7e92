package handlers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers/sso"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

const idHeader = "X-Forwarded-Email"

// ssoServer is a server under --auth proxy whose trusted proxy is trusted
// (the test itself, on 127.0.0.1, or a far network so that the test is an
// untrusted peer), with roles and an audit log.
type ssoServer struct {
	*testServer
	auditPath string
	audit     *audit.Log
	roles     *sso.Directory
}

func newSSOServer(t *testing.T, trusted string, rolesFile string, opts ...serverOption) *ssoServer {
	t.Helper()
	dir := t.TempDir()
	s := &ssoServer{auditPath: filepath.Join(dir, "audit.jsonl")}
	var err error
	if s.audit, err = audit.Open(s.auditPath, testserver.Logger(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.audit.Close() })
	base := sso.Roles{Owners: []string{"alice@corp.com"}, Drivers: []string{"*@corp.com"}, Viewers: []string{"carol@partner.org"}}
	if s.roles, err = sso.NewDirectory(base, rolesFile, nil); err != nil {
		t.Fatal(err)
	}
	s.testServer = newServer(t, append(opts, testserver.Handlers(func(c *handlersConfig) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix(trusted)} // serve's --trusted-proxy sets both
		c.SSO = &sso.Proxy{Header: idHeader, NameHeader: "X-Forwarded-User", Trusted: c.TrustedProxies}
		c.Roles, c.Audit = s.roles, s.audit
	}))...)
	return s
}

// rawHeader is a header with its names as given (not canonicalized), so
// a test can send x_forwarded_email or two spellings of one name.
type rawHeader [][2]string

func (h rawHeader) header() http.Header {
	out := http.Header{}
	for _, kv := range h {
		out[kv[0]] = append(out[kv[0]], kv[1])
	}
	return out
}

func as(id string) rawHeader { return rawHeader{{idHeader, id}} }

func (s *ssoServer) get(t *testing.T, path string, h rawHeader) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.header()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// dialAs opens the WebSocket with headers h; status is "ok" or the refusal's code.
func (s *ssoServer) dialAs(t *testing.T, h rawHeader) (*client, int) {
	t.Helper()
	c, resp, err := ahptest.Dial(t, "ws"+strings.TrimPrefix(s.URL, "http")+"/ws", ahptest.Options{Header: h.header(), Versions: s.versions})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		return nil, resp.StatusCode
	}
	return c, http.StatusSwitchingProtocols
}

func (s *ssoServer) mustDial(t *testing.T, h rawHeader) *client {
	t.Helper()
	c, status := s.dialAs(t, h)
	if c == nil {
		t.Fatalf("dial as %v: status %d, want an upgrade", h, status)
	}
	return c
}

// events reads the audit trail after a Sync.
func (s *ssoServer) events(t *testing.T, f audit.Filter) []audit.Event {
	t.Helper()
	s.audit.Sync()
	b, err := os.ReadFile(s.auditPath)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Event
	if err := audit.Read(bytes.NewReader(b), f, func(e audit.Event) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSSOSpoofingRefused: every way of passing an identity the proxy did
// not vouch for is refused with 401, on the page and on the WebSocket
// upgrade alike, and logged in the audit trail.
func TestSSOSpoofingRefused(t *testing.T) {
	const trusted, untrusted = "127.0.0.1/32", "10.0.0.0/8"
	cases := []struct {
		name    string
		trusted string
		h       rawHeader
	}{
		{"header from a peer that is not a trusted proxy", untrusted, as("alice@corp.com")},
		{"no identity header", trusted, nil},
		{"two values", trusted, rawHeader{{idHeader, "bob@corp.com"}, {idHeader, "alice@corp.com"}}},
		{"two spellings (case)", trusted, rawHeader{{idHeader, "bob@corp.com"}, {"x-forwarded-email", "alice@corp.com"}}},
		{"lower-case spelling from a peer that is not a trusted proxy", untrusted, rawHeader{{"x-forwarded-email", "alice@corp.com"}}},
		{"underscores for dashes", trusted, rawHeader{{"X_Forwarded_Email", "alice@corp.com"}}},
		{"underscores beside the real one", trusted, rawHeader{{idHeader, "bob@corp.com"}, {"X_FORWARDED_EMAIL", "alice@corp.com"}}},
		{"a list in one value", trusted, as("bob@corp.com, alice@corp.com")},
		{"empty value", trusted, as("")},
		{"spoofed header beside the owner token", untrusted, rawHeader{{idHeader, "alice@corp.com"}, {"Authorization", "Bearer " + ownerToken}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSSOServer(t, tc.trusted, "") // its own failed-credential limiter
			if status, body := s.get(t, "/", tc.h); status != http.StatusUnauthorized {
				t.Errorf("GET / with %v = %d, want 401\n%s", tc.h, status, body)
			}
			if status, _ := s.get(t, "/metrics", tc.h); status != http.StatusUnauthorized {
				t.Errorf("GET /metrics with %v = %d, want 401", tc.h, status)
			}
			if c, status := s.dialAs(t, tc.h); c != nil || status != http.StatusUnauthorized {
				t.Errorf("WebSocket upgrade with %v = %d, want 401", tc.h, status)
			}
			if tc.h == nil {
				return
			}
			if got := s.events(t, audit.Filter{Events: []string{audit.SignInRefused}}); len(got) == 0 {
				t.Error("the audit trail has no refused sign-in")
			}
		})
	}
}

// TestSSOHeaderNamesIgnoreCase: header names are case-insensitive in HTTP,
// so a trusted proxy that sends x-forwarded-email (once) is believed.
func TestSSOHeaderNamesIgnoreCase(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	if status, body := s.get(t, "/", rawHeader{{"x-forwarded-email", "alice@corp.com"}}); status != http.StatusOK || !strings.Contains(body, `"role":"owner"`) {
		t.Errorf("GET / with a lower-case header name from the trusted proxy = %d, want 200 as the owner", status)
	}
}

// TestSSORefusalsLimited: a peer that keeps sending identities it may not
// is slowed down (429) like one guessing tokens, while people coming
// through the trusted proxy (their own X-Forwarded-For) are not.
func TestSSORefusalsLimited(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	bad := rawHeader{{idHeader, "a@corp.com"}, {idHeader, "b@corp.com"}, {"X-Forwarded-For", "192.0.2.66"}}
	limited := false
	for range 30 {
		status, _ := s.get(t, "/", bad)
		if status == http.StatusTooManyRequests {
			limited = true
			break
		}
		if status != http.StatusUnauthorized {
			t.Fatalf("GET / with two identities = %d, want 401 or 429", status)
		}
	}
	if !limited {
		t.Error("30 refused identities from one client were never limited (429)")
	}
	good := rawHeader{{idHeader, "alice@corp.com"}, {"X-Forwarded-For", "192.0.2.7"}}
	if status, _ := s.get(t, "/", good); status != http.StatusOK {
		t.Errorf("another client behind the same proxy = %d, want 200", status)
	}
}

// TestSSOOwnerTokenBreakGlass: the owner token still works for the CLI (a
// bearer token, no identity header, from any peer) beside --auth proxy.
func TestSSOOwnerTokenBreakGlass(t *testing.T) {
	s := newSSOServer(t, "10.0.0.0/8", "")
	c := s.mustDial(t, rawHeader{{"Authorization", "Bearer " + ownerToken}})
	c.Initialize("1.0.0", "cli-1")
	c.CreateTerminal("glass", "cli-1", nil)
	if status, _ := s.get(t, "/metrics", rawHeader{{"Authorization", "Bearer " + ownerToken}}); status != http.StatusOK {
		t.Errorf("GET /metrics with the owner token = %d, want 200", status)
	}
}

// TestSSORolesAndNames: each person gets the role their identity matches
// on every terminal, is shown by name in presence (a person's two tabs
// once), a viewer cannot type, and someone in no list is told whom to ask.
func TestSSORolesAndNames(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	alice := rawHeader{{idHeader, "Alice@corp.com"}, {"X-Forwarded-User", "Alice Smith"}}
	if status, body := s.get(t, "/", alice); status != http.StatusOK || !strings.Contains(body, `"role":"owner"`) {
		t.Fatalf("alice's workbench = %d, want 200 with role owner:\n%s", status, body)
	}
	a1 := s.mustDial(t, alice)
	a1.Initialize("1.0.0", "web-alice-1")
	uri, _ := a1.CreateTerminal("build", "web-alice-1", map[string]any{"name": "build"})
	a2 := s.mustDial(t, alice) // a second tab
	a2.Initialize("1.0.0", "web-alice-2")
	a2.Subscribe(uri)

	bob := s.mustDial(t, as("bob@corp.com"))
	bob.Initialize("1.0.0", "web-bob")
	bob.Subscribe(uri)
	carol := s.mustDial(t, as("carol@partner.org"))
	carol.Initialize("1.0.0", "web-carol")
	carol.Subscribe(uri)
	want := []string{"Alice Smith/owner//true", "bob@corp.com/driver//false", "carol@partner.org/viewer//false"}
	members := waitPresence(t, bob, uri, want)
	for _, m := range members {
		if !m.Person || strings.Contains(m.ID, "web-") {
			t.Errorf("member %+v: want person set and an opaque id", m)
		}
	}

	// The viewer sees the terminal but cannot type, take control or create.
	seq := carol.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo carol\r"})
	rej := carol.WaitAction("rejection", func(e ahp.Envelope) bool {
		return e.RejectionReason != "" && e.Origin != nil && e.Origin.ClientSeq == seq
	})
	if !strings.HasPrefix(rej.RejectionReason, "view only") {
		t.Errorf("viewer's input: rejection %q", rej.RejectionReason)
	}
	carol.CallErr("x-termhost/requestControl", map[string]any{"channel": ahp.RootURI, "terminal": uri}, ahp.CodePermissionDenied)
	carol.CallErr("createTerminal", map[string]any{"channel": "ahp-terminal:/c", "claim": map[string]any{"kind": "client", "clientId": "web-carol"}}, ahp.CodePermissionDenied)
	// The driver can create nothing either, but asks for control and is named.
	bob.CallErr("createTerminal", map[string]any{"channel": "ahp-terminal:/b", "claim": map[string]any{"kind": "client", "clientId": "web-bob"}}, ahp.CodePermissionDenied)

	// Alice (owner) types; her input is in the trail by size only.
	a1.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo s3cr3t\r"})
	a1.WaitOutput(uri, "s3cr3t")
	// The output can come back before the input's line is in the file.
	var inputs []audit.Event
	poll.Until(t, poll.Short, "alice's input in the audit trail", func() bool {
		inputs = s.events(t, audit.Filter{Events: []string{audit.Input}, Terminal: "build"})
		return len(inputs) > 0
	})
	if len(inputs) != 1 || inputs[0].Who != "alice@corp.com" || inputs[0].Name != "Alice Smith" || inputs[0].Bytes != len("echo s3cr3t\r") || inputs[0].Title != "build" {
		t.Errorf("input events = %+v, want alice's 12 bytes into build", inputs)
	}
	if b, _ := os.ReadFile(s.auditPath); bytes.Contains(b, []byte("s3cr3t")) {
		t.Error("the audit trail holds the typed bytes")
	}
	for _, kind := range []string{audit.SignIn, audit.Connect, audit.TerminalCreated} {
		if len(s.events(t, audit.Filter{Events: []string{kind}, Who: "alice@corp.com"})) == 0 {
			t.Errorf("no %s event of alice in the trail", kind)
		}
	}

	// Someone the proxy signed in but in no list: a page naming whom to ask.
	status, body := s.get(t, "/", as("mallory@elsewhere.net"))
	if status != http.StatusForbidden || !strings.Contains(body, "Not allowed") || !strings.Contains(body, "mallory@elsewhere.net") || !strings.Contains(body, "alice@corp.com") {
		t.Errorf("GET / as mallory = %d, want 403 naming her and alice:\n%s", status, body)
	}
	if c, status := s.dialAs(t, as("mallory@elsewhere.net")); c != nil || status != http.StatusForbidden {
		t.Errorf("WebSocket upgrade as mallory = %d, want 403", status)
	}
}

// TestSSORolesFileReload: a roles file edited while people are connected
// gives new requests the new roles without dropping any connection.
func TestSSORolesFileReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "roles")
	if err := os.WriteFile(path, []byte("viewers: dave@else.org\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSSOServer(t, "127.0.0.1/32", path)
	dave := s.mustDial(t, as("dave@else.org"))
	dave.Initialize("1.0.0", "web-dave")
	if status, body := s.get(t, "/", as("dave@else.org")); !strings.Contains(body, `"role":"viewer"`) {
		t.Fatalf("dave's page = %d, want role viewer", status)
	}
	if err := os.WriteFile(path, []byte("drivers: dave@else.org\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.roles.Reload(); err != nil { // what SIGHUP does
		t.Fatal(err)
	}
	if status, body := s.get(t, "/", as("dave@else.org")); !strings.Contains(body, `"role":"driver"`) {
		t.Errorf("dave's page after the reload = %d, want role driver", status)
	}
	dave.MustCall("ping", map[string]any{"channel": ahp.RootURI}) // still connected
}

// TestSSOCommandsMarkedWithThePerson: a command run while a person signed
// in by SSO holds the terminal carries their name ("run by"), on the wire
// and in the recording's markers; the audit trail gets disposal, renames,
// share links and the recording download.
func TestSSOCommandsMarkedWithThePerson(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "", testserver.Terminals(func(c *terminalsConfig) {
		c.ShellIntegration, c.ShellArgs, c.RecordDir = true, nil, filepath.Join(t.TempDir(), "rec")
	}))
	alice := rawHeader{{idHeader, "alice@corp.com"}, {"X-Forwarded-User", "Alice Smith"}}
	a := s.mustDial(t, alice)
	a.Initialize("1.0.0", "web-alice")
	uri, _ := a.CreateTerminal("marks", "web-alice", map[string]any{"name": "marks", "_meta": map[string]any{"termhost/record": true}})
	a.Dispatch(uri, map[string]any{"type": ahp.TerminalInput, "data": "echo by-$((6*7))\r"})
	env := a.WaitAction("alice's command", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalCommandExecuted })
	if by, ok := terminals.RunByOf(env.Action.Meta); !ok || by != (terminals.RunBy{Kind: "person", Name: "Alice Smith"}) {
		t.Errorf("commandExecuted _meta = %s, want alice's mark", env.Action.Meta)
	}
	a.WaitOutput(uri, "by-42")
	a.Dispatch(uri, map[string]any{"type": ahp.TerminalTitleChanged, "title": "renamed"})
	a.WaitAction("the rename", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalTitleChanged && e.Action.Title == "renamed"
	})

	// The recording's marker names her.
	req, _ := http.NewRequest("GET", s.URL+"/t/marks/recording.cast", nil)
	req.Header = alice.header()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cast, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(cast), "Alice Smith: echo by-$((6*7))") {
		t.Errorf("recording.cast = %d, want a marker naming alice:\n%s", resp.StatusCode, cast)
	}

	res := a.MustCall("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": "viewer", "label": "ci"})
	var sh struct{ ID string }
	_ = json.Unmarshal(res, &sh)
	a.MustCall("x-share/revoke", map[string]any{"channel": ahp.RootURI, "id": sh.ID})
	a.MustCall("disposeTerminal", map[string]any{"channel": uri})
	for _, kind := range []string{audit.TerminalRenamed, audit.RecordingDownload, audit.ShareCreated, audit.ShareRevoked, audit.TerminalDisposed} {
		got := s.events(t, audit.Filter{Events: []string{kind}, Who: "alice@corp.com"})
		if len(got) != 1 || got[0].Terminal != uri || got[0].Name != "Alice Smith" {
			t.Errorf("%s events = %+v, want one of alice's on %s", kind, got, uri)
		}
	}
	if got := s.events(t, audit.Filter{Events: []string{audit.TerminalRenamed}}); len(got) == 1 && got[0].Title != "renamed" {
		t.Errorf("rename event title = %q, want the new title", got[0].Title)
	}
}

// TestSSOControlRequestNamed: a driver's control request reaches the
// holder with the driver's name, and the grant and request are audited.
func TestSSOControlRequestNamed(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	a := s.mustDial(t, rawHeader{{idHeader, "alice@corp.com"}, {"X-Forwarded-User", "Alice Smith"}})
	a.Initialize("1.0.0", "web-alice")
	uri, _ := a.CreateTerminal("ctl", "web-alice", nil)
	b := s.mustDial(t, rawHeader{{idHeader, "bob@corp.com"}, {"X-Forwarded-User", "Bob Jones"}})
	b.Initialize("1.0.0", "web-bob")
	b.Subscribe(uri)
	res := b.MustCall("x-termhost/requestControl", map[string]any{"channel": ahp.RootURI, "terminal": uri})
	var r struct {
		Status    string `json:"status"`
		RequestID string `json:"requestId"`
	}
	_ = json.Unmarshal(res, &r)
	if r.Status != "pending" {
		t.Fatalf("requestControl = %s, want pending", res)
	}
	var from terminals.Member
	a.NextFrame("the request", func(m *ahp.Message) bool {
		var n struct {
			From terminals.Member `json:"from"`
		}
		if m.Method != "x-termhost/controlRequest" || json.Unmarshal(m.Params, &n) != nil {
			return false
		}
		from = n.From
		return true
	})
	if from.Name != "Bob Jones" || !from.Person {
		t.Errorf("control request from %+v, want Bob Jones", from)
	}
	a.MustCall("x-termhost/answerControl", map[string]any{"channel": ahp.RootURI, "terminal": uri, "requestId": r.RequestID, "grant": true})
	b.WaitAction("bob gets control", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalClaimed && e.Action.Claim.ClientID == "web-bob"
	})
	if got := s.events(t, audit.Filter{Events: []string{audit.ControlRequested}, Who: "bob@corp.com"}); len(got) != 1 {
		t.Errorf("control-requested events of bob = %+v, want one", got)
	}
	if got := s.events(t, audit.Filter{Events: []string{audit.ControlGranted}, Who: "bob@corp.com"}); len(got) != 1 || got[0].Name != "Bob Jones" {
		t.Errorf("control-granted events to bob = %+v, want one", got)
	}
}

// TestSSOTwoTabsOnePresenceID: a person's tabs share one presence id, which
// no client can take by choosing its clientId.
func TestSSOTwoTabsOnePresenceID(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	ids := map[string]bool{}
	for i := range 2 {
		c := s.mustDial(t, as("bob@corp.com"))
		init := c.Initialize("1.0.0", fmt.Sprintf("web-bob-%d", i))
		id, _ := init["_meta"].(map[string]any)["termhost/presenceId"].(string)
		ids[id] = true
	}
	if len(ids) != 1 {
		t.Errorf("bob's tabs have presence ids %v, want one", ids)
	}
	for id := range ids {
		if id == terminals.PresenceID("person:bob@corp.com") {
			t.Error("a person's presence id is a client's presence id: a client could choose it")
		}
	}
	_ = json.Valid
}

// TestSSOAuditShareUsedAndDisconnect: a share link used by someone outside
// SSO (no identity header) signs them in and is audited, and a person's
// disconnect is in the trail.
func TestSSOAuditShareUsedAndDisconnect(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	a := s.mustDial(t, as("alice@corp.com"))
	a.Initialize("1.0.0", "web-alice")
	uri, _ := a.CreateTerminal("shared", "web-alice", map[string]any{"name": "shared"})
	tok := shareLabelled(t, a, uri, "viewer", "contractor")
	resp := request(t, "POST", s.URL+"/auth/login", `{"share":"`+tok+`"}`, "Content-Type", "application/json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("share-link sign-in without an identity header = %d, want 200", resp.StatusCode)
	}
	v := s.mustDial(t, rawHeader{{"Authorization", "Bearer " + tok}})
	v.Initialize("1.0.0", "contractor")
	v.Subscribe(uri)
	if got := s.events(t, audit.Filter{Events: []string{audit.ShareUsed}}); len(got) != 1 || got[0].Terminal != uri || got[0].Name != "contractor" {
		t.Errorf("share-used events = %+v, want the contractor's on %s", got, uri)
	}
	a.Conn().CloseNow()
	for {
		if got := s.events(t, audit.Filter{Events: []string{audit.Disconnect}, Who: "alice@corp.com"}); len(got) == 1 {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatal("alice's disconnect never reached the audit trail")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestSSOShareLinkGivesMoreOnItsTerminal: a per-terminal link gives a
// person signed in by SSO a higher role on its terminal only, and never
// narrows their SSO role (an owner holding a viewer link stays the owner).
func TestSSOShareLinkGivesMoreOnItsTerminal(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	a := s.mustDial(t, as("alice@corp.com"))
	a.Initialize("1.0.0", "web-alice")
	uri, _ := a.CreateTerminal("t1", "web-alice", nil)
	a.CreateTerminal("t2", "web-alice", nil)
	driverLink := shareLabelled(t, a, uri, "driver", "carol's link")
	viewerLink := shareLabelled(t, a, uri, "viewer", "alice's own")

	// Carol (an SSO viewer) with a driver link, on its terminal: a driver.
	carol := rawHeader{{idHeader, "carol@partner.org"}, {"Authorization", "Bearer " + driverLink}}
	c, _, err := ahptest.Dial(t, "ws"+strings.TrimPrefix(s.URL, "http")+"/ws?terminal=t1", ahptest.Options{Header: carol.header(), Versions: s.versions})
	if err != nil {
		t.Fatal(err)
	}
	c.Initialize("1.0.0", "web-carol")
	c.Subscribe(uri)
	c.MustCall("x-termhost/requestControl", map[string]any{"channel": ahp.RootURI, "terminal": uri}) // pending: a viewer would be refused
	// Elsewhere (no terminal named) she is the viewer her SSO role says, on every terminal.
	c2 := s.mustDial(t, carol)
	c2.Initialize("1.0.0", "web-carol-2")
	c2.Subscribe(ahp.TerminalURI("t2"))
	c2.CallErr("x-termhost/requestControl", map[string]any{"channel": ahp.RootURI, "terminal": ahp.TerminalURI("t2")}, ahp.CodePermissionDenied)

	// Alice (owner) holding a viewer link stays the owner, on its terminal too.
	for _, q := range []string{"", "?terminal=t1"} {
		h := rawHeader{{idHeader, "alice@corp.com"}, {"Authorization", "Bearer " + viewerLink}}
		o, _, err := ahptest.Dial(t, "ws"+strings.TrimPrefix(s.URL, "http")+"/ws"+q, ahptest.Options{Header: h.header(), Versions: s.versions})
		if err != nil {
			t.Fatal(err)
		}
		o.Initialize("1.0.0", "web-alice-link"+q)
		o.MustCall("x-share/list", map[string]any{"channel": ahp.RootURI}) // owners only
	}
}

// A CLI connection has one name in the audit trail, connect and disconnect
// alike: the user@host it states, with its principal (the owner).
func TestAuditConnectionNamedOnce(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	cli := s.mustDial(t, rawHeader{{"Authorization", "Bearer " + s.Token}})
	cli.MustCall(ahp.MethodInitialize, map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"},
		"clientId": "termhost-cli-abc", "clientInfo": map[string]any{"name": "termhost-cli", "title": "root@vm"}})
	_ = cli.Conn().CloseNow()
	var got []audit.Event
	poll.Until(t, 30*time.Second, "the CLI's disconnect in the audit trail", func() bool {
		got = s.events(t, audit.Filter{Events: []string{audit.Connect, audit.Disconnect}, Who: "owner"})
		return len(got) == 2
	})
	for _, e := range got {
		if e.Name != "root@vm" || e.Who != "owner" {
			t.Errorf("%s event named %q (%s), want root@vm (owner) for connect and disconnect alike", e.Event, e.Name, e.Who)
		}
	}
	if got[0].Event != audit.Connect || got[1].Event != audit.Disconnect || got[1].Time.Before(got[0].Time) {
		t.Errorf("events %+v: want the connect, then the disconnect", got)
	}
}

// Two short commands typed a key at a time over a real connection make a
// few input lines in the audit trail, not one per key: the bytes summed
// per person and terminal up to each Enter (or audit.InputWindow), the
// total exact, the bytes themselves never there.
func TestAuditTypingSummed(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	a := s.mustDial(t, as("alice@corp.com"))
	a.Initialize("1.0.0", "web-alice")
	uri, snap := a.CreateTerminal("build", "web-alice", map[string]any{"name": "build"})
	// The prompt: in the subscription's snapshot when the shell printed it
	// before the subscribe (a loaded machine), else live.
	var shown strings.Builder
	for _, p := range snap.State.(ahp.TerminalState).Content {
		shown.WriteString(p.Text())
	}
	if !strings.Contains(shown.String(), "$") {
		a.WaitOutput(uri, "$")
	}
	commands := []string{"echo one\r", "echo two\r"}
	keys, total := 0, 0
	start := time.Now()
	for _, cmd := range commands {
		for _, k := range cmd {
			a.Dispatch(uri, map[string]any{"type": "terminal/input", "data": string(k)})
			keys++
			total += len(string(k))
		}
	}
	typing := time.Since(start)
	a.WaitOutput(uri, "\rtwo\r\n") // the command's output, not its echo
	// The last key is an Enter: every byte reaches the file without a Sync
	// (which would write input still waiting).
	var inputs []audit.Event
	sum := 0
	poll.Until(t, 30*time.Second, "every typed byte in the audit trail", func() bool {
		b, err := os.ReadFile(s.auditPath)
		if err != nil {
			t.Fatal(err)
		}
		inputs, sum = nil, 0
		_ = audit.Read(bytes.NewReader(b), audit.Filter{Events: []string{audit.Input}}, func(e audit.Event) error {
			inputs, sum = append(inputs, e), sum+e.Bytes
			return nil
		})
		return sum >= total
	})
	for _, e := range inputs {
		if e.Who != "alice@corp.com" || e.Terminal != uri || e.Title != "build" || e.Count != 0 {
			t.Errorf("input line %+v: want alice's into build, not a budget summary", e)
		}
	}
	// A line at each Enter, and at most one more per window that passed
	// while typing (a slow machine may take longer than one to type).
	most := len(commands) + int(typing/audit.InputWindow)
	if len(inputs) > most || len(inputs) >= keys || sum != total {
		t.Errorf("%d keys (%d bytes, typed in %v) made %d input lines of %d bytes; want at most %d lines, the bytes exact", keys, total, typing, len(inputs), sum, most)
	}
	if b, _ := os.ReadFile(s.auditPath); bytes.Contains(b, []byte("echo")) || bytes.Contains(b, []byte("one")) {
		t.Error("the audit trail holds the typed bytes")
	}
}
