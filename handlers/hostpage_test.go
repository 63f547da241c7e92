package handlers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
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
