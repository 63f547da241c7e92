package cli

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/handlers/sso"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/testserver"
)

// TestLsNamesSSOPeople: termhost ls (the owner token, straight to the
// server) shows the person signed in by SSO who has control, by name, and
// lists them by name in --json's presence.
func TestLsNamesSSOPeople(t *testing.T) {
	roles, err := sso.NewDirectory(sso.Roles{Owners: []string{"alice@corp.com"}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := testserver.New(t, testserver.Handlers(func(c *handlers.Config) {
		c.SSO = &sso.Proxy{Header: "X-Forwarded-Email", NameHeader: "X-Forwarded-User", Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
		c.Roles = roles
	}))
	ts := &testServer{Server: srv, m: srv.Manager}
	h := http.Header{"X-Forwarded-Email": {"alice@corp.com"}, "X-Forwarded-User": {"Alice Smith"}}
	alice := ahptest.MustDial(t, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", ahptest.Options{Header: h})
	alice.Initialize("1.0.0", "web-alice")
	alice.CreateTerminal("build", "web-alice", map[string]any{"name": "build"})

	code, stdout, stderr := call(t, ownerEnv(ts), "ls")
	if code != 0 || !strings.Contains(stdout, "Alice Smith") {
		t.Errorf("ls: exit %d, want Alice Smith in control:\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = call(t, ownerEnv(ts), "ls", "--json")
	var got []lsEntry
	if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil || len(got) != 1 {
		t.Fatalf("ls --json: exit %d, %v:\n%s%s", code, err, stdout, stderr)
	}
	if got[0].Control != "Alice Smith" || len(got[0].Presence) != 1 || got[0].Presence[0].Name != "Alice Smith" || !got[0].Presence[0].Person {
		t.Errorf("ls --json entry = %+v, want Alice Smith in control and present", got[0])
	}
}

// TestAttachNamesSSODriver: a person signed in through the SSO proxy with
// the driver role who asks the holder (attach) for control is named as a
// person, with their role, not as a share link.
func TestAttachNamesSSODriver(t *testing.T) {
	roles, err := sso.NewDirectory(sso.Roles{Owners: []string{"alice@corp.com"}, Drivers: []string{"carol@corp.com"}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := testserver.New(t, testserver.Handlers(func(c *handlers.Config) {
		c.SSO = &sso.Proxy{Header: "X-Forwarded-Email", NameHeader: "X-Forwarded-User", Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
		c.Roles = roles
	}))
	ts := &testServer{Server: srv, m: srv.Manager}
	owner := ts.dial(t)
	uri := ahp.TerminalURI(ts.shell(t, owner, "pair", owner.ClientID()))
	ask := true
	p := startPty(t, ts, 80, 24, "attach", "--take", ts.URL+"/t/pair")
	waitFor(t, "attach --take to take the claim", func() bool {
		in, _ := ts.info(uri)
		return in.Claim.ClientID != owner.ClientID()
	})
	h := http.Header{"X-Forwarded-Email": {"carol@corp.com"}, "X-Forwarded-User": {"Carol Jones"}}
	carol := ahptest.MustDial(t, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", ahptest.Options{Header: h})
	carol.Initialize("1.0.0", "web-carol", uri)
	carol.MustCall(ext.MethodRequestControl, ext.RequestControlParams{Channel: ahp.RootURI, Terminal: uri, Ask: &ask})
	p.waitOutput("Carol Jones (driver) asks for control: Ctrl-\\ y grants")
	p.typeKeys("~.")
	if code := p.exit(); code != 0 {
		t.Errorf("attach exit after ~. = %d, want 0", code)
	}
}
