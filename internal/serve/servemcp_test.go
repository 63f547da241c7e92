package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/testserver"
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
	t.Parallel()
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

	cs := httpSession(t, endpoint, testserver.OwnerToken, tr)
	call := toolCaller(t, cs)
	opened := call("open_terminal", map[string]any{"name": "over http"})
	id := opened["id"].(string)
	if !strings.HasPrefix(opened["url"].(string), ts.URL+"/term/t/") {
		t.Fatalf("terminal URL %v", opened["url"])
	}
	if out := call("run_command", map[string]any{"terminal": id, "command": "echo over http"}); out["output"] != "over http" || out["exitCode"] != float64(0) {
		t.Fatalf("run_command over HTTP: %v", out)
	}
	// A call that waits long holds up none of the session's others: the
	// SDK runs a session's calls side by side over Streamable HTTP too.
	ctx, cancel := context.WithCancel(t.Context())
	slow := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for", Arguments: map[string]any{"terminal": id, "pattern": "no such text", "timeoutSeconds": 600}})
		slow <- err
	}()
	for range 3 {
		call("list_terminals", nil)
		call("read_terminal", map[string]any{"terminal": id, "mode": "output"})
	}
	select {
	case err := <-slow:
		t.Fatalf("the waiting wait_for ended early: %v", err)
	default:
	}
	cancel()
	<-slow
	call("close_terminal", map[string]any{"terminal": id})
}

// postMCP posts an MCP initialize request to endpoint with the given
// bearer token and Origin ("" for none) and returns the HTTP status.
func postMCP(t *testing.T, endpoint, token, origin string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: bearer{token, origin, tr}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestServeMCPFlag, against real "termhost serve" processes:
// without --mcp nothing is served at /mcp, even to the owner; with it,
// /mcp answers the owner token only (not none, a wrong one, or a share
// link's), refuses a foreign Origin even with the owner token, accepts
// the server's own Origin, and serves the agent's tools to the SDK's
// Streamable HTTP client.
func TestServeMCPFlag(t *testing.T) {
	t.Parallel()
	t.Run("off by default", func(t *testing.T) {
		_, login := startServe(t)
		base, token, _ := strings.Cut(login, "/#token=")
		if got := postMCP(t, base+"/mcp", token, ""); got != http.StatusNotFound {
			t.Fatalf("POST /mcp with the owner token, without --mcp: HTTP %d, want 404", got)
		}
	})
	t.Run("--mcp", func(t *testing.T) {
		_, login := startServe(t, "--mcp", "--shell-integration", "on")
		base, token, _ := strings.Cut(login, "/#token=")
		endpoint := base + "/mcp"
		c, err := client.Dial(t.Context(), base, client.Options{Token: token})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		claim := ahp.ClientClaim(c.ClientID())
		if _, err := c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: ahp.TerminalURI("shared"), Claim: &claim}); err != nil {
			t.Fatal(err)
		}
		raw, err := c.Call(t.Context(), "x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": ahp.TerminalURI("shared"), "role": "driver"})
		if err != nil {
			t.Fatal(err)
		}
		var link struct{ URL string }
		_ = json.Unmarshal(raw, &link)
		_, shareToken, ok := strings.Cut(link.URL, "#share=")
		if !ok {
			t.Fatalf("share link %q", link.URL)
		}
		for _, tt := range []struct {
			name          string
			token, origin string
			want          int
		}{
			{"no token", "", "", http.StatusUnauthorized},
			{"wrong token", "nope", "", http.StatusUnauthorized},
			{"a driver share link's token", shareToken, "", http.StatusUnauthorized},
			{"foreign origin", token, "https://evil.example", http.StatusForbidden},
			{"foreign origin, no token", "", "https://evil.example", http.StatusForbidden},
			{"own origin", token, base, http.StatusOK},
			{"no origin", token, "", http.StatusOK},
		} {
			if got := postMCP(t, endpoint, tt.token, tt.origin); got != tt.want {
				t.Errorf("POST /mcp (%s): HTTP %d, want %d", tt.name, got, tt.want)
			}
		}

		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		callTool := httpMCP(t, endpoint, token, tr)
		id := callTool("open_terminal", map[string]any{"name": "over http"})["id"].(string)
		if out := callTool("run_command", map[string]any{"terminal": id, "command": "echo over http; false"}); out["output"] != "over http" || out["exitCode"] != float64(1) {
			t.Fatalf("run_command over /mcp of termhost serve --mcp: %v", out)
		}
		callTool("close_terminal", map[string]any{"terminal": id})
	})
}

// httpMCP connects the SDK's Streamable HTTP client to endpoint with a
// bearer token (closed when the test ends) and returns a call that fails
// the test on a tool error.
func httpMCP(t *testing.T, endpoint, token string, tr http.RoundTripper) func(name string, args map[string]any) map[string]any {
	t.Helper()
	return toolCaller(t, httpSession(t, endpoint, token, tr))
}

// httpSession connects the SDK's Streamable HTTP client to endpoint.
func httpSession(t *testing.T, endpoint, token string, tr http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-agent", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token: token, next: tr}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// toolCaller calls tools that must succeed on cs, from the test's goroutine.
func toolCaller(t *testing.T, cs *mcp.ClientSession) func(name string, args map[string]any) map[string]any {
	return func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		return res.StructuredContent.(map[string]any)
	}
}
