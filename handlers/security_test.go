package handlers_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers"
)

// request sends one HTTP request; headers are name, value pairs.
func request(t *testing.T, method, url, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
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
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

const ownerLogin = `{"token":"` + ownerToken + `"}`

func loginJSON(t *testing.T, base string) *http.Response {
	t.Helper()
	return request(t, "POST", base+"/auth/login", ownerLogin, "Content-Type", "application/json")
}

func sessionCookie(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range resp.Cookies() {
		if strings.HasPrefix(c.Name, "termhost_session_") {
			return c
		}
	}
	t.Fatalf("login %d set no session cookie: %v", resp.StatusCode, resp.Cookies())
	return nil
}

func trustLoopbackProxy(_ *terminalsConfig, hc *handlersConfig) {
	hc.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
}

// Without authentication only loopback Host names are served (DNS
// rebinding), and a proxy setup is refused.
func TestNoAuthServesOnlyLoopbackHosts(t *testing.T) {
	ts := newServer(t, func(_ *terminalsConfig, hc *handlersConfig) { hc.NoAuth, hc.OwnerToken = true, "" })
	serve := func(method, path, host string) int {
		req := httptest.NewRequest(method, path, strings.NewReader(ownerLogin))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		ts.srv.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, host := range []string{"evil.example", "evil.example:7681", "127.0.0.1.nip.io:7681", "192.168.1.5:7681", "[fe80::1]:7681", ""} {
		for _, target := range []struct{ method, path string }{{"GET", "/"}, {"GET", "/ws"}, {"POST", "/auth/login"}, {"POST", "/auth/logout"}, {"GET", "/metrics"}, {"GET", "/t/x"}} {
			t.Run(host+target.path, func(t *testing.T) {
				if got := serve(target.method, target.path, host); got != http.StatusForbidden {
					t.Errorf("%s %s with Host %q: %d, want 403", target.method, target.path, host, got)
				}
			})
		}
	}
	for _, host := range []string{"localhost", "LocalHost:7681", "127.0.0.1:7681", "127.1.2.3", "[::1]:7681", "[::1]"} {
		t.Run(host, func(t *testing.T) {
			if got := serve("GET", "/", host); got != http.StatusOK {
				t.Errorf("GET / with Host %q: %d, want 200", host, got)
			}
		})
	}
	for name, cfg := range map[string]handlers.Config{
		"public URL":    {NoAuth: true, PublicURL: "https://dev.example"},
		"trusted proxy": {NoAuth: true, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
	} {
		t.Run("refused with "+name, func(t *testing.T) {
			cfg.Manager = ts.m
			if srv, err := handlers.New(cfg); err == nil {
				srv.Close()
				t.Errorf("handlers.New(NoAuth with %s) succeeded, want an error", name)
			}
		})
	}
}

// Secure follows the public URL; two servers on one host name keep
// separate cookies.
func TestCookieSecureAndPerServerNames(t *testing.T) {
	cases := []struct {
		name    string
		opt     serverOption
		headers []string
		secure  bool
	}{
		{"https public URL over plain HTTP", func(_ *terminalsConfig, hc *handlersConfig) { hc.PublicURL = "https://dev.example/" }, nil, true},
		{"http public URL", func(_ *terminalsConfig, hc *handlersConfig) { hc.PublicURL = "http://dev.example" }, nil, false},
		{"no public URL, plain HTTP", func(*terminalsConfig, *handlersConfig) {}, nil, false},
		{"trusted proxy says https", trustLoopbackProxy, []string{"X-Forwarded-Proto", "https"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := newServer(t, tc.opt)
			resp := request(t, "POST", ts.URL+"/auth/login", ownerLogin, append([]string{"Content-Type", "application/json"}, tc.headers...)...)
			if c := sessionCookie(t, resp); c.Secure != tc.secure {
				t.Errorf("cookie %s: Secure=%v, want %v", c.Name, c.Secure, tc.secure)
			}
		})
	}

	t.Run("two servers on one host", func(t *testing.T) {
		a, b := newServer(t), newServer(t)
		jar, _ := cookiejar.New(nil) // like a browser: cookies are per host name, not per port
		browser := &http.Client{Jar: jar}
		defer browser.CloseIdleConnections()
		status := func(method, url string) int {
			req, _ := http.NewRequest(method, url, strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			resp, err := browser.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		names := map[string]bool{}
		for _, ts := range []*testServer{a, b} {
			resp, err := browser.Post(ts.URL+"/auth/login", "application/json", strings.NewReader(ownerLogin))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			names[sessionCookie(t, resp).Name] = true
		}
		if len(names) != 2 {
			t.Errorf("cookie names %v: want one per server", names)
		}
		if got := status("GET", a.URL+"/"); got != 200 {
			t.Errorf("first server after signing in to the second: %d, want 200", got)
		}
		if got := status("POST", b.URL+"/auth/logout"); got != 204 {
			t.Fatalf("logout: %d", got)
		}
		if got, other := status("GET", b.URL+"/"), status("GET", a.URL+"/"); got != 401 || other != 200 {
			t.Errorf("after signing out of the second: second %d (want 401), first %d (want 200)", got, other)
		}
	})
}

// Sign-in and sign-out refuse what another site's page could send.
func TestLoginAndLogoutRequireSameOriginJSON(t *testing.T) {
	ts := newServer(t)
	jsonCT := []string{"Content-Type", "application/json"}
	cases := []struct {
		name    string
		headers []string
		want    int
	}{
		{"text/plain form post", []string{"Content-Type", "text/plain", "Origin", ts.URL}, 403},
		{"urlencoded form post", []string{"Content-Type", "application/x-www-form-urlencoded"}, 403},
		{"no content type", nil, 403},
		{"cross-site Origin", append([]string{"Origin", "https://evil.example"}, jsonCT...), 403},
		{"Sec-Fetch-Site cross-site", append([]string{"Sec-Fetch-Site", "cross-site", "Origin", ts.URL}, jsonCT...), 403},
		{"Sec-Fetch-Site same-site", append([]string{"Sec-Fetch-Site", "same-site"}, jsonCT...), 403},
		{"same-origin fetch", append([]string{"Sec-Fetch-Site", "same-origin", "Origin", ts.URL}, jsonCT...), 200},
		{"same-origin Origin only", append([]string{"Origin", ts.URL}, jsonCT...), 200},
		{"JSON with a charset, not from a browser", []string{"Content-Type", "application/json; charset=utf-8"}, 200},
	}
	for _, tc := range cases {
		t.Run("login "+tc.name, func(t *testing.T) {
			resp := request(t, "POST", ts.URL+"/auth/login", ownerLogin, tc.headers...)
			if resp.StatusCode != tc.want {
				t.Errorf("login with %v: %d, want %d", tc.headers, resp.StatusCode, tc.want)
			}
			if tc.want == 403 && len(resp.Cookies()) > 0 {
				t.Errorf("refused login set cookies %v", resp.Cookies())
			}
		})
	}
	session := sessionCookie(t, loginJSON(t, ts.URL))
	signedIn := func() bool {
		return request(t, "GET", ts.URL+"/", "", "Cookie", session.Name+"="+session.Value).StatusCode == 200
	}
	for _, tc := range cases {
		t.Run("logout "+tc.name, func(t *testing.T) {
			if tc.want != 403 {
				return
			}
			resp := request(t, "POST", ts.URL+"/auth/logout", "{}", append([]string{"Cookie", session.Name + "=" + session.Value}, tc.headers...)...)
			if resp.StatusCode != 403 || !signedIn() {
				t.Errorf("logout with %v: %d, signed in %v; want 403 and still signed in", tc.headers, resp.StatusCode, signedIn())
			}
		})
	}
	resp := request(t, "POST", ts.URL+"/auth/logout", "{}", append([]string{"Cookie", session.Name + "=" + session.Value,
		"Sec-Fetch-Site", "same-origin", "Origin", ts.URL}, jsonCT...)...)
	if resp.StatusCode != 204 || signedIn() {
		t.Errorf("same-origin logout: %d, signed in %v; want 204 and signed out", resp.StatusCode, signedIn())
	}
}

// Every failed credential counts against the address the trusted
// proxy saw; the limit answers 429 with Retry-After and spares other addresses.
func TestFailedCredentialsAreRateLimited(t *testing.T) {
	ts := newServer(t, trustLoopbackProxy)
	dialStatus := func(token, xff string) string {
		return ts.dialStatus(t, "Authorization", "Bearer "+token, "X-Forwarded-For", xff)
	}
	codes := map[string]int{}
	for i := range 20 {
		codes[dialStatus(fmt.Sprintf("wrong-token-%02d", i), "10.0.0.1")]++
	}
	if codes["401"] != 10 || codes["429"] != 10 {
		t.Errorf("20 bad bearers on /ws from one address: %v, want 10×401 then 10×429", codes)
	}
	t.Run("rotating X-Forwarded-For", func(t *testing.T) {
		for i := range 5 {
			// The client sent the left entry; the proxy appended the address it saw.
			if got := dialStatus("wrong-token", fmt.Sprintf("198.51.100.%d, 10.0.0.1", i)); got != "429" {
				t.Errorf("bad bearer with a rotated X-Forwarded-For: %s, want 429", got)
			}
		}
		resp := request(t, "GET", ts.URL+"/metrics", "", "Authorization", "Bearer wrong", "X-Forwarded-For", "203.0.113.9", "X-Forwarded-For", "10.0.0.1")
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
			t.Errorf("/metrics from the limited address via a second X-Forwarded-For line: %d, Retry-After %q; want 429 with Retry-After",
				resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	})
	t.Run("correct token from another address", func(t *testing.T) {
		if got := dialStatus(ownerToken, "10.0.0.2"); got != "ok" {
			t.Errorf("owner token from 10.0.0.2 while 10.0.0.1 is limited: %s, want ok", got)
		}
		if got := request(t, "GET", ts.URL+"/metrics", "", "Authorization", "Bearer "+ownerToken, "X-Forwarded-For", "10.0.0.2").StatusCode; got != 200 {
			t.Errorf("/metrics with the owner token from 10.0.0.2: %d, want 200", got)
		}
	})
	t.Run("bad bearers on /metrics", func(t *testing.T) {
		codes := map[int]int{}
		for range 11 {
			codes[request(t, "GET", ts.URL+"/metrics", "", "Authorization", "Bearer wrong", "X-Forwarded-For", "10.0.0.3").StatusCode]++
		}
		if codes[401] != 10 || codes[429] != 1 {
			t.Errorf("11 bad bearers on /metrics: %v, want 10×401 then 429", codes)
		}
	})
	t.Run("a revoked link retried is not a guess", func(t *testing.T) {
		owner := ts.dial(t)
		owner.Initialize("1.0.0", "owner")
		uri, _ := owner.CreateTerminal("revoked", "owner", nil)
		id, tok := share(t, owner, uri, "viewer", 0)
		owner.MustCall("x-share/revoke", map[string]any{"channel": ahp.RootURI, "id": id})
		for i := range 15 {
			if got := dialStatus(tok, "10.0.0.5"); got != "401" {
				t.Fatalf("revoked link, attempt %d: %s, want 401", i+1, got)
			}
		}
		if got := dialStatus(ownerToken, "10.0.0.5"); got != "ok" {
			t.Errorf("owner token from the address retrying a revoked link: %s, want ok", got)
		}
	})
	t.Run("a stale cookie counts once and is dropped", func(t *testing.T) {
		session := sessionCookie(t, loginJSON(t, ts.URL))
		resp := request(t, "GET", ts.URL+"/", "", "Cookie", session.Name+"=forged", "X-Forwarded-For", "10.0.0.4")
		var dropped bool
		for _, c := range resp.Cookies() {
			dropped = dropped || (c.Name == session.Name && c.MaxAge < 0)
		}
		if resp.StatusCode != 401 || !dropped {
			t.Errorf("page with a forged session cookie: %d, cookies %v; want 401 and the cookie dropped", resp.StatusCode, resp.Cookies())
		}
	})
}

// Behind a trusted proxy, a configured public origin is the only
// browser origin; a forwarded Host does not widen it.
func TestUpgradeOriginMatchesPublicURLBehindProxy(t *testing.T) {
	configs := map[string]serverOption{
		"public URL": func(tc *terminalsConfig, hc *handlersConfig) {
			trustLoopbackProxy(tc, hc)
			hc.PublicURL = "https://dev.example/term"
		},
		"allowed origin": func(tc *terminalsConfig, hc *handlersConfig) {
			trustLoopbackProxy(tc, hc)
			hc.AllowedOrigins = []string{"https://dev.example"}
		},
	}
	for name, opt := range configs {
		t.Run(name, func(t *testing.T) {
			ts := newServer(t, opt)
			forwarded := func(host string) []string {
				return []string{"Origin", "https://" + host, "X-Forwarded-Host", host, "X-Forwarded-Proto", "https"}
			}
			if _, err := ts.tryDial(t, forwarded("evil.example")...); err == nil || !strings.Contains(err.Error(), "403") {
				t.Errorf("Origin equal to the forwarded Host evil.example: err %v, want 403", err)
			}
			c, err := ts.tryDial(t, forwarded("dev.example")...)
			if err != nil {
				t.Fatalf("Origin of the public URL: %v, want accepted", err)
			}
			c.Conn().CloseNow()
		})
	}
}

// Security headers on every page; HSTS only for an https public URL.
func TestSecurityHeaders(t *testing.T) {
	const csp = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
		"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
	for _, public := range []string{"", "https://dev.example"} {
		t.Run("public URL "+public, func(t *testing.T) {
			ts := newServer(t, func(_ *terminalsConfig, hc *handlersConfig) { hc.PublicURL = public })
			for _, target := range []struct{ path, auth string }{{"/", ""}, {"/", ownerToken}, {"/t/none", ""}, {"/static/dist/app.js", ""}, {"/healthz", ""}} {
				headers := []string{}
				if target.auth != "" {
					headers = []string{"Authorization", "Bearer " + target.auth}
				}
				h := request(t, "GET", ts.URL+target.path, "", headers...).Header
				want := map[string]string{"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff",
					"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Strict-Transport-Security": ""}
				if public != "" {
					want["Strict-Transport-Security"] = "max-age=31536000"
				}
				for name, v := range want {
					if got := h.Get(name); got != v {
						t.Errorf("GET %s (auth %v): %s = %q, want %q", target.path, target.auth != "", name, got, v)
					}
				}
			}
		})
	}
}

// Source maps only for the owner.
func TestSourceMapsOnlyForOwner(t *testing.T) {
	ts := newServer(t)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("maps", "owner", nil)
	_, viewerTok := share(t, owner, uri, "viewer", 0)
	_, driverTok := share(t, owner, uri, "driver", 0)
	cases := []struct {
		name, path, token string
		want              int
	}{
		{"anonymous map", "/static/dist/app.js.map", "", 404},
		{"viewer map", "/static/dist/app.js.map", viewerTok, 404},
		{"driver map", "/static/dist/app.js.map", driverTok, 404},
		{"owner map", "/static/dist/app.js.map", ownerToken, 200},
		{"anonymous bundle", "/static/dist/app.js", "", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.token != "" {
				headers = []string{"Authorization", "Bearer " + tc.token}
			}
			if got := request(t, "GET", ts.URL+tc.path, "", headers...).StatusCode; got != tc.want {
				t.Errorf("GET %s: %d, want %d", tc.path, got, tc.want)
			}
		})
	}
}
