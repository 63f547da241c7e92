package handlers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/testserver"
)

// metric returns the value of one Prometheus series from /metrics.
func (ts *testServer) metric(t *testing.T, series string) float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+ownerToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			fmt.Sscan(rest, &v)
			return v
		}
	}
	return 0
}

// share creates a share link through the owner's x-share/create.
func share(t *testing.T, owner *client, uri, role string, ttl int) (id, token string) {
	t.Helper()
	res := owner.MustCall("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": role, "ttlSeconds": ttl})
	var r struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	_, token, _ = strings.Cut(r.URL, "#share=")
	if token == "" || !strings.Contains(r.URL, "/t/") {
		t.Fatalf("share url %q", r.URL)
	}
	return r.ID, token
}

func TestUpgradeNeedsCredentials(t *testing.T) {
	clk := handlers.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	ts := newServer(t, testserver.Handlers(func(c *handlers.Config) { c.UseClock(clk) }))
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("sec", "owner", nil)
	_, expiredTok := share(t, owner, uri, "viewer", 1)
	revokedID, revokedTok := share(t, owner, uri, "viewer", 0)
	owner.MustCall("x-share/revoke", map[string]any{"channel": ahp.RootURI, "id": revokedID})
	clk.Advance(1100 * time.Millisecond) // the 1 s link expires
	// The server's real cookie names (they carry a per-server suffix), so the
	// cookie cases test a forged value, not an unknown name.
	ownerName := ownerCookieName(t, ts)
	shareName := strings.Replace(ownerName, "termhost_session_", "termhost_share_", 1) + "_" + revokedID

	cases := []struct {
		name    string
		headers []string
		status  int
	}{
		{"no credentials", []string{"Authorization", ""}, http.StatusUnauthorized},
		{"wrong token", []string{"Authorization", "Bearer wrong-token-wrong-token"}, http.StatusUnauthorized},
		{"not bearer", []string{"Authorization", "Basic " + ownerToken}, http.StatusUnauthorized},
		{"expired share", []string{"Authorization", "Bearer " + expiredTok}, http.StatusUnauthorized},
		{"revoked share", []string{"Authorization", "Bearer " + revokedTok}, http.StatusUnauthorized},
		{"revoked share cookie", []string{"Authorization", "", "Cookie", shareName + "=" + revokedTok}, http.StatusUnauthorized},
		{"forged session cookie", []string{"Authorization", "", "Cookie", ownerName + "=abc"}, http.StatusUnauthorized},
		{"foreign origin with the owner token", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"null origin", []string{"Origin", "null"}, http.StatusForbidden},
	}
	before := ts.metric(t, `termhost_auth_failures_total{reason="unauthenticated"}`) + ts.metric(t, `termhost_auth_failures_total{reason="origin"}`)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ts.tryDial(t, tc.headers...)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprint(tc.status)) {
				t.Fatalf("upgrade: err %v, want HTTP %d", err, tc.status)
			}
		})
	}
	after := ts.metric(t, `termhost_auth_failures_total{reason="unauthenticated"}`) + ts.metric(t, `termhost_auth_failures_total{reason="origin"}`)
	if after-before != float64(len(cases)) {
		t.Errorf("auth failures counted %v, want %d", after-before, len(cases))
	}
	// Nothing reached the shell.
	if st := owner.Subscribe(uri).State.(ahp.TerminalState); st.Lifecycle.Exited() {
		t.Errorf("terminal harmed: %+v", st.Lifecycle)
	}
}

