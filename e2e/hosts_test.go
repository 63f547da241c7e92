//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/termhost/termhost/internal/poll"
)

// Many boxes (README "Many boxes"): real `termhost serve` processes, one
// real nginx in front with the single-sign-on stand-in, and Chromium on the
// home host's page working across all of them.

// hostsNginxConf: box1 and box2 under one origin (/box1/, /box2/), box3 on
// another origin (a second port), each location behind the README's
// auth_request setup.
var hostsNginxConf = nginxConfig("nginx-hosts", `	upstream box1 { server {{.Box1}}; }
	upstream box2 { server {{.Box2}}; }
	upstream box3 { server {{.Box3}}; }
	upstream oauth2_proxy { server {{.IdP}}; }
{{range .Servers}}
	server {
		listen 127.0.0.1:{{if .Port}}{{.Port}}{{else}}{{$.Port}}{{end}};
		location /oauth2/ {
			proxy_pass http://oauth2_proxy;
			proxy_set_header Host $host;
		}
		location = /oauth2/auth {
			internal;
			proxy_pass http://oauth2_proxy;
			proxy_set_header Host $host;
			proxy_pass_request_body off;
			proxy_set_header Content-Length "";
		}
{{range .Locations}}
		location {{.Path}} {
			auth_request /oauth2/auth;
			auth_request_set $email $upstream_http_x_auth_request_email;
			auth_request_set $user  $upstream_http_x_auth_request_user;
			proxy_set_header X-Forwarded-Email $email;
			proxy_set_header X-Forwarded-User  $user;
			proxy_set_header X-Forwarded-For   $proxy_add_x_forwarded_for;
			proxy_set_header Host $host;
			proxy_pass http://{{.Upstream}};
			proxy_http_version 1.1;
			proxy_set_header Upgrade $http_upgrade;
			proxy_set_header Connection "upgrade";
			proxy_read_timeout 3600s;
			proxy_buffering off;
		}
{{end}}
	}
{{end}}
`)

// hostProc is one real `termhost serve` process on a fixed address, which a
// test may kill and start again (same flags, same state directory).
type hostProc struct {
	t    *testing.T
	name string
	bin  string
	addr string
	args []string
	env  []string

	mu   sync.Mutex
	out  bytes.Buffer
	cmd  *exec.Cmd
	done chan struct{}
}

func (h *hostProc) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.out.Write(b)
}

func (h *hostProc) log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.out.String()
}

// newHostProc starts termhost serve as name on a free loopback port, in a
// home and state directory of its own, with args added; t.Cleanup stops it.
func newHostProc(t *testing.T, bin, name string, addr string, args ...string) *hostProc {
	t.Helper()
	home := t.TempDir()
	h := &hostProc{t: t, name: name, bin: bin, addr: addr,
		args: append([]string{"serve", "--listen", addr, "--shell", "/bin/bash", "--state-dir", filepath.Join(home, "state"), "--log-level", "info"}, args...),
		env:  []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", `PS1=\w $ `, "HISTFILE=/dev/null"}}
	h.start()
	t.Cleanup(func() {
		h.stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("%s log:\n%s", name, h.log())
		}
	})
	return h
}

func (h *hostProc) start() {
	h.t.Helper()
	h.launch()
	h.waitListening()
}

