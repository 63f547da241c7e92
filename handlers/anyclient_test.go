package handlers_test

// Any AHP client works, VS Code's included — the shapes real clients
// send (?tkn=, URIs of their own scheme, channel-less reconnect, the
// `terminal` alias, a desktop app's Origin).

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/testserver"
)

// debugLogs sends every server log line, debug included, to buf.
func debugLogs(buf *testserver.SyncBuffer) serverOption {
	return func(tc *terminalsConfig, hc *handlersConfig) {
		log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		tc.Logger, hc.Logger = log, log
	}
}

// get fetches url with headers and returns the status and body.
func get(t *testing.T, url string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// ?tkn= is a credential on the WebSocket upgrade only, never logged,
// limited like any other.
func TestQueryTokenOnUpgradeOnly(t *testing.T) {
	var logs testserver.SyncBuffer
	ts := newServer(t, trustLoopbackProxy, debugLogs(&logs))
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("tkn", "owner", nil)
	_, shareTok := share(t, owner, uri, "viewer", 0)

	dialStatus := func(query string, headers ...string) string {
		return ts.dialStatus(t, append([]string{"Authorization", "", "X-Test-Query", query}, headers...)...)
	}
	upgrades := []struct {
		name, query, want string
	}{
		{"owner token", "tkn=" + url.QueryEscape(ownerToken), "ok"},
		{"share token", "tkn=" + url.QueryEscape(shareTok) + "&terminal=tkn", "ok"},
		{"wrong token", "tkn=wrong-query-token", "401"},
		{"empty token", "tkn=", "401"},
	}
	for _, tt := range upgrades {
		t.Run("upgrade "+tt.name, func(t *testing.T) {
			if got := dialStatus(tt.query); got != tt.want {
				t.Errorf("GET /ws?%s: %s, want %s", tt.query, got, tt.want)
			}
		})
	}
	t.Run("share token connection is the viewer", func(t *testing.T) {
		c, err := ts.tryDial(t, "Authorization", "", "X-Test-Query", "tkn="+url.QueryEscape(shareTok))
		if err != nil {
			t.Fatal(err)
		}
		c.Initialize("1.0.0", "viewer-tkn", uri)
		c.CallErr(ahp.MethodCreateTerminal, map[string]any{"channel": "ahp-terminal:/no", "claim": map[string]any{"kind": "client", "clientId": "viewer-tkn"}}, ahp.CodePermissionDenied)
	})
	pages := []struct{ name, path string }{
		{"workbench", "/"},
		{"terminal page", "/t/tkn"},
		{"metrics", "/metrics"},
	}
	for _, tt := range pages {
		t.Run("not on "+tt.name, func(t *testing.T) {
			if got, _ := get(t, ts.URL+tt.path+"?tkn="+url.QueryEscape(ownerToken)); got != http.StatusUnauthorized {
				t.Errorf("GET %s?tkn=<owner token>: %d, want 401", tt.path, got)
			}
		})
	}
	t.Run("not for login", func(t *testing.T) {
		resp := request(t, "POST", ts.URL+"/auth/login?tkn="+url.QueryEscape(ownerToken), `{}`, "Content-Type", "application/json")
		if resp.StatusCode == http.StatusOK {
			t.Errorf("POST /auth/login?tkn=<owner token> with no body token: 200, want a refusal")
		}
	})
	t.Run("counted by the failed-credential limiter", func(t *testing.T) {
		codes := map[string]int{}
		for i := range 12 {
			codes[dialStatus(fmt.Sprintf("tkn=wrong-%02d", i), "X-Forwarded-For", "10.9.0.1")]++
		}
		if codes["401"] != 10 || codes["429"] != 2 {
			t.Errorf("12 wrong ?tkn= from one address: %v, want 10×401 then 2×429", codes)
		}
	})
	t.Run("never logged", func(t *testing.T) {
		for _, secret := range []string{ownerToken, shareTok, "wrong-query-token", "wrong-03"} {
			if strings.Contains(logs.String(), secret) {
				t.Errorf("server logs contain the query token %q:\n%s", secret, logs.String())
			}
		}
	})
}

// A terminal URI of the client's choosing is kept verbatim in the
// catalogue, pages, share links; unknown → -32008, malformed or reserved →
// -32602.
func TestClientChosenTerminalURIs(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	const uri = "agenthost-terminal:/0b1e2c3d-1111-4222-8333-444455556666"
	claim := map[string]any{"kind": "client", "clientId": "owner"}
	owner.MustCall(ahp.MethodCreateTerminal, map[string]any{"channel": uri, "claim": claim})
	snap := owner.Subscribe(uri)
	if snap.Resource != uri {
		t.Errorf("subscribe snapshot resource %q, want %q", snap.Resource, uri)
	}
	owner.WaitAction("catalogue with the URI verbatim", func(e ahp.Envelope) bool {
		for _, in := range e.Action.Terminals {
			if in.Resource == uri {
				return true
			}
		}
		return false
	})

	errs := []struct {
		name, method, channel string
		code                  int
	}{
		{"subscribe unknown", ahp.MethodSubscribe, "agenthost-terminal:/nope", ahp.CodeNotFound},
		{"subscribe opaque unknown", ahp.MethodSubscribe, "urn:uuid:0b1e", ahp.CodeNotFound},
		{"subscribe reserved chat", ahp.MethodSubscribe, "ahp-chat:/s/c", ahp.CodeInvalidParams},
		{"subscribe reserved session", ahp.MethodSubscribe, "ahp-session:/s", ahp.CodeInvalidParams},
		{"subscribe malformed", ahp.MethodSubscribe, "not a uri", ahp.CodeInvalidParams},
		{"subscribe relative", ahp.MethodSubscribe, "0b1e", ahp.CodeInvalidParams},
		{"create in use", ahp.MethodCreateTerminal, uri, ahp.CodeAlreadyExists},
		{"create file", ahp.MethodCreateTerminal, "file:///tmp", ahp.CodeInvalidParams},
		{"create reserved", ahp.MethodCreateTerminal, "ahp-future:/x", ahp.CodeInvalidParams},
		{"dispose unknown", ahp.MethodDisposeTerminal, "agenthost-terminal:/nope", ahp.CodeNotFound},
		{"dispose reserved", ahp.MethodDisposeTerminal, "ahp-session:/s", ahp.CodeInvalidParams},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			owner.CallErr(tt.method, map[string]any{"channel": tt.channel, "claim": claim}, tt.code)
		})
	}

	t.Run("pages", func(t *testing.T) {
		session := sessionCookie(t, loginJSON(t, ts.URL))
		cookie := session.Name + "=" + session.Value
		wantConfig := `"terminalId":` + mustJSON(uri)
		for _, path := range []string{
			"/t/agenthost-terminal:%2F0b1e2c3d-1111-4222-8333-444455556666",   // url.PathEscape, the server's links
			"/t/agenthost-terminal%3A%2F0b1e2c3d-1111-4222-8333-444455556666", // encodeURIComponent, the app's links
		} {
			code, body := get(t, ts.URL+path, "Cookie", cookie)
			if code != http.StatusOK || !strings.Contains(body, wantConfig) {
				t.Errorf("GET %s: %d, config has %s: %v; want 200 and true", path, code, wantConfig, strings.Contains(body, wantConfig))
			}
		}
		if code, _ := get(t, ts.URL+"/t/agenthost-terminal:%2Fnope", "Cookie", cookie); code != http.StatusNotFound {
			t.Errorf("page of an unknown client URI: %d, want 404", code)
		}
	})
	t.Run("share link", func(t *testing.T) {
		res := owner.MustCall("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": "viewer"})
		var r struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatal(err)
		}
		page, tok, _ := strings.Cut(r.URL, "#share=")
		if want := "/t/agenthost-terminal:%2F0b1e2c3d-1111-4222-8333-444455556666"; !strings.HasSuffix(page, want) {
			t.Fatalf("share URL %q, want it to end in %s#share=…", r.URL, want)
		}
		login := request(t, "POST", ts.URL+"/auth/login", `{"share":"`+tok+`"}`, "Content-Type", "application/json")
		if login.StatusCode != http.StatusOK {
			t.Fatalf("share login: %d", login.StatusCode)
		}
		var shareCookie string
		for _, c := range login.Cookies() {
			shareCookie = c.Name + "=" + c.Value
		}
		if code, _ := get(t, page, "Cookie", shareCookie); code != http.StatusOK {
			t.Errorf("GET %s with the share cookie: %d, want 200", page, code)
		}
		v, err := ts.tryDial(t, "Authorization", "", "Cookie", shareCookie, "X-Test-Query", "terminal="+url.QueryEscape(uri))
		if err != nil {
			t.Fatalf("share upgrade for ?terminal=<URI>: %v", err)
		}
		v.Initialize("1.0.0", "viewer-uri", uri)
	})
	t.Run("dispose", func(t *testing.T) {
		owner.MustCall(ahp.MethodDisposeTerminal, map[string]any{"channel": uri})
		if ts.m.Exists(uri) {
			t.Errorf("%s still exists after disposeTerminal", uri)
		}
	})
}

