package handlers_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals"
)

// TestRawFrameErrors covers frames that are not valid requests.
func TestRawFrameErrors(t *testing.T) {
	ts := newServer(t)
	cases := []struct {
		name  string
		frame string
		code  int
	}{
		{"garbage", `{"jsonrpc":"2.0",`, ahp.CodeParseError},
		{"not json at all", `hello`, ahp.CodeParseError},
		{"batch array", `[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"channel":"ahp-root://"}}]`, ahp.CodeInvalidRequest},
		{"string", `"ping"`, ahp.CodeInvalidRequest},
		{"number", `42`, ahp.CodeInvalidRequest},
		{"missing jsonrpc", `{"id":1,"method":"ping"}`, ahp.CodeInvalidRequest},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, ahp.CodeInvalidRequest},
		{"no method", `{"jsonrpc":"2.0","id":1}`, ahp.CodeInvalidRequest},
		{"params not object", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, ahp.CodeInvalidRequest},
	}
	c := ts.dial(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.sendRaw(tc.frame)
			var got *ahp.Message
			c.waitFrame(func(m *ahp.Message, i int) bool {
				if i >= c.cursor && m.Error != nil {
					got, c.cursor = m, i+1
					return true
				}
				return false
			}, "error for "+tc.name)
			if got.Error.Code != tc.code {
				t.Errorf("frame %s: code %d (%s), want %d", tc.frame, got.Error.Code, got.Error.Message, tc.code)
			}
			if string(got.ID) != "null" && tc.code == ahp.CodeParseError {
				t.Errorf("parse error id = %s, want null", got.ID)
			}
		})
	}
	// The connection survives all of it.
	c.nextID = 100 // ids above the ones the bad frames used
	if _, err := c.call("ping", map[string]any{"channel": ahp.RootURI}); err != nil {
		t.Fatalf("ping after bad frames: %v", err)
	}
}

// TestRequestErrors checks every request that can fail, with its exact code.
func TestRequestErrors(t *testing.T) {
	ts := newServer(t, func(tc *terminals.Config, _ *handlersConfig) { tc.MaxTerminals = 2 })
	root := map[string]any{"channel": ahp.RootURI}

	t.Run("before initialize", func(t *testing.T) {
		c := ts.dial(t)
		if res := c.mustCall("ping", root); string(res) != "null" {
			t.Errorf("ping result = %s, want null", res)
		}
		c.callErr("subscribe", root, ahp.CodeInvalidRequest)
		c.callErr("createTerminal", map[string]any{"channel": "ahp-terminal:/x"}, ahp.CodeInvalidRequest)
		c.callErr("listSessions", root, ahp.CodeInvalidRequest)
	})
	t.Run("initialize params", func(t *testing.T) {
		c := ts.dial(t)
		c.callErr("initialize", map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}}, ahp.CodeInvalidParams)
		c.callErr("initialize", map[string]any{"channel": ahp.RootURI, "clientId": "x"}, ahp.CodeInvalidParams)
		c.callErr("initialize", map[string]any{"channel": "ahp-terminal:/x", "clientId": "x", "protocolVersions": []string{"1.0.0"}}, ahp.CodeInvalidParams)
		c.callErr("initialize", map[string]any{"channel": ahp.RootURI, "clientId": 5, "protocolVersions": []string{"1.0.0"}}, ahp.CodeInvalidParams)
	})
	t.Run("unsupported version closes", func(t *testing.T) {
		c := ts.dial(t)
		e := c.callErr("initialize", map[string]any{"channel": ahp.RootURI, "clientId": "old", "protocolVersions": []string{"0.4.0", "2.0.0"}}, ahp.CodeUnsupportedProtocolVersion)
		data, _ := json.Marshal(e.Data)
		if !strings.Contains(string(data), `"supportedVersions":["^1.0.0"`) {
			t.Errorf("-32005 data = %s, want supportedVersions", data)
		}
		c.waitClosed(t)
	})

	c := ts.dial(t)
	c.initialize("1.0.0", "errs")
	cases := []struct {
		name   string
		method string
		params any
		code   int
	}{
		{"second initialize", "initialize", map[string]any{"channel": ahp.RootURI, "clientId": "errs", "protocolVersions": []string{"1.0.0"}}, ahp.CodeInvalidRequest},
		{"reconnect after initialize", "reconnect", map[string]any{"channel": ahp.RootURI, "clientId": "errs", "lastSeenServerSeq": 0, "subscriptions": []string{}}, ahp.CodeInvalidRequest},
		{"unknown method", "createSession", root, ahp.CodeMethodNotFound},
		{"made-up method", "x-nothing", root, ahp.CodeMethodNotFound},
		{"authenticate", "authenticate", map[string]any{"channel": ahp.RootURI, "resource": "https://x", "token": "t"}, ahp.CodeInvalidParams},
		{"subscribe unknown terminal", "subscribe", map[string]any{"channel": "ahp-terminal:/nope"}, ahp.CodeNotFound},
		{"subscribe bad scheme", "subscribe", map[string]any{"channel": "ahp-session:/s"}, ahp.CodeInvalidParams},
		{"subscribe no params", "subscribe", nil, ahp.CodeInvalidParams},
		{"subscribe wrong type", "subscribe", map[string]any{"channel": 7}, ahp.CodeInvalidParams},
		{"create bad scheme", "createTerminal", map[string]any{"channel": "file:///x", "claim": map[string]any{"kind": "client", "clientId": "errs"}}, ahp.CodeInvalidParams},
		{"create empty id", "createTerminal", map[string]any{"channel": "ahp-terminal:/", "claim": map[string]any{"kind": "client", "clientId": "errs"}}, ahp.CodeInvalidParams},
		{"create no claim", "createTerminal", map[string]any{"channel": "ahp-terminal:/a"}, ahp.CodeInvalidParams},
		{"create bad claim", "createTerminal", map[string]any{"channel": "ahp-terminal:/a", "claim": map[string]any{"kind": "robot"}}, ahp.CodeInvalidParams},
		{"create missing cwd", "createTerminal", map[string]any{"channel": "ahp-terminal:/a", "claim": map[string]any{"kind": "client", "clientId": "errs"}, "cwd": "file:///does/not/exist"}, ahp.CodeInvalidParams},
		{"create cwd not a URI", "createTerminal", map[string]any{"channel": "ahp-terminal:/a", "claim": map[string]any{"kind": "client", "clientId": "errs"}, "cwd": "/tmp"}, ahp.CodeInvalidParams},
		{"create cwd is a file", "createTerminal", map[string]any{"channel": "ahp-terminal:/a", "claim": map[string]any{"kind": "client", "clientId": "errs"}, "cwd": "file:///etc/passwd"}, ahp.CodeInvalidParams},
		{"create huge size", "createTerminal", map[string]any{"channel": "ahp-terminal:/a", "claim": map[string]any{"kind": "client", "clientId": "errs"}, "cols": 100000}, ahp.CodeInvalidParams},
		{"dispose unknown", "disposeTerminal", map[string]any{"channel": "ahp-terminal:/nope"}, ahp.CodeNotFound},
		{"dispose bad scheme", "disposeTerminal", map[string]any{"channel": ahp.RootURI}, ahp.CodeInvalidParams},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { c.callErr(tc.method, tc.params, tc.code) })
	}
	t.Run("listSessions", func(t *testing.T) {
		if res := c.mustCall("listSessions", root); string(res) != `{"items":[]}` {
			t.Errorf("listSessions = %s", res)
		}
	})
	t.Run("duplicate and limit", func(t *testing.T) {
		claim := map[string]any{"kind": "client", "clientId": "errs"}
		c.mustCall("createTerminal", map[string]any{"channel": "ahp-terminal:/one", "claim": claim})
		c.callErr("createTerminal", map[string]any{"channel": "ahp-terminal:/one", "claim": claim}, ahp.CodeAlreadyExists)
		c.mustCall("createTerminal", map[string]any{"channel": "ahp-terminal:/two", "claim": claim})
		e := c.callErr("createTerminal", map[string]any{"channel": "ahp-terminal:/three", "claim": claim}, ahp.CodePermissionDenied)
		if !strings.Contains(e.Message, "at most 2") {
			t.Errorf("limit message %q does not name the limit", e.Message)
		}
	})
}

