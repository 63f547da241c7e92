package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers/hosts"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// fetch GETs url with the header given as name, value pairs.
func fetch(t *testing.T, c *http.Client, u string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, strings.TrimSpace(string(b))
}

// TestWhoami: /api/whoami names the credential's holder and role, or says
// 401 with this host's login URL; only an allowed origin may read it
// across origins, and no other origin is ever echoed back.
func TestWhoami(t *testing.T) {
	ts := newServer(t, testserver.Handlers(func(c *handlersConfig) {
		c.AllowedOrigins = []string{"https://home.example"}
		c.PublicURL = "https://box2.example/term"
	}))
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("who", "owner", nil)
	res := owner.MustCall("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": "driver", "label": "bob"})
	var link struct{ URL string }
	if err := json.Unmarshal(res, &link); err != nil {
		t.Fatal(err)
	}
	_, shareTok, _ := strings.Cut(link.URL, "#share=")

	c := http.DefaultClient
	resp, body := fetch(t, c, ts.URL+"/api/whoami", "Authorization", "Bearer "+ownerToken, "Origin", "https://home.example")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"name":"owner"`) || !strings.Contains(body, `"role":"owner"`) {
		t.Errorf("owner's whoami = %d %s", resp.StatusCode, body)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://home.example" || resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("allowed origin's CORS headers = %v", resp.Header)
	}
	resp, body = fetch(t, c, ts.URL+"/api/whoami", "Authorization", "Bearer "+shareTok)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"name":"bob"`) || !strings.Contains(body, `"role":"driver"`) {
		t.Errorf("a driver link's whoami = %d %s", resp.StatusCode, body)
	}
	for _, cred := range []string{"", "Bearer wrong-token"} {
		resp, body = fetch(t, c, ts.URL+"/api/whoami", "Authorization", cred, "Origin", "https://evil.example")
		if resp.StatusCode != http.StatusUnauthorized || body != `{"login":"https://box2.example/term/"}` {
			t.Errorf("whoami with %q = %d %s, want 401 with the login URL", cred, resp.StatusCode, body)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("an origin not allowed got Access-Control-Allow-Origin %q", got)
		}
	}
}

// TestRecordingReadAcrossOrigins: a workbench on another host's page (an
// allowed origin) may read this host's recording of a terminal, to replay
// it; any other origin gets no CORS header, so its page cannot.
func TestRecordingReadAcrossOrigins(t *testing.T) {
	ts := newServer(t, testserver.Handlers(func(c *handlersConfig) {
		c.AllowedOrigins = []string{"https://home.example"}
	}), testserver.Terminals(func(c *terminals.Config) { c.RecordDir = t.TempDir() }))
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	owner.CreateTerminal("rec", "owner", map[string]any{"_meta": map[string]any{"termhost/record": true}})
	waitDownload(t, ts.URL+"/t/rec/recording.cast", ownerToken, func(d download) bool { return d.status == http.StatusOK })
	for _, tc := range []struct{ origin, want string }{
		{"https://home.example", "https://home.example"},
		{"https://evil.example", ""},
	} {
		resp, body := fetch(t, http.DefaultClient, ts.URL+"/t/rec/recording.cast", "Authorization", "Bearer "+ownerToken, "Origin", tc.origin)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, `{"version":2`) {
			t.Fatalf("recording from %s: %d %.80s", tc.origin, resp.StatusCode, body)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tc.want {
			t.Errorf("recording from %s: Access-Control-Allow-Origin %q, want %q", tc.origin, got, tc.want)
		}
		if tc.want != "" && resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("recording from %s: no Access-Control-Allow-Credentials", tc.origin)
		}
	}
}

// TestWhoamiSSOSameOnTwoHosts: two hosts behind one SSO proxy, sharing one
// roles file, see the same person with the same role and name from the
// same header; a person without a role gets 403 with the login URL.
func TestWhoamiSSOSameOnTwoHosts(t *testing.T) {
	roles := filepath.Join(t.TempDir(), "roles")
	if err := os.WriteFile(roles, []byte("viewers: dave@partner.org\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	box1 := newSSOServer(t, "127.0.0.1/32", roles)
	box2 := newSSOServer(t, "127.0.0.1/32", roles)
	for _, who := range []struct{ id, name, want string }{
		{"alice@corp.com", "Alice", `{"name":"Alice","role":"owner"}`},
		{"bob@corp.com", "", `{"name":"bob@corp.com","role":"driver"}`},
		{"dave@partner.org", "Dave D", `{"name":"Dave D","role":"viewer"}`},
	} {
		var got []string
		for _, box := range []*ssoServer{box1, box2} {
			resp, body := fetch(t, http.DefaultClient, box.URL+"/api/whoami", idHeader, who.id, "X-Forwarded-User", who.name)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s on %s: %d %s", who.id, box.URL, resp.StatusCode, body)
			}
			got = append(got, body)
		}
		if got[0] != got[1] || !strings.Contains(got[0], `"role":`) {
			t.Errorf("%s: box1 says %s, box2 %s; want the same", who.id, got[0], got[1])
		}
		var w struct{ Name, Role string }
		_ = json.Unmarshal([]byte(got[0]), &w)
		if `{"name":"`+w.Name+`","role":"`+w.Role+`"}` != who.want {
			t.Errorf("%s: whoami %s, want %s", who.id, got[0], who.want)
		}
	}
	for _, box := range []*ssoServer{box1, box2} {
		resp, body := fetch(t, http.DefaultClient, box.URL+"/api/whoami", idHeader, "mallory@elsewhere.net")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `"login":"`+box.URL+`/"`) {
			t.Errorf("a person without a role: %d %s, want 403 with the login URL", resp.StatusCode, body)
		}
	}
}