// launch starts the process without waiting for it to listen, so that
// several hosts can start at once.
func (h *hostProc) launch() {
	h.t.Helper()
	cmd := exec.Command(h.bin, h.args...)
	cmd.Env = h.env
	cmd.Stdout, cmd.Stderr = h, h
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("start %s: %v", h.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	h.cmd, h.done = cmd, done
}

// waitListening waits until the process accepts connections; it fails the
// test if the process exits first.
func (h *hostProc) waitListening() {
	h.t.Helper()
	poll.Until(h.t, poll.Long, h.name+" listening on "+h.addr, func() bool {
		select {
		case <-h.done:
			h.t.Fatalf("%s exited:\n%s", h.name, h.log())
		default:
		}
		c, err := net.DialTimeout("tcp", h.addr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
}

// stop signals the process group (the server and its shells) and waits.
func (h *hostProc) stop(sig syscall.Signal) {
	if h.cmd == nil {
		return
	}
	select {
	case <-h.done:
		return
	default:
	}
	_ = syscall.Kill(-h.cmd.Process.Pid, sig)
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
		<-h.done
	}
}

// blackhole accepts TCP connections and never answers: a host that is
// down behind a firewall which drops packets.
func blackhole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// ---- the page, through the DOM only: a real server serves the production app ----

// domRenderer makes the page's terminals draw as DOM rows (their text is
// readable), and keeps the startup terminal as the app's default.
const domRenderer = `try { localStorage.setItem('termhost.renderer', 'dom') } catch {}`

// hostGroup is a side bar group header: its host ("" the home host) and state.
type hostGroup struct {
	Host   string `json:"host"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

func (p *page) hostGroups() []hostGroup {
	p.t.Helper()
	var g []hostGroup
	p.eval(`[...document.querySelectorAll('.host-group')].map(e => ({host: e.dataset.host, name: e.querySelector('.host-name').textContent, status: e.dataset.status}))`, &g)
	return g
}

func (p *page) waitHostStatus(host string, statuses ...string) {
	p.t.Helper()
	js, _ := json.Marshal(statuses)
	p.waitJS(fmt.Sprintf("host %q %v", host, statuses), fmt.Sprintf(`%s.includes(document.querySelector('.host-group[data-host=%q]')?.dataset.status)`, js, host), 30*time.Second)
}

// screenText is a terminal's rows as the DOM renderer draws them.
func screenText(id string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.terminal-view[data-terminal=%q] .xterm-rows > div')].map(d => d.textContent.replace(/\u00a0/g, ' ').trimEnd()).join('\n')`, id)
}

func (p *page) waitScreenLine(id, want string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf("%q in terminal %s", want, id), fmt.Sprintf(`(%s).split('\n').some(l => l.trim() === %q)`, screenText(id), want), 20*time.Second)
}

// waitScreenPrompt waits for the shell to have drawn its prompt (any text).
func (p *page) waitScreenPrompt(id string) {
	p.t.Helper()
	p.waitJS("a prompt in "+id, fmt.Sprintf(`(%s).trim().length > 0`, screenText(id)), 20*time.Second)
}

// terminalIDs are the data-terminal ids of the open terminal views.
func (p *page) terminalIDs() []string {
	var ids []string
	p.eval(`[...document.querySelectorAll('.terminal-view')].map(e => e.dataset.terminal)`, &ids)
	return ids
}

// newTerminalOn clicks a host group's New Terminal and returns the new view's id.
func (p *page) newTerminalOn(host string) string {
	p.t.Helper()
	before := p.terminalIDs()
	p.waitJS("New Terminal on "+host, fmt.Sprintf(`!!document.querySelector('.host-group[data-host=%q] .host-new')`, host), 20*time.Second)
	p.eval(fmt.Sprintf(`(document.querySelector('.host-group[data-host=%q] .host-new').click(), true)`, host), nil)
	prefix := ""
	if host != "" {
		prefix = "termhost-host://" + host + "/"
	}
	var id string
	poll.Until(p.t, poll.Long, "a new terminal on "+host, func() bool {
		for _, v := range p.terminalIDs() {
			if !contains(before, v) && strings.HasPrefix(v, prefix) && (prefix != "" || !strings.HasPrefix(v, "termhost-host://")) {
				id = v
				return true
			}
		}
		return false
	})
	p.waitScreenPrompt(id)
	return id
}

// echo shows a terminal (its side bar row), types a command into it and
// waits for its output.
func (p *page) echo(id, marker string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`(document.querySelector('.terminal-item[data-terminal=%q]').click(), true)`, id), nil)
	p.waitJS("terminal "+id+" shown", fmt.Sprintf(`document.querySelector('.terminal-view[data-terminal=%q]')?.offsetParent !== null`, id), 10*time.Second)
	p.typeKeys(id, "echo "+marker+"-$((40+2))\r")
	p.waitScreenLine(id, marker+"-42")
}

// marks are the page's performance marks by name (ms since navigation).
func (p *page) marks() map[string]float64 {
	var m map[string]float64
	p.eval(`Object.fromEntries(performance.getEntriesByType('mark').map(e => [e.name, Math.round(e.startTime)]))`, &m)
	return m
}

