package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers/hosts"
	"github.com/termhost/termhost/internal/testserver"
)

// /h/<host>/t/<id> is the deep link of another host's terminal: the owner
// gets the workbench's start page (its script opens that terminal on the
// other host), a visitor the sign-in page, a share link's holder its own
// terminal, and a path with a bad host name nothing.
func TestOtherHostTerminalPage(t *testing.T) {
	ts := newServer(t)
	session := sessionCookie(t, loginJSON(t, ts.URL))
	cookie := session.Name + "=" + session.Value

	t.Run("owner", func(t *testing.T) {
		code, body := get(t, ts.URL+"/h/box2/t/k2x9", "Cookie", cookie)
		if code != http.StatusOK || !strings.Contains(body, `id="workbench"`) || !strings.Contains(body, `"terminalId":""`) {
			t.Errorf("GET /h/box2/t/k2x9 as the owner: %d, workbench %v, start page %v; want 200, the workbench naming no terminal of this server",
				code, strings.Contains(body, `id="workbench"`), strings.Contains(body, `"terminalId":""`))
		}
	})
	t.Run("visitor", func(t *testing.T) {
		code, body := get(t, ts.URL+"/h/box2/t/k2x9")
		if code != http.StatusUnauthorized || !strings.Contains(body, `id="login"`) || strings.Contains(body, `id="workbench"`) {
			t.Errorf("GET /h/box2/t/k2x9 signed out: %d; want 401 with the sign-in page and no workbench", code)
		}
	})
	t.Run("bad host name", func(t *testing.T) {
		for _, path := range []string{"/h/-x/t/k2x9", "/h/a%20b/t/k2x9", "/h/box2/t/"} {
			if code, _ := get(t, ts.URL+path, "Cookie", cookie); code != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", path, code)
			}
		}
	})
	t.Run("share link", func(t *testing.T) {
		owner := ts.dial(t)
		owner.Initialize("1.0.0", "owner")
		uri := "ahp-terminal:/shared1"
		owner.MustCall(ahp.MethodCreateTerminal, map[string]any{"channel": uri, "claim": map[string]any{"kind": "client", "clientId": "owner"}})
		res := owner.MustCall("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": uri, "role": "viewer"})
		var r struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatal(err)
		}
		_, tok, _ := strings.Cut(r.URL, "#share=")
		login := request(t, "POST", ts.URL+"/auth/login", `{"share":"`+tok+`"}`, "Content-Type", "application/json")
		if login.StatusCode != http.StatusOK {
			t.Fatalf("share login: %d", login.StatusCode)
		}
		var shareCookie string
		for _, c := range login.Cookies() {
			shareCookie = c.Name + "=" + c.Value
		}
		req, _ := http.NewRequest("GET", ts.URL+"/h/box2/t/k2x9", nil)
		req.Header.Set("Cookie", shareCookie)
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasSuffix(loc, "/t/shared1") {
			t.Errorf("GET /h/box2/t/k2x9 with a share cookie: %d to %q; want 302 to the link's own terminal /t/shared1", resp.StatusCode, loc)
		}
	})
}

// pageConfig is the page's boot config (<script id="termhost-config">) as
// raw JSON fields, failing the test when the page has none.
func pageConfig(t *testing.T, body string) map[string]json.RawMessage {
	t.Helper()
	const open = `<script id="termhost-config" type="application/json">`
	_, rest, ok := strings.Cut(body, open)
	if !ok {
		t.Fatalf("no config script in the page:\n%s", body)
	}
	raw, _, ok := strings.Cut(rest, "</script>")
	if !ok {
		t.Fatalf("the config script does not end:\n%s", body)
	}
	var c map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatalf("config %q: %v", raw, err)
	}
	return c
}

