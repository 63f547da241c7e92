package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/handlers/testserver"
	"github.com/termhost/termhost/terminals"
)

// bearer adds the owner token (and an Origin, when set) to each request.
type bearer struct {
	token, origin string
	next          http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	if b.origin != "" {
		r.Header.Set("Origin", b.origin)
	}
	return b.next.RoundTrip(r)
}

// TestServeMCPOverHTTP serves the agent's tools at <base>/mcp as serve
// --mcp does, and checks the token, the Origin, and a session through the
// SDK's Streamable HTTP client whose AHP side runs in-process.
func TestServeMCPOverHTTP(t *testing.T) {
	var inner http.Handler
	var m *serveMCP
	ts := testserver.NewAt(t, func(u string) []testserver.Option {
		base, err := client.ParseServer(u + "/term")
		if err != nil {
			t.Fatal(err)
		}
		m = newServeMCP(func() http.Handler { return inner }, testserver.OwnerToken, "/term", base, testserver.Logger(t))
		return []testserver.Option{testserver.BasePath("/term"),
			testserver.Terminals(func(c *terminals.Config) { c.ShellIntegration, c.ShellArgs = true, nil }),
			testserver.Handlers(func(c *handlers.Config) { c.MCP = m.handler })}
	})
	inner = ts.Handler
	t.Cleanup(m.close)
	endpoint := ts.URL + "/term/mcp"

	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	for _, tt := range []struct {
		name          string
		token, origin string
		want          int
	}{
		{"no token", "", "", http.StatusUnauthorized},
		{"wrong token", "nope", "", http.StatusUnauthorized},
		{"foreign origin", testserver.OwnerToken, "https://evil.example", http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := (&http.Client{Transport: bearer{tt.token, tt.origin, tr}}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("POST /mcp (%s): HTTP %d, want %d", tt.name, resp.StatusCode, tt.want)
			}
		})
	}

	hc := &http.Client{Transport: bearer{token: testserver.OwnerToken, next: tr}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-agent", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		return res.StructuredContent.(map[string]any)
	}
	opened := call("open_terminal", map[string]any{"name": "over http"})
	id := opened["id"].(string)
	if !strings.HasPrefix(opened["url"].(string), ts.URL+"/term/t/") {
		t.Fatalf("terminal URL %v", opened["url"])
	}
	if out := call("run_command", map[string]any{"terminal": id, "command": "echo over http"}); out["output"] != "over http" || out["exitCode"] != float64(0) {
		t.Fatalf("run_command over HTTP: %v", out)
	}
	call("close_terminal", map[string]any{"terminal": id})
}