// TestViewerCannotChangeAnything: a viewer link dispatching every client
// action and calling every mutating command is refused, the state does not
// change and the refusals are counted.
func TestViewerCannotChangeAnything(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("shared", "owner", map[string]any{"name": "build"})
	other, _ := owner.CreateTerminal("private", "owner", map[string]any{"name": "secret"})
	_, tok := share(t, owner, uri, "viewer", 3600)
	before := owner.Subscribe(uri).State.(ahp.TerminalState)

	v := ts.dial(t, "Authorization", "Bearer "+tok)
	init := v.Initialize("1.0.0", "viewer")
	rootState := init["snapshots"].([]any)[0].(map[string]any)["state"].(map[string]any)
	if list := rootState["terminals"].([]any); len(list) != 1 || list[0].(map[string]any)["resource"] != uri {
		t.Errorf("viewer's catalogue = %v, want only %s", list, uri)
	}
	v.Subscribe(uri)
	v.CallErr("subscribe", map[string]any{"channel": other}, ahp.CodeNotFound)
	v.CallErr("createTerminal", map[string]any{"channel": "ahp-terminal:/mine", "claim": map[string]any{"kind": "client", "clientId": "viewer"}}, ahp.CodePermissionDenied)
	v.CallErr("disposeTerminal", map[string]any{"channel": uri}, ahp.CodePermissionDenied)
	v.CallErr("disposeTerminal", map[string]any{"channel": other}, ahp.CodePermissionDenied)
	v.CallErr("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": "driver"}, ahp.CodePermissionDenied)
	v.CallErr("x-share/list", map[string]any{"channel": ahp.RootURI}, ahp.CodePermissionDenied)

	actions := []map[string]any{
		{"type": "terminal/input", "data": "touch /tmp/owned\r"},
		{"type": "terminal/resized", "cols": 10, "rows": 5},
		{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "viewer"}},
		{"type": "terminal/titleChanged", "title": "pwned"},
		{"type": "terminal/cleared"},
	}
	for _, a := range actions {
		seq := v.Dispatch(uri, a)
		rej := v.WaitAction("rejection", func(e ahp.Envelope) bool {
			return e.RejectionReason != "" && e.Origin != nil && e.Origin.ClientSeq == seq
		})
		if !strings.HasPrefix(rej.RejectionReason, "view only") {
			t.Errorf("%s: reason %q", a["type"], rej.RejectionReason)
		}
	}
	// Dispatches to a terminal it cannot see vanish silently.
	v.Dispatch(other, map[string]any{"type": "terminal/input", "data": "echo leaked\r"})
	v.SetNextID(100)
	v.MustCall("ping", map[string]any{"channel": ahp.RootURI})

	after := owner.Subscribe(uri).State.(ahp.TerminalState)
	if after.Title != before.Title || after.Cols != before.Cols || after.Claim != before.Claim || len(after.Content) < len(before.Content) {
		t.Errorf("state changed:\n before %+v\n after  %+v", before, after)
	}
	if strings.Contains(owner.Output(other), "leaked") {
		t.Error("input reached a terminal the viewer cannot see")
	}
	if got := ts.metric(t, `termhost_permission_denied_total{kind="dispatch"}`); got != float64(len(actions)) {
		t.Errorf("dispatch refusals counted %v, want %d", got, len(actions))
	}
	if got := ts.metric(t, `termhost_permission_denied_total{kind="command"}`); got != 5 {
		t.Errorf("command refusals counted %v, want 5", got)
	}
	// The viewer still watches live output.
	owner.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo for-$((2+3))-viewers\r"})
	v.WaitOutput(uri, "for-5-viewers")
}

func TestDriverAndRevocation(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("drive", "owner", nil)
	id, tok := share(t, owner, uri, "driver", 0)
	d := ts.dial(t, "Authorization", "Bearer "+tok)
	d.Initialize("1.0.0", "driver")
	d.Subscribe(uri)
	_, req := requestControl(t, d, uri) // the holder types: the driver asks first
	owner.MustCall("x-termhost/answerControl", map[string]any{"channel": ahp.RootURI, "terminal": uri, "requestId": req, "grant": true})
	waitNotice(t, d, "granted")
	d.Dispatch(uri, map[string]any{"type": "terminal/input", "data": "echo driven-$((3*3))\r"})
	owner.WaitOutput(uri, "driven-9")
	d.CallErr("createTerminal", map[string]any{"channel": "ahp-terminal:/d2", "claim": map[string]any{"kind": "client", "clientId": "driver"}}, ahp.CodePermissionDenied)

	list := owner.MustCall("x-share/list", map[string]any{"channel": ahp.RootURI, "terminal": uri})
	if !strings.Contains(string(list), id) || strings.Contains(string(list), tok) {
		t.Errorf("x-share/list = %s: want the id and never the token", list)
	}
	owner.MustCall("x-share/revoke", map[string]any{"channel": ahp.RootURI, "id": id})
	err := d.WaitClosed()
	if websocket.CloseStatus(err) != 4003 {
		t.Errorf("revoked driver closed with %v, want 4003", err)
	}
	owner.CallErr("x-share/revoke", map[string]any{"channel": ahp.RootURI, "id": id}, ahp.CodeNotFound)
	owner.CallErr("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": "admin"}, ahp.CodeInvalidParams)
	owner.CallErr("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": "ahp-terminal:/nope", "role": "viewer"}, ahp.CodeNotFound)
}

