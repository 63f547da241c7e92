package serve

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/ahptest"
)

// getHosts fetches <base>/api/hosts with the bearer token (none: "").
func getHosts(t *testing.T, base, token string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/hosts", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, strings.TrimSpace(string(b))
}

// TestServeHostsRefusesBadFile: a hosts file that does not parse, a
// missing one and a bad --host-name stop serve before it starts, with exit
// 2 and one line naming the file and line.
func TestServeHostsRefusesBadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badName := write("badname", "# boxes\nbox2 https://dev.corp/box2/\n-box3 https://dev.corp/box3/\n")
	badURL := write("badurl", "box2 https://dev.corp/box2/\n\nbox3 dev.corp/box3\n")
	fields := write("fields", "box2\n")
	dup := write("dup", "box2 https://dev.corp/box2/\nbox2 https://dev.corp/other/\n")
	refusesToStart(t, []refusal{
		{"bad name", []string{"--hosts", badName}, badName + `:3: bad host name "-box3"`},
		{"relative URL", []string{"--hosts", badURL}, badURL + ":3: host box3:"},
		{"one field", []string{"--hosts", fields}, fields + `:1: want "NAME URL"`},
		{"name twice", []string{"--hosts", dup}, dup + ":2: host box2 is named twice"},
		{"missing file", []string{"--hosts", filepath.Join(dir, "gone")}, "--hosts: read hosts file"},
		{"bad host name", []string{"--host-name", "box/1"}, `--host-name "box/1"`},
	})
}

// TestServeWithoutHosts: a server given no hosts file lists no other
// hosts, names itself by --host-name, and says so in initialize.
func TestServeWithoutHosts(t *testing.T) {
	t.Parallel()
	_, login := startServe(t, "--host-name", "solo")
	base, token, _ := strings.Cut(login, "/#token=")
	status, h, body := getHosts(t, base, token)
	if status != http.StatusOK || body != `{"home":{"name":"solo"},"hosts":[]}` || h.Get("Cache-Control") != "no-store" {
		t.Errorf("GET /api/hosts = %d %q (Cache-Control %q), want 200 with no hosts, no-store", status, body, h.Get("Cache-Control"))
	}
	if status, _, _ := getHosts(t, base, ""); status != http.StatusUnauthorized {
		t.Errorf("GET /api/hosts without a credential = %d, want 401", status)
	}
	c := ahptest.MustDial(t, strings.Replace(base, "http", "ws", 1)+"/ws", ahptest.Options{Header: http.Header{"Authorization": {"Bearer " + token}}})
	res := c.Initialize("1.0.0", "hosts-test")
	meta, _ := res["_meta"].(map[string]any)
	if meta[ext.MetaHostName] != "solo" {
		t.Errorf("initialize _meta = %v, want %s solo", meta, ext.MetaHostName)
	}
}

