//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/handlers/sso"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
)

// idp stands in for oauth2-proxy's endpoints: /oauth2/sign_in?as=alice&rd=/x
// signs a person in (a cookie) and redirects; /oauth2/auth answers the
// proxy's sub-request: 202 with X-Auth-Request-Email and -User for a
// signed-in person, 401 otherwise (oauth2-proxy's --set-xauthrequest).
type idp struct {
	*httptest.Server
	people map[string][2]string // cookie value → email, name
}

func newIdP(t *testing.T) *idp {
	t.Helper()
	p := &idp{people: map[string][2]string{
		"alice": {"alice@corp.com", "Alice Smith"},
		"bob":   {"bob@corp.com", "Bob Jones"},
		"eve":   {"eve@elsewhere.net", "Eve"},
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("/oauth2/sign_in", func(w http.ResponseWriter, r *http.Request) {
		as := r.URL.Query().Get("as")
		if _, ok := p.people[as]; !ok {
			http.Error(w, "who?", http.StatusBadRequest)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "_oauth2_proxy", Value: as, Path: "/", HttpOnly: true})
		rd := r.URL.Query().Get("rd")
		if !strings.HasPrefix(rd, "/") {
			rd = "/"
		}
		http.Redirect(w, r, rd, http.StatusFound)
	})
	mux.HandleFunc("/oauth2/auth", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("_oauth2_proxy")
		if err != nil {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		who, ok := p.people[c.Value]
		if !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("X-Auth-Request-Email", who[0])
		w.Header().Set("X-Auth-Request-User", who[1])
		w.WriteHeader(http.StatusAccepted)
	})
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	return p
}

func (p *idp) addr() string { return strings.TrimPrefix(p.URL, "http://") }

// ssoNginxConf is the README's oauth2-proxy + nginx auth_request setup.
var ssoNginxConf = nginxConfig("nginx-sso", `	upstream termhost { server {{.Backend}}; }
	upstream oauth2_proxy { server {{.IdP}}; }
	server {
		listen 127.0.0.1:{{.Port}};
		# From here: the README's "Behind single sign-on" nginx locations (without its sign-in redirect: refusals stay 401 here).
		location /oauth2/ {
			proxy_pass http://oauth2_proxy;
			proxy_set_header Host $host;
			proxy_set_header X-Forwarded-Proto $scheme;
		}
		location = /oauth2/auth {
			internal;
			proxy_pass http://oauth2_proxy;
			proxy_set_header Host $host;
			proxy_pass_request_body off;
			proxy_set_header Content-Length "";
		}
		location / {
			auth_request /oauth2/auth;
			auth_request_set $email $upstream_http_x_auth_request_email;
			auth_request_set $user  $upstream_http_x_auth_request_user;
			# Set, so that whatever a client sent under these names is dropped.
			proxy_set_header X-Forwarded-Email $email;
			proxy_set_header X-Forwarded-User  $user;
			proxy_set_header X-Forwarded-For   $proxy_add_x_forwarded_for;
			proxy_set_header Host $host;
			proxy_pass http://termhost;
			proxy_http_version 1.1;
			proxy_set_header Upgrade $http_upgrade;
			proxy_set_header Connection "upgrade";
			proxy_read_timeout 3600s;
			proxy_buffering off;
		}
	}
`)

// ssoCaddyfile is the README's Caddy forward_auth setup.
var ssoCaddyfile = template.Must(template.New("caddy-sso").Parse(`{
	admin off
	auto_https off
	storage file_system {{.Dir}}/data
}
http://127.0.0.1:{{.Port}} {
	# From here: the README's "Behind single sign-on" Caddy site block.
	handle /oauth2/* {
		reverse_proxy {{.IdP}}
	}
	handle {
		route {
			# Drop what a client sent under the identity names, then let
			# forward_auth set them from oauth2-proxy's answer.
			request_header -X-Forwarded-Email
			request_header -X-Forwarded-User
			forward_auth {{.IdP}} {
				uri /oauth2/auth
				copy_headers X-Auth-Request-Email>X-Forwarded-Email X-Auth-Request-User>X-Forwarded-User
			}
			reverse_proxy {{.Backend}}
		}
	}
}
`))

// caddyPath finds caddy; a missing caddy fails the test (.ci/deps installs it).
func caddyPath(t *testing.T) string {
	t.Helper()
	return toolPath(t, "caddy", "TERMHOST_CADDY", "/usr/bin/caddy", "caddy")
}

// startCaddy runs caddy with the Caddyfile tmpl renders from data plus Dir
// and Port, until the test ends.
func startCaddy(t *testing.T, tmpl *template.Template, data map[string]any) string {
	t.Helper()
	bin := caddyPath(t)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		dir := t.TempDir()
		port := freePort(t)
		data["Dir"], data["Port"] = dir, port
		var conf bytes.Buffer
		if err := tmpl.Execute(&conf, data); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "Caddyfile")
		if err := os.WriteFile(path, conf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		var out testserver.SyncBuffer
		cmd := exec.Command(bin, "run", "--config", path, "--adapter", "caddyfile")
		cmd.Env = []string{"HOME=" + dir, "XDG_DATA_HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		stop := func() {
			select {
			case <-done:
				return
			default:
			}
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		up := false
		deadline := time.Now().Add(15 * time.Second)
		for !up {
			select {
			case <-done:
				lastErr = fmt.Errorf("caddy exited:\n%s\nCaddyfile:\n%s", out.String(), conf.String())
			default:
			}
			if lastErr != nil {
				break
			}
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				_ = c.Close()
				up = true
				break
			}
			if time.Now().After(deadline) {
				stop()
				t.Fatalf("caddy did not listen on %s within 15 s:\n%s", addr, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if up {
			t.Cleanup(func() {
				stop()
				if t.Failed() {
					t.Logf("caddy output:\n%s", out.String())
				}
			})
			return "http://" + addr
		}
		if !strings.Contains(lastErr.Error(), "address already in use") {
			break
		}
	}
	t.Fatalf("start caddy: %v", lastErr)
	return ""
}

// ssoEnv is termhost under --auth proxy behind a real proxy (nginx or
// Caddy) that asks the identity provider, with an audit log.
type ssoEnv struct {
	*env
	idp       *idp
	audit     *audit.Log
	auditPath string
	backend   string // termhost's own address, for direct (not proxied) requests
}

// newSSOEnv starts the identity provider, termhost trusting 127.0.0.1, and
// the proxy that start returns the URL of (given termhost's and the IdP's
// addresses). Alice is an owner, Bob a viewer; Eve has no role.
func newSSOEnv(t *testing.T, browser bool, start func(backend, idp string) string) *ssoEnv {
	t.Helper()
	p := newIdP(t)
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	trail, err := audit.Open(auditPath, testserver.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	roles, err := sso.NewDirectory(sso.Roles{Owners: []string{"alice@corp.com"}, Viewers: []string{"bob@corp.com"}, Contact: "alice@corp.com"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	token := "e2e-owner-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var proxyURL string
	s := testserver.NewAt(t, func(backendURL string) []testserver.Option {
		proxyURL = start(strings.TrimPrefix(backendURL, "http://"), p.addr())
		return []testserver.Option{shellOptions(), testserver.Token(token), testserver.TestHooks(),
			testserver.Handlers(func(c *handlers.Config) {
				c.Version, c.PublicURL = "e2e", proxyURL
				c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
				c.SSO = &sso.Proxy{Header: "X-Forwarded-Email", NameHeader: "X-Forwarded-User", Trusted: c.TrustedProxies}
				c.Roles, c.Audit = roles, trail
			})}
	})
	t.Cleanup(func() { _ = trail.Close() }) // after the server's cleanup
	e := &env{t: t, m: s.Manager, srv: s.Handler, backend: s.Server, URL: proxyURL, home: s.Home, token: token}
	if browser {
		t.Cleanup(e.startBrowser())
	}
	return &ssoEnv{env: e, idp: p, audit: trail, auditPath: auditPath, backend: s.Listener.Addr().String()}
}

func newNginxSSOEnv(t *testing.T, browser bool) *ssoEnv {
	return newSSOEnv(t, browser, func(backend, idp string) string {
		return startNginxWith(t, ssoNginxConf, map[string]any{"Backend": backend, "IdP": idp}).URL
	})
}

func newCaddySSOEnv(t *testing.T, browser bool) *ssoEnv {
	return newSSOEnv(t, browser, func(backend, idp string) string {
		return startCaddy(t, ssoCaddyfile, map[string]any{"Backend": backend, "IdP": idp})
	})
}

// events reads the audit trail once everything recorded is on disk.
func (s *ssoEnv) events(f audit.Filter) []audit.Event {
	s.t.Helper()
	s.audit.Sync()
	b, err := os.ReadFile(s.auditPath)
	if err != nil {
		s.t.Fatal(err)
	}
	var out []audit.Event
	if err := audit.Read(bytes.NewReader(b), f, func(e audit.Event) error { out = append(out, e); return nil }); err != nil {
		s.t.Fatal(err)
	}
	return out
}

// signIn opens a browser context signed in at the IdP as who, on path.
func (s *ssoEnv) signIn(who, path string) *page {
	s.t.Helper()
	p := s.newPage(who, chromedp.WithNewBrowserContext())
	p.do(chromedp.Navigate(s.URL + "/oauth2/sign_in?as=" + who + "&rd=" + url.QueryEscape(path)))
	p.waitOnline()
	return p
}

// cliTerminal is what the termhost CLI does with the owner token (the
// break-glass credential, straight to termhost): it creates the terminal
// "build" and holds it.
func (s *ssoEnv) cliTerminal() (*ahptest.Client, string) {
	s.t.Helper()
	c := ahptest.MustDial(s.t, "ws://"+s.backend+"/ws", ahptest.Options{Header: http.Header{"Authorization": {"Bearer " + s.token}}})
	c.Initialize("1.0.0", "cli-build")
	uri, _ := c.CreateTerminal("build", "cli-build", map[string]any{"name": "build"})
	return c, ahp.TerminalIDOf(uri)
}

// TestSSONginxTwoPeople: through real nginx auth_request and Chromium,
// Alice (owner) and Bob (viewer) sign in at the identity provider, see each
// other by name, Bob cannot type, Alice takes control from the CLI, and the
// audit trail says who typed into build.
func TestSSONginxTwoPeople(t *testing.T) {
	t.Parallel()
	s := newNginxSSOEnv(t, true)
	cli, id := s.cliTerminal()

	alice := s.signIn("alice", "/t/"+id)
	if r := alice.evalString(`window.__termhost.role`); r != "owner" {
		t.Fatalf("alice's role = %q, want owner", r)
	}
	bob := s.signIn("bob", "/t/"+id)
	if r := bob.evalString(`window.__termhost.role`); r != "viewer" {
		t.Fatalf("bob's role = %q, want viewer", r)
	}
	for _, p := range []*page{alice, bob} {
		p.waitJS("the terminal", fmt.Sprintf(`window.__termhost.views().some(v => v.id === %q && v.loaded)`, id), 15*time.Second)
	}

	t.Run("both names in presence", func(t *testing.T) {
		avatars := fmt.Sprintf(`document.querySelector('.tab[data-terminal=%q] .presence-avatars')`, id)
		alice.waitJS("alice sees bob by name", avatars+`?.title.includes('Bob Jones (viewer)')`, 15*time.Second)
		bob.waitJS("bob sees alice by name", avatars+`?.title.includes('Alice Smith')`, 15*time.Second)
		if title := alice.evalString(avatars + `.title`); strings.Contains(title, "bob@corp.com") || strings.Contains(title, "web-") {
			t.Errorf("alice's presence list = %q: want display names, no identities or client ids", title)
		}
	})

	t.Run("the owner takes control from the CLI", func(t *testing.T) {
		bob.waitJS("controlled by the CLI", claimBar(".claim-holder")+`?.textContent.startsWith('Controlled by')`, 15*time.Second)
		alice.clickClaimBar("Take Control", ".claim-take")
		alice.waitHolder(id, true)
		bob.waitJS("bob sees alice in control", claimBar(".claim-holder")+`?.textContent.startsWith('Controlled by Alice Smith')`, 15*time.Second)
		cli.WaitAction("the claim moved", func(e ahp.Envelope) bool {
			return e.Action.Type == ahp.TerminalClaimed && e.Action.Claim.ClientID != "cli-build"
		})
		alice.typeKeys(id, "echo alice-$((2+3))"+kb.Enter)
		bob.waitLine(id, "alice-5", 15*time.Second)
	})

	t.Run("the viewer cannot type", func(t *testing.T) {
		bob.typeKeys(id, "echo nope-$((6*7))"+kb.Enter)
		bob.eval(fmt.Sprintf(`(window.__termhost.client.dispatch('ahp-terminal:/%s', { type: 'terminal/input', data: 'echo nope-$((6*7))\r' }), true)`, id), nil)
		alice.typeKeys(id, "echo after-$((3+4))"+kb.Enter)
		alice.waitLine(id, "after-7", 15*time.Second)
		if strings.Contains(alice.evalString(fmt.Sprintf(`window.__termhost.buffer(%q)`, id)), "nope-42") {
			t.Error("a viewer's keys ran in the terminal")
		}
	})

	t.Run("the audit trail", func(t *testing.T) {
		// Keystrokes past the trail's budget are summed into a summary
		// written when its window ends (audit.Window).
		want := len("echo alice-$((2+3))\r") + len("echo after-$((3+4))\r")
		var typed []audit.Event
		bytes := 0
		poll.Until(t, audit.Window+20*time.Second, "alice's input in the audit trail", func() bool {
			typed, bytes = s.events(audit.Filter{Terminal: "build", Events: []string{audit.Input}}), 0
			for _, e := range typed {
				bytes += e.Bytes
			}
			return bytes >= want
		})
		for _, e := range typed {
			if e.Who != "alice@corp.com" || e.Name != "Alice Smith" {
				t.Errorf("input into build by %s (%s), want only alice", e.Who, e.Name)
			}
		}
		if bytes != want {
			t.Errorf("alice's input into build = %d bytes, want %d", bytes, want)
		}
		for _, want := range []struct{ who, kind string }{
			{"alice@corp.com", audit.SignIn}, {"bob@corp.com", audit.SignIn}, {"bob@corp.com", audit.Connect},
			{"alice@corp.com", audit.ControlTaken}, {"owner", audit.TerminalCreated},
		} {
			if len(s.events(audit.Filter{Who: want.who, Events: []string{want.kind}})) == 0 {
				t.Errorf("no %s event of %s in the trail", want.kind, want.who)
			}
		}
		raw, _ := os.ReadFile(s.auditPath)
		if strings.Contains(string(raw), "alice-$") || strings.Contains(string(raw), "nope") {
			t.Error("the audit trail holds typed text")
		}
	})
}

// TestSSOCaddyForwardAuth: through real Caddy forward_auth and Chromium,
// Alice and Bob are named in presence; someone in no list gets the "not
// allowed" page naming whom to ask.
func TestSSOCaddyForwardAuth(t *testing.T) {
	t.Parallel()
	s := newCaddySSOEnv(t, true)
	_, id := s.cliTerminal()
	alice := s.signIn("alice", "/t/"+id)
	bob := s.signIn("bob", "/t/"+id)
	if r := bob.evalString(`window.__termhost.role`); r != "viewer" {
		t.Fatalf("bob's role = %q, want viewer", r)
	}
	avatars := fmt.Sprintf(`document.querySelector('.tab[data-terminal=%q] .presence-avatars')`, id)
	alice.waitJS("alice sees bob by name", avatars+`?.title.includes('Bob Jones (viewer)')`, 15*time.Second)

	eve := s.newPage("eve", chromedp.WithNewBrowserContext())
	eve.do(chromedp.Navigate(s.URL + "/oauth2/sign_in?as=eve&rd=/"))
	eve.waitJS("the not-allowed page", `document.getElementById('notallowed-who')?.textContent === 'Eve'`, 15*time.Second)
	if whom := eve.evalString(`document.getElementById('notallowed-whom')?.textContent`); whom != "alice@corp.com" {
		t.Errorf("the not-allowed page names %q to ask, want alice@corp.com", whom)
	}
}

// proxyRequest sends one request through the proxy with a person's IdP
// cookie ("" for none) and extra headers given raw (names as written).
func proxyRequest(t *testing.T, target, cookie string, extra [][2]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cookie != "" {
		req.Header.Set("Cookie", "_oauth2_proxy="+cookie)
	}
	for _, kv := range extra {
		req.Header[kv[0]] = append(req.Header[kv[0]], kv[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// wsAs opens the WebSocket through the proxy as cookie, with extra raw
// headers; it returns the client or the refusal's status.
func wsAs(t *testing.T, base, cookie string, extra [][2]string) (*ahptest.Client, int) {
	t.Helper()
	h := http.Header{}
	if cookie != "" {
		h.Set("Cookie", "_oauth2_proxy="+cookie)
	}
	for _, kv := range extra {
		h[kv[0]] = append(h[kv[0]], kv[1])
	}
	c, resp, err := ahptest.Dial(t, strings.Replace(base, "http", "ws", 1)+"/ws", ahptest.Options{Header: h})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial through the proxy: %v", err)
		}
		return nil, resp.StatusCode
	}
	return c, http.StatusSwitchingProtocols
}

// TestSSOProxySpoofing: through each real proxy, an identity a client
// writes itself never counts: without a sign-in it is refused (401); with
// Bob's sign-in the proxy's own header wins (he stays a viewer), and a
// lookalike name the proxy passes on is refused by termhost (401) — on
// pages and on the WebSocket upgrade. Straight to termhost from a peer that
// is not the proxy, the header is refused (401).
func TestSSOProxySpoofing(t *testing.T) {
	t.Parallel()
	for _, proxy := range []struct {
		name  string
		start func(*testing.T) *ssoEnv
		// underscores: what the proxy does with X_Forwarded_Email
		underscoresRefused bool
	}{
		{"nginx", func(t *testing.T) *ssoEnv { return newNginxSSOEnv(t, false) }, false}, // nginx drops such headers
		{"caddy", func(t *testing.T) *ssoEnv { return newCaddySSOEnv(t, false) }, true},  // Caddy passes them on: termhost refuses
	} {
		t.Run(proxy.name, func(t *testing.T) {
			s := proxy.start(t)
			asAlice := [][2]string{{"X-Forwarded-Email", "alice@corp.com"}}
			cases := []struct {
				name   string
				cookie string
				extra  [][2]string
				want   int    // status
				role   string // on a 200 page
			}{
				{"no sign-in, header", "", asAlice, http.StatusUnauthorized, ""},
				{"no sign-in, lower-case header", "", [][2]string{{"x-forwarded-email", "alice@corp.com"}}, http.StatusUnauthorized, ""},
				{"bob with alice's header", "bob", asAlice, http.StatusOK, "viewer"},
				{"bob with two identity headers", "bob", [][2]string{{"X-Forwarded-Email", "alice@corp.com"}, {"X-Forwarded-Email", "eve@elsewhere.net"}}, http.StatusOK, "viewer"},
				{"bob with a lower-case identity header", "bob", [][2]string{{"x-forwarded-email", "alice@corp.com"}}, http.StatusOK, "viewer"},
			}
			underscore := struct {
				name   string
				cookie string
				extra  [][2]string
				want   int
				role   string
			}{"bob with an underscore lookalike", "bob", [][2]string{{"X_Forwarded_Email", "alice@corp.com"}}, http.StatusOK, "viewer"}
			if proxy.underscoresRefused {
				underscore.want, underscore.role = http.StatusUnauthorized, ""
			}
			cases = append(cases, underscore)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					status, body := proxyRequest(t, s.URL+"/", tc.cookie, tc.extra)
					if status != tc.want || (tc.role != "" && !strings.Contains(body, `"role":"`+tc.role+`"`)) {
						t.Errorf("GET / = %d, want %d with role %q\n%.300s", status, tc.want, tc.role, body)
					}
					c, status := wsAs(t, s.URL, tc.cookie, tc.extra)
					wantWS := tc.want
					if wantWS == http.StatusOK {
						wantWS = http.StatusSwitchingProtocols
					}
					if status != wantWS {
						t.Fatalf("WebSocket upgrade = %d, want %d", status, wantWS)
					}
					if c == nil {
						return
					}
					c.Initialize("1.0.0", "spoof-"+strconv.Itoa(int(time.Now().UnixNano()%1e9)))
					c.CallErr("createTerminal", map[string]any{"channel": "ahp-terminal:/spoof", "claim": map[string]any{"kind": "client", "clientId": "x"}}, ahp.CodePermissionDenied)
				})
			}

			t.Run("straight to termhost from a peer that is not the proxy", func(t *testing.T) {
				// 127.0.0.2 is loopback too, but not the trusted 127.0.0.1.
				tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}
				defer tr.CloseIdleConnections()
				client := &http.Client{Transport: tr}
				req, _ := http.NewRequest("GET", "http://"+s.backend+"/", nil)
				req.Header.Set("X-Forwarded-Email", "alice@corp.com")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("GET / from 127.0.0.2 with an identity header = %d, want 401", resp.StatusCode)
				}
				h := http.Header{"X-Forwarded-Email": {"alice@corp.com"}}
				_, wsResp, err := ahptest.Dial(t, "ws://"+s.backend+"/ws", ahptest.Options{Header: h, HTTPClient: client})
				if err == nil || wsResp == nil || wsResp.StatusCode != http.StatusUnauthorized {
					t.Errorf("WebSocket upgrade from 127.0.0.2 with an identity header: %v, want 401", err)
				}
			})
		})
	}
}

var _ = context.Background