// TestCookiesStayOnTheirBox: two hosts under one origin at /box1/ and
// /box2/ (a reverse proxy in front, as nginx does it): signing in to each
// gives a cookie scoped to its path, which the browser (a cookie jar)
// sends to that host alone, and each host sees only its own.
func TestCookiesStayOnTheirBox(t *testing.T) {
	box1 := testserver.New(t, testserver.BasePath("/box1"), testserver.Token("box1-owner-token"))
	box2 := testserver.New(t, testserver.BasePath("/box2"), testserver.Token("box2-owner-token"))
	var mu sync.Mutex
	seen := map[string][]string{} // box → the Cookie headers it got
	proxy := httptestProxy(t, func(r *http.Request) string {
		for _, box := range []struct {
			name string
			s    *testserver.Server
		}{{"box1", box1}, {"box2", box2}} {
			if strings.HasPrefix(r.URL.Path, "/"+box.name+"/") {
				mu.Lock()
				seen[box.name] = append(seen[box.name], r.Header.Values("Cookie")...)
				mu.Unlock()
				return box.s.URL
			}
		}
		return ""
	})
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	for _, box := range []string{"box1", "box2"} {
		req, _ := http.NewRequest("POST", proxy+"/"+box+"/auth/login", strings.NewReader(`{"token":"`+box+`-owner-token"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", proxy)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("sign in to %s: %d", box, resp.StatusCode)
		}
	}
	for _, box := range []string{"box1", "box2"} {
		u, _ := url.Parse(proxy + "/" + box + "/")
		if n := len(jar.Cookies(u)); n != 1 {
			t.Errorf("the jar sends %d cookies to /%s/, want its own one", n, box)
		}
		resp, body := fetch(t, c, proxy+"/"+box+"/api/whoami")
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"role":"owner"`) {
			t.Errorf("%s's whoami with its cookie = %d %s", box, resp.StatusCode, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen["box1"]) == 0 || len(seen["box2"]) == 0 {
		t.Fatalf("cookies seen: %v", seen)
	}
	// Each box's cookie names carry a suffix of their own: one box's
	// cookie never reaches the other.
	for _, h := range seen["box1"] {
		for _, other := range seen["box2"] {
			for _, kv := range strings.Split(other, "; ") {
				if strings.Contains(h, kv) {
					t.Errorf("box1 got box2's cookie %q", kv)
				}
			}
		}
	}
}

// httptestProxy is a reverse proxy on loopback that sends each request,
// path unchanged, to the server route names ("": 404).
func httptestProxy(t *testing.T, route func(*http.Request) string) string {
	t.Helper()
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		target, _ := url.Parse(route(pr.In))
		pr.SetURL(target)
		pr.Out.Host = pr.In.Host
	}}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if route(r) == "" {
			http.NotFound(w, r)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// TestHostsInContentSecurityPolicy: the page may connect to every host
// its server lists (their http(s) and ws(s) origins), and to no other.
func TestHostsInContentSecurityPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte("box2 https://box2.tail.ts.net/\nbox3 http://127.0.0.1:7682/term/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := hosts.Open(path, "box1", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, testserver.Handlers(func(c *handlersConfig) { c.Hosts = list }))
	resp, _ := fetch(t, http.DefaultClient, ts.URL+"/", "Authorization", "Bearer "+ownerToken)
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "connect-src 'self' https://box2.tail.ts.net wss://box2.tail.ts.net http://127.0.0.1:7682 ws://127.0.0.1:7682;") {
		t.Errorf("Content-Security-Policy %q does not let the page reach the hosts", csp)
	}
	if err := os.WriteFile(path, []byte("box2 https://box2.tail.ts.net/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	if err := list.Reload(); err != nil {
		t.Fatal(err)
	}
	m := owner.NextFrame("the new host list", func(m *ahp.Message) bool { return m.Method == "x-termhost/hosts" })
	if string(m.Params) != `{"home":{"name":"box1"},"hosts":[{"name":"box2","url":"https://box2.tail.ts.net/"}]}` {
		t.Errorf("x-termhost/hosts %s", m.Params)
	}
	resp, _ = fetch(t, http.DefaultClient, ts.URL+"/", "Authorization", "Bearer "+ownerToken)
	if csp := resp.Header.Get("Content-Security-Policy"); strings.Contains(csp, "7682") || !strings.Contains(csp, "wss://box2.tail.ts.net") {
		t.Errorf("after box3 left the list: Content-Security-Policy %q", csp)
	}
}

// TestHostsForSSORoles: behind the SSO proxy, anyone whose role reaches
// every terminal may list the hosts (a viewer too); a person without a
// role gets 403, a request naming nobody 401.
func TestHostsForSSORoles(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	for _, tc := range []struct {
		id   string
		want int
	}{
		{"alice@corp.com", http.StatusOK},
		{"bob@corp.com", http.StatusOK},
		{"carol@partner.org", http.StatusOK},
		{"mallory@elsewhere.net", http.StatusForbidden},
		{"", http.StatusUnauthorized},
	} {
		resp, body := fetch(t, http.DefaultClient, s.URL+"/api/hosts", idHeader, tc.id)
		if resp.StatusCode != tc.want {
			t.Errorf("GET /api/hosts as %q = %d %s, want %d", tc.id, resp.StatusCode, body, tc.want)
		}
		if tc.want == http.StatusOK && !strings.HasSuffix(body, `"hosts":[]}`) {
			t.Errorf("GET /api/hosts as %q = %s, want no hosts", tc.id, body)
		}
	}
}
