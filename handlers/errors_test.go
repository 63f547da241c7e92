package handlers_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

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
			c.SendRaw(tc.frame)
			got := c.NextFrame("error for "+tc.name, func(m *ahp.Message) bool { return m.Error != nil })
			if got.Error.Code != tc.code {
				t.Errorf("frame %s: code %d (%s), want %d", tc.frame, got.Error.Code, got.Error.Message, tc.code)
			}
			if string(got.ID) != "null" && tc.code == ahp.CodeParseError {
				t.Errorf("parse error id = %s, want null", got.ID)
			}
		})
	}
	// The connection survives all of it.
	c.SetNextID(100) // ids above the ones the bad frames used
	if _, err := c.Call("ping", map[string]any{"channel": ahp.RootURI}); err != nil {
		t.Fatalf("ping after bad frames: %v", err)
	}
}

// TestRequestErrors checks every request that can fail, with its exact code.
func TestRequestErrors(t *testing.T) {
	ts := newServer(t, func(tc *terminals.Config, _ *handlersConfig) { tc.MaxTerminals = 2 })
	root := map[string]any{"channel": ahp.RootURI}

	t.Run("before initialize", func(t *testing.T) {
		c := ts.dial(t)
		if res := c.MustCall("ping", root); string(res) != "null" {
			t.Errorf("ping result = %s, want null", res)
		}
		c.CallErr("subscribe", root, ahp.CodeInvalidRequest)
		c.CallErr("createTerminal", map[string]any{"channel": "ahp-terminal:/x"}, ahp.CodeInvalidRequest)
		c.CallErr("listSessions", root, ahp.CodeInvalidRequest)
	})
	t.Run("initialize params", func(t *testing.T) {
		c := ts.dial(t)
		c.CallErr("initialize", map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"1.0.0"}}, ahp.CodeInvalidParams)
		c.CallErr("initialize", map[string]any{"channel": ahp.RootURI, "clientId": "x"}, ahp.CodeInvalidParams)
		c.CallErr("initialize", map[string]any{"channel": "ahp-terminal:/x", "clientId": "x", "protocolVersions": []string{"1.0.0"}}, ahp.CodeInvalidParams)
		c.CallErr("initialize", map[string]any{"channel": ahp.RootURI, "clientId": 5, "protocolVersions": []string{"1.0.0"}}, ahp.CodeInvalidParams)
	})
	t.Run("unsupported version closes", func(t *testing.T) {
		c := ts.dial(t)
		e := c.CallErr("initialize", map[string]any{"channel": ahp.RootURI, "clientId": "old", "protocolVersions": []string{"0.4.0", "2.0.0"}}, ahp.CodeUnsupportedProtocolVersion)
		data, _ := json.Marshal(e.Data)
		if !strings.Contains(string(data), `"supportedVersions":["^1.0.0"`) {
			t.Errorf("-32005 data = %s, want supportedVersions", data)
		}
		c.WaitClosed()
	})

	c := ts.dial(t)
	c.Initialize("1.0.0", "errs")
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
		t.Run(tc.name, func(t *testing.T) { c.CallErr(tc.method, tc.params, tc.code) })
	}
	t.Run("listSessions", func(t *testing.T) {
		if res := c.MustCall("listSessions", root); string(res) != `{"items":[]}` {
			t.Errorf("listSessions = %s", res)
		}
	})
	t.Run("duplicate and limit", func(t *testing.T) {
		claim := map[string]any{"kind": "client", "clientId": "errs"}
		c.MustCall("createTerminal", map[string]any{"channel": "ahp-terminal:/one", "claim": claim})
		c.CallErr("createTerminal", map[string]any{"channel": "ahp-terminal:/one", "claim": claim}, ahp.CodeAlreadyExists)
		c.MustCall("createTerminal", map[string]any{"channel": "ahp-terminal:/two", "claim": claim})
		e := c.CallErr("createTerminal", map[string]any{"channel": "ahp-terminal:/three", "claim": claim}, ahp.CodePermissionDenied)
		if !strings.Contains(e.Message, "at most 2") {
			t.Errorf("limit message %q does not name the limit", e.Message)
		}
	})
}

func TestShellFailsToStart(t *testing.T) {
	ts := newServer(t, func(tc *terminals.Config, _ *handlersConfig) { tc.Shell = "/nonexistent/shell" })
	c := ts.dial(t)
	c.Initialize("1.0.0", "x")
	e := c.CallErr("createTerminal", map[string]any{"channel": "ahp-terminal:/a", "claim": map[string]any{"kind": "client", "clientId": "x"}}, ahp.CodeInternalError)
	if !strings.Contains(e.Message, "/nonexistent/shell") {
		t.Errorf("message %q does not name the shell", e.Message)
	}
	if n := len(ts.m.Terminals()); n != 0 {
		t.Errorf("%d terminals after a failed spawn", n)
	}
}

// A command that is not there, or not a program, is the client's mistake:
// -32602 naming the program and why, not an internal error.
func TestCommandNotFound(t *testing.T) {
	ts := newServer(t)
	c := ts.dial(t)
	c.Initialize("1.0.0", "x")
	for i, tc := range []struct{ program, want string }{
		{"/no/such/program", `command "/no/such/program" not found`},
		{t.TempDir(), "cannot be run"}, // a directory
	} {
		e := c.CallErr("createTerminal", map[string]any{"channel": fmt.Sprintf("ahp-terminal:/c%d", i),
			"claim": map[string]any{"kind": "client", "clientId": "x"},
			"_meta": map[string]any{terminals.MetaCommand: []string{tc.program}}}, ahp.CodeInvalidParams)
		if !strings.Contains(e.Message, tc.want) || strings.Contains(e.Message, "internal") {
			t.Errorf("createTerminal running %s: message %q, want one with %q", tc.program, e.Message, tc.want)
		}
	}
	if n := len(ts.m.Terminals()); n != 0 {
		t.Errorf("%d terminals after failed spawns", n)
	}
}

func TestOversizedFrameCloses(t *testing.T) {
	ts := newServer(t, func(_ *terminals.Config, hc *handlersConfig) { hc.MaxFrame = 4096 })
	c := ts.dial(t)
	c.Initialize("1.0.0", "big")
	c.SendRaw(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"channel":"ahp-root://","x":"` + strings.Repeat("a", 8000) + `"}}`)
	err := c.WaitClosed()
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("close status = %v (%v), want 1009", websocket.CloseStatus(err), err)
	}
	// Others are unaffected.
	other := ts.dial(t)
	other.Initialize("1.0.0", "other")
}

func TestForeignOriginRefused(t *testing.T) {
	ts := newServer(t)
	if _, err := ts.tryDial(t, "Origin", "https://evil.example"); err == nil {
		t.Fatal("upgrade with a foreign Origin succeeded")
	}
	host := strings.TrimPrefix(ts.URL, "http://")
	c := ts.dial(t, "Origin", "http://"+host)
	c.Initialize("1.0.0", "same-origin")
}