// TestHostsBehindSSOProxy: box1 (the home host) lists box2 (same origin,
// another path), box3 (another origin), a host that refuses connections
// and one that never answers. Alice signs in once at the proxy and works
// on every host; a teammate opens a share link of box2's terminal; box2
// goes down and only its terminals grey out, then comes back.
func TestHostsBehindSSOProxy(t *testing.T) {
	bin := buildTermhost(t)
	idp := newIdP(t)
	addr := func() string { return "127.0.0.1:" + strconv.Itoa(freePort(t)) }
	a1, a2, a3 := addr(), addr(), addr()
	other := freePort(t)
	type loc struct{ Path, Upstream string }
	type srv struct {
		Port      int // 0: the port nginx's harness picks (.Port)
		Locations []loc
	}
	// nginx first: the hosts need its address (their public URLs), and it
	// needs only theirs, chosen above.
	home := startNginxWith(t, hostsNginxConf, map[string]any{"Box1": a1, "Box2": a2, "Box3": a3, "IdP": idp.addr(), "Servers": []srv{
		{Locations: []loc{{"/box1/", "box1"}, {"/box2/", "box2"}}},
		{Port: other, Locations: []loc{{"/", "box3"}}},
	}}).URL
	origin3 := fmt.Sprintf("http://127.0.0.1:%d", other)
	refused := addr() // nothing listens there
	hole := blackhole(t)
	hostsFile := writeFile(t, "hosts", fmt.Sprintf("# the team's boxes\nbox2 %s/box2/\nbox3 %s/\ngone http://%s/\nhole http://%s/\n", home, origin3, refused, hole))
	sso := func(name, publicURL string) []string {
		return []string{"--auth", "proxy", "--identity-header", "X-Forwarded-Email", "--name-header", "X-Forwarded-User",
			"--trusted-proxy", "127.0.0.1", "--owners", "alice@corp.com", "--viewers", "bob@corp.com",
			"--public-url", publicURL, "--host-name", name}
	}
	newHostProc(t, bin, "box1", a1, append(sso("box1", home+"/box1"), "--base-path", "/box1", "--hosts", hostsFile)...)
	box2 := newHostProc(t, bin, "box2", a2, append(sso("box2", home+"/box2"), "--base-path", "/box2")...)
	newHostProc(t, bin, "box3", a3, append(sso("box3", origin3), "--allowed-origin", home)...)

	e := &env{t: t, URL: home}
	t.Cleanup(e.startBrowser())
	alice := e.newFirstVisitPage("alice", chromedp.WithNewBrowserContext())
	alice.addInitScript(domRenderer)
	alice.do(chromedp.Navigate(home + "/oauth2/sign_in?as=alice&rd=" + "/box1/"))

	// The startup terminal of the home host has the keyboard while the
	// host that never answers is still connecting: nothing waited for it.
	alice.waitJS("a focused prompt on the home host", `document.activeElement?.closest('.terminal-view') && /[$#]$/.test([...document.activeElement.closest('.terminal-view').querySelectorAll('.xterm-rows > div')].map(d => d.textContent.replace(/\u00a0/g, ' ').trimEnd()).join('\n').trimEnd())`, 30*time.Second)
	var holeStatus string
	alice.eval(`document.querySelector('.host-group[data-host="hole"]')?.dataset.status ?? 'not listed yet'`, &holeStatus)
	m := alice.marks()
	t.Logf("timings (ms since navigation): %v; the blackholed host was %q at the focused prompt", m, holeStatus)
	if holeStatus != "connecting" && holeStatus != "not listed yet" {
		t.Errorf("the host that never answers was %q when the home prompt had the keyboard; want still connecting", holeStatus)
	}
	if _, ok := m["termhost:sidebar"]; !ok {
		t.Errorf("no termhost:sidebar mark: %v", m)
	}
	if m["termhost:sidebar"] > m["termhost:prompt"] && m["termhost:prompt"] > 0 {
		t.Errorf("the side bar (%v ms) came after the focused prompt (%v ms)", m["termhost:sidebar"], m["termhost:prompt"])
	}

	alice.waitHostStatus("", "connected")
	alice.waitHostStatus("box2", "connected")
	alice.waitHostStatus("box3", "connected")
	alice.waitHostStatus("gone", "unreachable")
	if g := alice.hostGroups(); len(g) != 5 || g[0].Host != "" || g[0].Name != "box1" || g[1].Host != "box2" || g[2].Host != "box3" {
		t.Errorf("side bar groups %+v; want box1 (home), box2, box3, gone, hole in the file's order", g)
	}

	// One sign-in at the proxy, a terminal on every host.
	var homeID string
	alice.eval(`document.activeElement.closest('.terminal-view').dataset.terminal`, &homeID)
	alice.echo(homeID, "box1")
	id2 := alice.newTerminalOn("box2")
	alice.echo(id2, "box2")
	id3 := alice.newTerminalOn("box3")
	alice.echo(id3, "box3")
	alice.shot("hosts-sso")

	// A deep link names the host, and opens that terminal on the home page.
	link := alice.evalString(`location.pathname`)
	if want := "/box1/h/box3/t/"; !strings.HasPrefix(link, want) {
		t.Errorf("address bar %q with box3's terminal active; want %s<id>", link, want)
	}

	// Share box2's terminal; the teammate opens the link: that one terminal, no other host.
	t.Run("share", func(t *testing.T) {
		alice.eval(fmt.Sprintf(`(document.querySelector('.terminal-item[data-terminal=%q] .share-action').click(), true)`, id2), nil)
		alice.waitJS("the Share dialog", `document.querySelector('#share-dialog #share-list .share-item, #share-dialog #share-list .share-empty')`, 10*time.Second)
		before := alice.evalString(`document.getElementById('share-url').value`)
		alice.do(chromedp.Click(chromedp.CSS(`#share-create`)))
		alice.waitJS("the new share link", fmt.Sprintf(`(v => v && v !== %q)(document.getElementById('share-url').value)`, before), 10*time.Second)
		u := alice.evalString(`document.getElementById('share-url').value`)
		if !strings.HasPrefix(u, home+"/box2/t/") || !strings.Contains(u, "#share=") {
			t.Fatalf("share URL %q; want box2's own link %s/box2/t/<id>#share=…", u, home)
		}
		alice.do(chromedp.KeyEvent("\x1b"))
		bob := e.newPage("teammate", chromedp.WithNewBrowserContext())
		bob.addInitScript(domRenderer)
		bob.do(chromedp.Navigate(home + "/oauth2/sign_in?as=bob&rd=" + "/box2/"))
		bob.do(chromedp.Navigate(u))
		own := strings.TrimPrefix(id2, "termhost-host://box2/ahp-terminal:/")
		bob.waitScreenLine(own, "box2-42")
		if n := bob.evalString(`String(document.querySelectorAll('.host-group').length)`); n != "0" {
			t.Errorf("the teammate's page shows %s host groups; want none", n)
		}
	})

	// box2 goes down: its terminal greys out, box1 and box3 still type.
	box2.stop(syscall.SIGKILL)
	alice.waitHostStatus("box2", "reconnecting", "unreachable")
	alice.waitJS("box2's terminal greyed out", fmt.Sprintf(`document.querySelector('.terminal-view[data-terminal=%q]').classList.contains('host-down')`, id2), 10*time.Second)
	for _, id := range []string{homeID, id3} {
		var down bool
		alice.eval(fmt.Sprintf(`document.querySelector('.terminal-view[data-terminal=%q]').classList.contains('host-down')`, id), &down)
		if down {
			t.Errorf("terminal %s greyed out with box2 down", id)
		}
	}
	alice.waitHostStatus("", "connected")
	alice.echo(homeID, "still")
	alice.echo(id3, "box3-still")
	alice.shot("hosts-box2-down")

	// box2 again, same state directory: it comes back by itself.
	box2.start()
	alice.waitHostStatus("box2", "connected")
	id2b := alice.newTerminalOn("box2")
	alice.echo(id2b, "back")
	alice.shot("hosts-box2-back")
}