func TestShellFailsToStart(t *testing.T) {
	ts := newServer(t, func(tc *terminals.Config, _ *handlersConfig) { tc.Shell = "/nonexistent/shell" })
	c := ts.dial(t)
	c.initialize("1.0.0", "x")
	e := c.callErr("createTerminal", map[string]any{"channel": "ahp-terminal:/a", "claim": map[string]any{"kind": "client", "clientId": "x"}}, ahp.CodeInternalError)
	if !strings.Contains(e.Message, "/nonexistent/shell") {
		t.Errorf("message %q does not name the shell", e.Message)
	}
	if n := len(ts.m.Terminals()); n != 0 {
		t.Errorf("%d terminals after a failed spawn", n)
	}
}

func TestOversizedFrameCloses(t *testing.T) {
	ts := newServer(t, func(_ *terminals.Config, hc *handlersConfig) { hc.MaxFrame = 4096 })
	c := ts.dial(t)
	c.initialize("1.0.0", "big")
	c.sendRaw(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"channel":"ahp-root://","x":"` + strings.Repeat("a", 8000) + `"}}`)
	err := c.waitClosed(t)
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("close status = %v (%v), want 1009", websocket.CloseStatus(err), err)
	}
	// Others are unaffected.
	other := ts.dial(t)
	other.initialize("1.0.0", "other")
}

func TestForeignOriginRefused(t *testing.T) {
	ts := newServer(t)
	if _, err := ts.tryDial(t, "Origin", "https://evil.example"); err == nil {
		t.Fatal("upgrade with a foreign Origin succeeded")
	}
	host := strings.TrimPrefix(ts.URL, "http://")
	c := ts.dial(t, "Origin", "http://"+host)
	c.initialize("1.0.0", "same-origin")
}

// waitClosed waits until the server closes the connection and returns the error.
func (c *client) waitClosed(t *testing.T) error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		err := c.closed
		c.mu.Unlock()
		if err != nil {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("connection still open")
	return nil
}