// VS Code's desktop renderer is a page of vscode-file://vscode-app;
// --allowed-origin with that value lets it open the WebSocket.
func TestDesktopAppOrigin(t *testing.T) {
	const origin = "vscode-file://vscode-app"
	tests := []struct {
		name    string
		allowed []string
		wantOK  bool
	}{
		{"allowed", []string{"https://dev.example", origin}, true},
		{"allowed with a trailing slash", []string{origin + "/"}, true},
		{"not allowed", []string{"https://dev.example"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newServer(t, testserver.Handlers(func(c *handlersConfig) { c.AllowedOrigins = tt.allowed }))
			c, err := ts.tryDial(t, "Origin", origin)
			if (err == nil) != tt.wantOK {
				t.Fatalf("Origin %s with allowed %v: dial error %v, want ok %v", origin, tt.allowed, err, tt.wantOK)
			}
			if err != nil && !strings.Contains(err.Error(), "403") {
				t.Errorf("refused with %v, want 403", err)
			}
			if c != nil {
				c.Initialize("1.0.0", "desktop")
			}
		})
	}
}

// A VS Code-like client: create → input → output → resize →
// reconnect (socket cut) → dispose, with ?tkn=, a URI of its own scheme and
// a channel-less reconnect; every frame schema-checked by ahptest.
func TestVSCodeClient(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		name := "channel"
		if legacy {
			name = "terminal alias"
		}
		t.Run(name, func(t *testing.T) {
			ts := newServer(t)
			proxy := testserver.NewProxy(t, ts.Listener.Addr().String())
			vs := ahptest.NewVSCode(t, proxy.URL(), ownerToken, ahptest.VSCodeOptions{TerminalField: legacy})
			uri := vs.CreateTerminal(80, 24)
			if !strings.HasPrefix(uri, "agenthost-terminal:/") || !ts.m.Exists(uri) {
				t.Fatalf("created %q: exists %v", uri, ts.m.Exists(uri))
			}
			vs.Input(uri, "echo fir''st\r")
			vs.Conn().WaitOutput(uri, "first\r\n")
			vs.Resize(uri, 100, 30)

			proxy.Cut()
			res := vs.Reconnect()
			var r struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(res, &r); err != nil || (r.Type != "replay" && r.Type != "snapshot") {
				t.Fatalf("reconnect result %s: want a legacy replay or snapshot", res)
			}
			vs.Input(uri, "echo sec''ond\r")
			vs.Conn().WaitOutput(uri, "second\r\n")
			vs.Dispose(uri)
			if ts.m.Exists(uri) {
				t.Errorf("%s exists after dispose", uri)
			}
		})
	}
}

// The VS Code-like client's keepalive: a ping after silence, and a dropped
// socket (then a reconnect) when even pings get no answer.
func TestVSCodeClientKeepalive(t *testing.T) {
	ts := newServer(t)
	proxy := testserver.NewProxy(t, ts.Listener.Addr().String())
	vs := ahptest.NewVSCode(t, proxy.URL(), ownerToken, ahptest.VSCodeOptions{PingAfter: 200 * time.Millisecond, DropAfter: 3 * time.Second})
	c := vs.Conn()
	c.NextFrame("a ping answer after silence", func(m *ahp.Message) bool {
		return m.Method == "" && m.Error == nil && string(m.Result) == "null"
	})
	proxy.Freeze()
	c.WaitClosed() // the client gave up on the frozen network by itself
	proxy.Resume()
	proxy.Cut()
	vs.Reconnect()
	vs.Conn().MustCall(ahp.MethodPing, map[string]any{"channel": ahp.RootURI})
}