// TestHostsOwnerTokens: without single sign-on each host has its own owner
// token; box2, on another origin, says it needs a sign-in until the person
// signs in on box2's own login page, and box1's token never goes to box2.
func TestHostsOwnerTokens(t *testing.T) {
	bin := buildTermhost(t)
	a1, a2 := "127.0.0.1:"+strconv.Itoa(freePort(t)), "127.0.0.1:"+strconv.Itoa(freePort(t))
	const tok1, tok2 = "e2e-box1-owner-token-0123456789", "e2e-box2-owner-token-9876543210"
	hostsFile := writeFile(t, "hosts", "box2 http://"+a2+"/\n")
	newHostProc(t, bin, "box1", a1, "--token", tok1, "--host-name", "box1", "--hosts", hostsFile)
	newHostProc(t, bin, "box2", a2, "--token", tok2, "--host-name", "box2", "--allowed-origin", "http://"+a1)

	e := &env{t: t, URL: "http://" + a1}
	t.Cleanup(e.startBrowser())
	p := e.newPage("owner", chromedp.WithNewBrowserContext())
	p.addInitScript(domRenderer)
	p.do(chromedp.Navigate("http://" + a1 + "/#token=" + tok1))
	p.waitHostStatus("", "connected")
	p.waitHostStatus("box2", "signin")
	p.waitJS("box2's Sign In", `!!document.querySelector('.host-group[data-host="box2"] .host-sign-in')`, 10*time.Second)
	p.shot("hosts-needs-sign-in")

	// Sign In opens box2's own login page in a new tab of the same browser;
	// the person signs in there with box2's login link (box1's token never
	// goes to box2: the page holds none, and cookies stay with their host).
	opened := chromedp.WaitNewTarget(p.ctx, func(info *target.Info) bool { return strings.HasPrefix(info.URL, "http://"+a2+"/") })
	p.click("Sign In", `.host-group[data-host="box2"] .host-sign-in`)
	var tabID target.ID
	select {
	case tabID = <-opened:
	case <-time.After(patience * 10 * time.Second):
		t.Fatalf("Sign In opened no tab at box2's login page http://%s/", a2)
	}
	// The person signs in there with the login link box2's serve printed
	// (this tab, as a second tab the test cannot drive), and comes back to
	// the workbench, which now reaches box2 with box2's own cookie.
	// That tab in front would stop this one drawing (a hidden page gets no
	// animation frames): close it, and sign in on box2 here instead.
	tabCtx, cancelTab := chromedp.NewContext(p.ctx, chromedp.WithTargetID(tabID))
	defer cancelTab()
	if err := chromedp.Do(tabCtx); err != nil {
		t.Fatalf("attach to the sign-in tab: %v", err)
	}
	if err := chromedp.Cancel(tabCtx); err != nil {
		t.Fatalf("close the sign-in tab: %v", err)
	}
	if _, err := chromedp.Call(p.ctx, cdppage.BringToFront, cdp.Empty{}); err != nil {
		t.Fatalf("bring the workbench to the front: %v", err)
	}
	p.do(chromedp.Navigate("http://" + a2 + "/#token=" + tok2))
	p.waitJS("box2's own workbench", `!!document.getElementById('workbench') && location.hash === ''`, 20*time.Second)
	p.do(chromedp.Navigate("http://" + a1 + "/"))
	p.waitHostStatus("box2", "connected")
	id2 := p.newTerminalOn("box2")
	p.echo(id2, "signed")
	p.shot("hosts-signed-in")
}

