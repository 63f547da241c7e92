package serve

import (
	"bytes"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/handlers/sso"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// headers adds fixed headers to each request.
type headers struct {
	h    http.Header
	next http.RoundTripper
}

func (hs headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range hs.h {
		r.Header[k] = v
	}
	return hs.next.RoundTrip(r)
}

// TestServeMCPUnderSSO: under --auth proxy, /mcp is the owner's: a person
// whose role is owner may open it with the proxy's header alone, and what
// the agent does is theirs (audit who, presence name); a driver may not;
// with the owner token alone the agent acts as "owner", and a client
// cannot name a person itself.
func TestServeMCPUnderSSO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trail := filepath.Join(dir, "audit.jsonl")
	log, err := audit.Open(trail, testserver.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close() })
	roles, err := sso.NewDirectory(sso.Roles{Owners: []string{"alice@corp.com"}, Drivers: []string{"*@corp.com"}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var inner http.Handler
	var m *serveMCP
	ts := testserver.NewAt(t, func(u string) []testserver.Option {
		base, err := client.ParseServer(u)
		if err != nil {
			t.Fatal(err)
		}
		m = newServeMCP(func() http.Handler { return inner }, testserver.OwnerToken, "", base, testserver.Logger(t))
		return []testserver.Option{
			testserver.Terminals(func(c *terminals.Config) { c.ShellIntegration, c.ShellArgs = true, nil }),
			testserver.Handlers(func(c *handlers.Config) {
				c.MCP = m.handler
				c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
				c.SSO = &sso.Proxy{Header: "X-Forwarded-Email", NameHeader: "X-Forwarded-User", Trusted: c.TrustedProxies}
				c.Roles, c.Audit = roles, log
			})}
	})
	inner = ts.Handler
	t.Cleanup(m.close)
	endpoint := ts.URL + "/mcp"
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	session := func(h http.Header) (*mcp.ClientSession, error) {
		return mcp.NewClient(&mcp.Implementation{Name: "sso-agent", Version: "1"}, nil).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: headers{h, tr}}}, nil)
	}
	runAs := func(h http.Header, marker string) {
		t.Helper()
		cs, err := session(h)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		call := func(name string, args map[string]any) map[string]any {
			t.Helper()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %+v", name, err, res)
			}
			return res.StructuredContent.(map[string]any)
		}
		id := call("open_terminal", map[string]any{"name": marker})["id"].(string)
		if out := call("run_command", map[string]any{"terminal": id, "command": "echo " + marker}); out["output"] != marker {
			t.Fatalf("run_command: %v", out)
		}
		call("close_terminal", map[string]any{"terminal": id})
	}
	createdBy := func(title string) []audit.Event {
		t.Helper()
		log.Sync()
		b, err := os.ReadFile(trail)
		if err != nil {
			t.Fatal(err)
		}
		var out []audit.Event
		_ = audit.Read(bytes.NewReader(b), audit.Filter{Terminal: title, Events: []string{audit.TerminalCreated, audit.Input}}, func(e audit.Event) error {
			out = append(out, e)
			return nil
		})
		return out
	}

	alice := http.Header{"X-Forwarded-Email": {"alice@corp.com"}, "X-Forwarded-User": {"Alice Smith"}}
	runAs(alice, "by-alice")
	events := createdBy("by-alice")
	if len(events) < 2 {
		t.Fatalf("alice's agent left %+v in the trail, want its terminal and input", events)
	}
	for _, e := range events {
		if e.Who != "alice@corp.com" || e.Name != "Agent · sso-agent (Alice Smith)" {
			t.Errorf("alice's agent's %s: who %q, name %q; want alice@corp.com, \"Agent · sso-agent (Alice Smith)\"", e.Event, e.Who, e.Name)
		}
	}

	// A driver may not open /mcp.
	if _, err := session(http.Header{"X-Forwarded-Email": {"bob@corp.com"}}); err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("bob (driver) connecting to /mcp: %v, want 401", err)
	}

	// The owner token alone: "owner"; a person named by the client is ignored.
	runAs(http.Header{"Authorization": {"Bearer " + testserver.OwnerToken}, handlers.HeaderActingPerson: {"alice@corp.com"}, handlers.HeaderActingName: {"Alice"}}, "by-token")
	for _, e := range createdBy("by-token") {
		if e.Who != "owner" || e.Name != "Agent · sso-agent" {
			t.Errorf("the owner token's agent's %s: who %q, name %q; want owner, \"Agent · sso-agent\"", e.Event, e.Who, e.Name)
		}
	}
}