// ownerCookieName signs in as the owner once and returns the name of the
// session cookie the server set.
func ownerCookieName(t *testing.T, ts *testServer) string {
	t.Helper()
	resp, err := http.Post(ts.URL+"/auth/login", "application/json", strings.NewReader(`{"token":"`+ownerToken+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c := resp.Cookies()
	if resp.StatusCode != 200 || len(c) != 1 || !strings.HasPrefix(c[0].Name, "termhost_session_") {
		t.Fatalf("owner login: %d %+v", resp.StatusCode, c)
	}
	return c[0].Name
}

func TestLoginCookieAndRateLimit(t *testing.T) {
	ts := newServer(t, func(_ *terminalsConfig, hc *handlersConfig) { hc.BasePath = "/term" })
	post := func(body string) *http.Response {
		resp, err := http.Post(ts.URL+"/term/auth/login", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := post(`{"token":"` + ownerToken + `"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	c := resp.Cookies()
	if len(c) != 1 || !strings.HasPrefix(c[0].Name, "termhost_session_") || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode || c[0].Path != "/term/" {
		t.Fatalf("cookie = %+v", c)
	}
	// The cookie opens pages and the WebSocket under the base path.
	req, _ := http.NewRequest("GET", ts.URL+"/term/", nil)
	req.AddCookie(c[0])
	page, err := http.DefaultClient.Do(req)
	if err != nil || page.StatusCode != 200 {
		t.Fatalf("workbench with cookie: %v %v", page.StatusCode, err)
	}
	page.Body.Close()
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(ts.URL, "http")+"/term/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {c[0].Name + "=" + c[0].Value}}})
	if err != nil {
		t.Fatalf("ws with cookie: %v", err)
	}
	ws.CloseNow()
	if code := httpStatus(t, ts.URL+"/ws"); code != 404 {
		t.Errorf("/ws outside the base path: %d, want 404", code)
	}
	if code := httpStatus(t, ts.URL+"/term/"); code != 401 {
		t.Errorf("workbench without a session: %d, want 401 (login page)", code)
	}
	if code := httpStatus(t, ts.URL+"/term/metrics"); code != 401 {
		t.Errorf("metrics without a session: %d, want 401", code)
	}
	if code := httpStatus(t, ts.URL+"/term/healthz"); code != 200 {
		t.Errorf("healthz: %d", code)
	}
	// Failed logins are rate-limited per client.
	codes := map[int]int{}
	for range 12 {
		codes[post(`{"token":"guess-guess-guess-guess"}`).StatusCode]++
	}
	if codes[401] != 10 || codes[429] != 2 {
		t.Errorf("failed logins: %v, want 10×401 then 429", codes)
	}
	if resp := post(`{"token":"` + ownerToken + `"}`); resp.StatusCode != 429 {
		t.Errorf("right token while limited: %d, want 429", resp.StatusCode)
	}
}

func TestForwardedHeadersOnlyFromTrustedProxies(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		t.Run(fmt.Sprint("trusted=", trusted), func(t *testing.T) {
			ts := newServer(t, func(_ *terminalsConfig, hc *handlersConfig) {
				if trusted {
					hc.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
				}
			})
			owner := ts.dial(t, "X-Forwarded-Prefix", "/proxied", "X-Forwarded-Host", "dev.example", "X-Forwarded-Proto", "https")
			owner.Initialize("1.0.0", "o")
			uri, _ := owner.CreateTerminal("f", "o", nil)
			res := owner.MustCall("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": "viewer"})
			want := "https://dev.example/proxied/t/f#share="
			if got := string(res); strings.Contains(got, want) != trusted {
				t.Errorf("share URL %s: forwarded headers honoured=%v, want %v", got, !trusted, trusted)
			}
			// A page on the forwarded origin may open the socket only via a trusted proxy.
			_, err := ts.tryDial(t, "Origin", "https://dev.example", "X-Forwarded-Host", "dev.example", "X-Forwarded-Proto", "https")
			if (err == nil) != trusted {
				t.Errorf("forwarded origin accepted=%v, want %v (err %v)", err == nil, trusted, err)
			}
		})
	}
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The sign-in page answers a browser's navigation (a login or share link)
// with 200, so that a first visit logs no console error, and anything else
// (the page's access probe, curl) with 401.
func TestSignInPageStatus(t *testing.T) {
	ts := newServer(t)
	tests := []struct {
		name, fetchMode string
		want            int
	}{
		{"browser navigation", "navigate", http.StatusOK},
		{"script fetch (access probe)", "cors", http.StatusUnauthorized},
		{"no fetch metadata (curl)", "", http.StatusUnauthorized},
	}
	for _, tc := range tests {
		for _, path := range []string{"/", "/t/some-terminal"} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				req, _ := http.NewRequest("GET", ts.URL+path, nil)
				if tc.fetchMode != "" {
					req.Header.Set("Sec-Fetch-Mode", tc.fetchMode)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tc.want || !strings.Contains(string(body), `id="login"`) || strings.Contains(string(body), `id="workbench"`) {
					t.Errorf("GET %s with Sec-Fetch-Mode %q: %d, want %d with the sign-in page and no workbench", path, tc.fetchMode, resp.StatusCode, tc.want)
				}
			})
		}
	}
}