// TestHostsFileChangesWhileOpen: the page starts with the host list its
// server wrote into it, and follows the hosts file while it is open (the
// x-termhost/hosts notification): a host added joins the side bar, a host
// taken out leaves it. A page loaded after the edit has the new list from
// the start and reaches the new host (an open page cannot: its
// Content-Security-Policy, fixed when it loaded, names the hosts of then).
func TestHostsFileChangesWhileOpen(t *testing.T) {
	bin := buildTermhost(t)
	addr := func() string { return "127.0.0.1:" + strconv.Itoa(freePort(t)) }
	a1, a2, a3 := addr(), addr(), addr()
	hostsFile := writeFile(t, "hosts", "box2 http://"+a2+"/\n")
	newHostProc(t, bin, "box1", a1, "--auth", "none", "--host-name", "box1", "--hosts", hostsFile)
	newHostProc(t, bin, "box2", a2, "--auth", "none", "--host-name", "box2", "--allowed-origin", "http://"+a1)
	newHostProc(t, bin, "box3", a3, "--auth", "none", "--host-name", "box3", "--allowed-origin", "http://"+a1)

	e := &env{t: t, URL: "http://" + a1}
	t.Cleanup(e.startBrowser())
	p := e.newPage("owner", chromedp.WithNewBrowserContext())
	p.addInitScript(domRenderer)
	p.do(chromedp.Navigate("http://" + a1 + "/"))
	p.waitHostStatus("", "connected")
	p.waitHostStatus("box2", "connected")

	// The file is replaced (as an editor saves it): box3 in, box2 out.
	next := hostsFile + ".new"
	if err := os.WriteFile(next, []byte("box3 http://"+a3+"/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, hostsFile); err != nil {
		t.Fatal(err)
	}
	p.waitJS("box3's group in, box2's gone", `!!document.querySelector('.host-group[data-host="box3"]') && !document.querySelector('.host-group[data-host="box2"]')`, 30*time.Second)
	if g := p.hostGroups(); len(g) != 2 || g[0].Name != "box1" || g[1].Host != "box3" {
		t.Errorf("side bar groups %+v after the edit; want box1 (home) and box3", g)
	}

	// A page loaded now: box3 from the start, box2 nowhere.
	p.do(chromedp.Navigate("http://" + a1 + "/"))
	p.waitHostStatus("box3", "connected")
	if g := p.hostGroups(); len(g) != 2 || g[1].Host != "box3" {
		t.Errorf("side bar groups %+v on a page loaded after the edit; want box1 (home) and box3", g)
	}
}