// TestPageCarriesHostList: the workbench's boot config holds the host list
// (GET /api/hosts's answer), so that the page opens every host's
// WebSocket as it starts, beside its own. Whoever may list the hosts gets
// it (the owner; behind the SSO proxy a person whose role reaches every
// terminal, a viewer too); a share link's page, viewer or driver, holds no
// trace of another host. The list follows the hosts file, and a URL that
// reads "</script>" stays inside the config.
func TestPageCarriesHostList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte("box2 https://box2.tail.ts.net/\nbox3 http://127.0.0.1:7682/x/</script><b>/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := hosts.Open(path, "box1", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, testserver.Handlers(func(c *handlersConfig) { c.Hosts = list }))
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("boot1", "owner", nil)
	const want = `{"home":{"name":"box1"},"hosts":[{"name":"box2","url":"https://box2.tail.ts.net/"},{"name":"box3","url":"http://127.0.0.1:7682/x/%3C/script%3E%3Cb%3E/"}]}`

	for _, page := range []string{"/", "/t/boot1", "/h/box2/t/k2x9"} {
		code, body := get(t, ts.URL+page, "Authorization", "Bearer "+ownerToken)
		if code != http.StatusOK {
			t.Fatalf("GET %s as the owner: %d", page, code)
		}
		if got := string(pageConfig(t, body)["hosts"]); got != want {
			t.Errorf("GET %s as the owner: config hosts %s, want %s", page, got, want)
		}
		if _, api := get(t, ts.URL+"/api/hosts", "Authorization", "Bearer "+ownerToken); strings.TrimSpace(api) != want {
			t.Errorf("GET /api/hosts %s, want the same list as the page's %s", api, want)
		}
	}

	for _, role := range []string{"viewer", "driver"} {
		_, tok := share(t, owner, uri, role, 0)
		code, body := get(t, ts.URL+"/t/boot1", "Authorization", "Bearer "+tok)
		if code != http.StatusOK {
			t.Fatalf("GET /t/boot1 with a %s link: %d", role, code)
		}
		if c := pageConfig(t, body); c["hosts"] != nil || strings.Contains(body, "box2") || strings.Contains(body, "box1") {
			t.Errorf("a %s link's page names other hosts: config %v", role, c)
		}
		if code, _ := get(t, ts.URL+"/api/hosts", "Authorization", "Bearer "+tok); code != http.StatusForbidden {
			t.Errorf("GET /api/hosts with a %s link: %d, want 403 (the same rule as the page)", role, code)
		}
	}

	// The file changes: the next page has the new list, and its
	// Content-Security-Policy lets it reach exactly those hosts.
	if err := os.WriteFile(path, []byte("box4 https://box4.tail.ts.net/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := list.Reload(); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/", nil)
	req.Header.Set("Authorization", "Bearer "+ownerToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := string(pageConfig(t, string(b))["hosts"]); got != `{"home":{"name":"box1"},"hosts":[{"name":"box4","url":"https://box4.tail.ts.net/"}]}` {
		t.Errorf("after the file changed: config hosts %s", got)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' https://box4.tail.ts.net wss://box4.tail.ts.net;") {
		t.Errorf("after the file changed: Content-Security-Policy %q", csp)
	}
}

// TestPageHostListForSSORoles: behind the SSO proxy the page carries the
// host list for exactly the people GET /api/hosts answers: every role
// that reaches every terminal, a viewer too.
func TestPageHostListForSSORoles(t *testing.T) {
	s := newSSOServer(t, "127.0.0.1/32", "")
	for _, id := range []string{"alice@corp.com", "bob@corp.com", "carol@partner.org"} {
		code, body := s.get(t, "/", as(id))
		if code != http.StatusOK {
			t.Fatalf("GET / as %s: %d", id, code)
		}
		if got := string(pageConfig(t, body)["hosts"]); !strings.HasSuffix(got, `"hosts":[]}`) || !strings.HasPrefix(got, `{"home":{"name":`) {
			t.Errorf("GET / as %s: config hosts %s, want the home host and no others", id, got)
		}
	}
}