// TestServeHostsFile: the real binary with a hosts file that lists the
// home box too (once by name, once by its public URL). The list leaves the
// home box out; a write-and-rename of the file and, for a change the
// watcher cannot see (the file is a symbolic link into another directory),
// SIGHUP each serve and notify the new list to the owner's connection and
// not to a share link's; a bad edit keeps the list in force; share links
// get 403.
func TestServeHostsFile(t *testing.T) {
	t.Parallel()
	watched, other := t.TempDir(), t.TempDir()
	target := filepath.Join(other, "hosts.real")
	path := filepath.Join(watched, "hosts")
	writeTarget := func(text string) {
		t.Helper()
		if err := os.WriteFile(target, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeTarget("# the team's boxes\nbox1 https://dev.corp/box1/\nbox2 https://dev.corp/box2  # the build box\n\nself https://dev.corp/home/\n")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	// The login link is --public-url's: the test reaches the listener itself.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cmd, login := startServe(t, "--listen", addr, "--hosts", path, "--host-name", "box1", "--public-url", "https://dev.corp/home")
	_, token, _ := strings.Cut(login, "/#token=")
	base := "http://" + addr

	want := func(what, body string) {
		t.Helper()
		status, h, got := getHosts(t, base, token)
		if status != http.StatusOK || got != body || h.Get("Cache-Control") != "no-store" || h.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: GET /api/hosts = %d %q (%v), want 200 %s", what, status, got, h, body)
		}
	}
	want("at start", `{"home":{"name":"box1"},"hosts":[{"name":"box2","url":"https://dev.corp/box2/"}]}`)

	owner := ahptest.MustDial(t, strings.Replace(base, "http", "ws", 1)+"/ws", ahptest.Options{Header: http.Header{"Authorization": {"Bearer " + token}}})
	owner.Initialize("1.0.0", "hosts-owner")
	owner.MustCall(ahp.MethodCreateTerminal, map[string]any{"channel": "ahp-terminal:/h", "claim": map[string]any{"kind": "client", "clientId": "hosts-owner"}})
	var links []string
	for _, role := range []string{"viewer", "driver"} {
		res := owner.MustCall("x-share/create", map[string]any{"channel": ahp.RootURI, "terminal": "ahp-terminal:/h", "role": role})
		var r struct{ URL string }
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatal(err)
		}
		_, tok, _ := strings.Cut(r.URL, "#share=")
		links = append(links, tok)
		if status, _, body := getHosts(t, base, tok); status != http.StatusForbidden {
			t.Errorf("GET /api/hosts with a %s link = %d %q, want 403", role, status, body)
		}
	}
	viewer := ahptest.MustDial(t, strings.Replace(base, "http", "ws", 1)+"/ws", ahptest.Options{Header: http.Header{"Authorization": {"Bearer " + links[0]}}})
	viewer.Initialize("1.0.0", "hosts-viewer")

	notified := func(what, body string) {
		t.Helper()
		m := owner.NextFrame(what, func(m *ahp.Message) bool { return m.Method == ext.NotifyHosts })
		if string(m.Params) != body {
			t.Fatalf("%s: %s params %s, want %s", what, ext.NotifyHosts, m.Params, body)
		}
	}

	// A write-and-rename in the watched directory (a new link renamed
	// over the old one, as a deploy tool does).
	writeTarget("box1 https://dev.corp/box1/\nbox3 https://box3.tail.ts.net\nbox2 https://dev.corp/box2/\n")
	next := filepath.Join(watched, "hosts.new")
	if err := os.Symlink(target, next); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	two := `{"home":{"name":"box1"},"hosts":[{"name":"box3","url":"https://box3.tail.ts.net/"},{"name":"box2","url":"https://dev.corp/box2/"}]}`
	notified("the list after the file was replaced", two)
	want("after the file was replaced", two)

	// A change the watcher does not see: only SIGHUP reads it.
	writeTarget("box4 http://127.0.0.1:9/\n")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	four := `{"home":{"name":"box1"},"hosts":[{"name":"box4","url":"http://127.0.0.1:9/"}]}`
	notified("the list after SIGHUP", four)
	want("after SIGHUP", four)

	// A bad edit is logged and the list stays; SIGHUP did not end serve.
	writeTarget("box5 ftp://box5/\n")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	owner.MustCall("ping", map[string]any{"channel": ahp.RootURI})
	want("after a bad edit", four)
	// The list was pushed to the viewer's queue, if at all, before the
	// owner got it: a ping's answer comes after.
	viewer.MustCall("ping", map[string]any{"channel": ahp.RootURI})
	if strings.Contains(viewer.RawFrames(), ext.NotifyHosts) {
		t.Errorf("a viewer link's connection got %s", ext.NotifyHosts)
	}
}

// TestServeLogsForeignOrigins: a box that accepts another box's workbench
// (--allowed-origin) says so once at start; its own public origin is not
// foreign.
func TestServeLogsForeignOrigins(t *testing.T) {
	t.Parallel()
	_, _, logs := startServeLog(t, "--log-level", "info", "--public-url", "https://box2.tail.ts.net",
		"--allowed-origin", "https://box1.tail.ts.net", "--allowed-origin", "https://box2.tail.ts.net/")
	const line = "accepting WebSockets from the workbench at https://box1.tail.ts.net"
	waitFor(t, "the foreign origin logged", func() bool { return strings.Contains(logs.String(), line) })
	if n := strings.Count(logs.String(), "accepting WebSockets from the workbench"); n != 1 {
		t.Errorf("%d lines about foreign origins, want 1 (box2 is this box):\n%s", n, logs)
	}
}
