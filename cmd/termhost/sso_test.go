package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/handlers/sso"
	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/testserver"
)

// TestServeSSORefusesBadSetup: --auth proxy without a trusted proxy (or
// an identity header, or anyone with a role), its flags without it, and a
// roles file that does not parse are refused before anything starts, with
// exit 2 and one line.
func TestServeSSORefusesBadSetup(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "roles")
	if err := os.WriteFile(bad, []byte("admins: a@corp.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proxy := []string{"--auth", "proxy", "--trusted-proxy", "127.0.0.1", "--identity-header", "X-Forwarded-Email"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no trusted proxy", []string{"--auth", "proxy", "--identity-header", "X-Forwarded-Email", "--owners", "a@corp.com"}, "--auth proxy needs --trusted-proxy"},
		{"no identity header", []string{"--auth", "proxy", "--trusted-proxy", "127.0.0.1", "--owners", "a@corp.com"}, "--auth proxy needs --identity-header"},
		{"nobody with a role", proxy, "nobody would have a role"},
		{"underscore header", []string{"--auth", "proxy", "--trusted-proxy", "127.0.0.1", "--identity-header", "X_Email", "--owners", "a@corp.com"}, "must be header names"},
		{"roles without proxy", []string{"--owners", "a@corp.com"}, "need --auth proxy"},
		{"broken roles file", append(append([]string{}, proxy...), "--roles-file", bad), "unknown key"},
		{"missing roles file", append(append([]string{}, proxy...), "--roles-file", bad+".gone"), "--roles-file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, needBinary(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
			cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
			out, err := cmd.CombinedOutput()
			msg := strings.TrimSpace(string(out))
			if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("serve %v: err %v, output %q; want exit 2 and one line saying %q", tc.args, err, msg, tc.want)
			}
		})
	}
}

// getAs fetches url as the SSO proxy would, naming who.
func getAs(t *testing.T, url, who string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-Forwarded-Email", who)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeSSOSighup: the real binary under --auth proxy with a roles file
// and an audit log. Editing the roles file changes roles at once; SIGHUP
// re-reads it too and reopens the audit log (logrotate), and neither drops
// a connection; termhost audit reads the trail.
func TestServeSSOSighup(t *testing.T) {
	dir := t.TempDir()
	roles, trail := filepath.Join(dir, "roles"), filepath.Join(dir, "audit.jsonl")
	if err := os.WriteFile(roles, []byte("viewers: bob@corp.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, login := startServe(t, "--auth", "proxy", "--trusted-proxy", "127.0.0.1", "--identity-header", "X-Forwarded-Email",
		"--owners", "alice@corp.com", "--roles-file", roles, "--audit-log", trail)
	base, _, _ := strings.Cut(login, "/#token=")
	if status, body := getAs(t, base+"/", "bob@corp.com"); status != http.StatusOK || !strings.Contains(body, `"role":"viewer"`) {
		t.Fatalf("bob's page = %d, want 200 as a viewer", status)
	}
	h := http.Header{"X-Forwarded-Email": {"alice@corp.com"}}
	alice := ahptest.MustDial(t, strings.Replace(base, "http", "ws", 1)+"/ws", ahptest.Options{Header: h})
	alice.Initialize("1.0.0", "web-alice")

	// An edit in place is seen by the watcher.
	if err := os.WriteFile(roles, []byte("drivers: bob@corp.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bob a driver after the roles file changed", func() bool {
		_, body := getAs(t, base+"/", "bob@corp.com")
		return strings.Contains(body, `"role":"driver"`)
	})

	// The trail is written behind the events (a flusher goroutine): what is
	// still buffered at SIGHUP goes to the new file, so wait for the events
	// the rotated file is checked for.
	waitFor(t, "alice's connection in the audit trail", func() bool {
		b, _ := os.ReadFile(trail)
		return bytes.Contains(b, []byte(`"connect"`)) && bytes.Contains(b, []byte("alice@corp.com"))
	})
	// logrotate: move the trail away, SIGHUP; the next events go to a new file.
	if err := os.Rename(trail, trail+".1"); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a new audit log after SIGHUP", func() bool {
		getAs(t, base+"/", "carol@corp.com") // a refused sign-in: one event per request
		_, err := os.Stat(trail)
		return err == nil
	})
	alice.MustCall("ping", map[string]any{"channel": "ahp-root://"}) // still connected: SIGHUP did not end serve

	old, err := os.ReadFile(trail + ".1")
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	if err := audit.Read(bytes.NewReader(old), audit.Filter{}, func(e audit.Event) error {
		events = append(events, e.Event+" "+e.Who)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(events, "\n")
	for _, want := range []string{"sign-in bob@corp.com", "sign-in alice@corp.com", "connect alice@corp.com"} {
		if !strings.Contains(joined, want) {
			t.Errorf("rotated trail lacks %q:\n%s", want, joined)
		}
	}

	out, err := exec.Command(needBinary(t), "audit", "--audit-log", trail+".1", "--who", "alice@corp.com", "--event", "connect").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "connect") || strings.Contains(string(out), "bob@corp.com") {
		t.Errorf("termhost audit --who alice --event connect: %v\n%s", err, out)
	}
}

// TestAuditCommand: termhost audit answers "who typed into build at 14:03"
// and refuses unknown event kinds and times with exit 2.
func TestAuditCommand(t *testing.T) {
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	lines := `{"time":"2026-12-05T14:02:10Z","event":"input","who":"alice@corp.com","name":"Alice","terminal":"ahp-terminal:/t1","title":"build","bytes":3}
{"time":"2026-12-05T14:03:20Z","event":"input","who":"bob@corp.com","name":"Bob","terminal":"ahp-terminal:/t1","title":"build","bytes":7}
{"time":"2026-12-05T14:03:40Z","event":"input","who":"carol@corp.com","terminal":"ahp-terminal:/t2","title":"deploy","bytes":1}
{"time":"2026-12-05T14:05:00Z","event":"connect","who":"share:x1","name":"Ev\u202ee\u001b[2J","terminal":"ahp-terminal:/t3","title":"ops\u2067\u200f","count":2254,"until":"2026-12-05T14:05:59Z"}
`
	if err := os.WriteFile(trail, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command(needBinary(t), append([]string{"audit", "--audit-log", trail}, args...)...)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := run("--terminal", "build", "--event", "input", "--since", "2026-12-05T14:03:00Z", "--until", "2026-12-05T14:04:00Z")
	if code != 0 || !strings.Contains(out, "Bob <bob@corp.com>") || !strings.Contains(out, "7 bytes") || strings.Contains(out, "alice") || strings.Contains(out, "carol") {
		t.Errorf("who typed into build at 14:03: exit %d\n%s", code, out)
	}
	out, code = run("--json", "--who", "carol@corp.com")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"title":"deploy"`) {
		t.Errorf("--json --who carol: exit %d\n%s", code, out)
	}
	// Names and titles without direction or control characters; a
	// summary of coalesced events with its count.
	out, code = run("--event", "connect")
	if code != 0 || !strings.Contains(out, "Eve[2J <share:x1>") || !strings.Contains(out, "ops (t3)") || !strings.Contains(out, "×2254") ||
		strings.ContainsAny(out, "\u202e\u2067\u200f\x1b") {
		t.Errorf("termhost audit --event connect: exit %d\n%q", code, out)
	}
	for _, bad := range [][]string{{"--event", "typed"}, {"--since", "yesterday-ish"}} {
		if out, code := run(bad...); code != 2 {
			t.Errorf("termhost audit %v: exit %d, want 2\n%s", bad, code, out)
		}
	}
}

func TestAuditParseWhen(t *testing.T) {
	now := time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"2026-12-05T14:03:00Z", time.Date(2026, 12, 5, 14, 3, 0, 0, time.UTC)},
		{"2026-12-04 09:30", time.Date(2026, 12, 4, 9, 30, 0, 0, time.UTC)},
		{"14:03", time.Date(2026, 12, 5, 14, 3, 0, 0, time.UTC)},
		{"90m", time.Date(2026, 12, 5, 13, 30, 0, 0, time.UTC)},
	}
	for _, tc := range cases {
		got, err := parseWhen(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseWhen(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := parseWhen("-5m", now); err == nil {
		t.Error("parseWhen(-5m) = nil error")
	}
}

// TestLsNamesSSOPeople: termhost ls (the owner token, straight to the
// server) shows the person signed in by SSO who has control, by name, and
// lists them by name in --json's presence.
func TestLsNamesSSOPeople(t *testing.T) {
	roles, err := sso.NewDirectory(sso.Roles{Owners: []string{"alice@corp.com"}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := testserver.New(t, testserver.Handlers(func(c *handlers.Config) {
		c.SSO = &sso.Proxy{Header: "X-Forwarded-Email", NameHeader: "X-Forwarded-User", Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
		c.Roles = roles
	}))
	ts := &testServer{Server: srv, m: srv.Manager}
	h := http.Header{"X-Forwarded-Email": {"alice@corp.com"}, "X-Forwarded-User": {"Alice Smith"}}
	alice := ahptest.MustDial(t, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", ahptest.Options{Header: h})
	alice.Initialize("1.0.0", "web-alice")
	alice.CreateTerminal("build", "web-alice", map[string]any{"name": "build"})

	code, stdout, stderr := call(t, ownerEnv(ts), "ls")
	if code != 0 || !strings.Contains(stdout, "Alice Smith") {
		t.Errorf("ls: exit %d, want Alice Smith in control:\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = call(t, ownerEnv(ts), "ls", "--json")
	var got []lsEntry
	if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil || len(got) != 1 {
		t.Fatalf("ls --json: exit %d, %v:\n%s%s", code, err, stdout, stderr)
	}
	if got[0].Control != "Alice Smith" || len(got[0].Presence) != 1 || got[0].Presence[0].Name != "Alice Smith" || !got[0].Presence[0].Person {
		t.Errorf("ls --json entry = %+v, want Alice Smith in control and present", got[0])
	}
}

// TestUpgradeAudited: an upgrade in place (SIGUSR2) is in the audit trail,
// after the predecessor's events (nothing buffered is lost to the exec),
// and the successor appends to the same file.
func TestUpgradeAudited(t *testing.T) {
	next, err := nextBinary()
	if err != nil {
		t.Fatal(err)
	}
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	s := startUpgradable(t, "--auth", "proxy", "--trusted-proxy", "127.0.0.1", "--identity-header", "X-Forwarded-Email",
		"--owners", "alice@corp.com", "--audit-log", trail)
	base, _, _ := strings.Cut(s.url, "/#token=")
	h := http.Header{"X-Forwarded-Email": {"alice@corp.com"}}
	alice := ahptest.MustDial(t, strings.Replace(base, "http", "ws", 1)+"/ws", ahptest.Options{Header: h})
	alice.Initialize("1.0.0", "web-alice")
	s.install(t, next)
	if err := s.first.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the upgrade in the log", func() bool { return strings.Contains(s.logText(), "termhost upgraded in place") })
	var events []audit.Event
	waitFor(t, "the upgrade in the audit trail", func() bool {
		events = nil
		b, _ := os.ReadFile(trail)
		_ = audit.Read(bytes.NewReader(b), audit.Filter{}, func(e audit.Event) error { events = append(events, e); return nil })
		return len(events) > 0 && events[len(events)-1].Event == audit.ServerUpgrade
	})
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Event+" "+e.Who)
	}
	got := strings.Join(kinds, ", ")
	want := "sign-in alice@corp.com, connect alice@corp.com, disconnect alice@corp.com, server-upgrade "
	if got != want {
		t.Errorf("audit trail = %s\nwant %s", got, want)
	}
	if d := events[len(events)-1].Detail; !strings.Contains(d, "from dev to upgrade-next") {
		t.Errorf("server-upgrade detail = %q", d)
	}
}

// TestAttachNamesSSODriver: a person signed in through the SSO proxy with
// the driver role who asks the holder (attach) for control is named as a
// person, with their role, not as a share link.
func TestAttachNamesSSODriver(t *testing.T) {
	roles, err := sso.NewDirectory(sso.Roles{Owners: []string{"alice@corp.com"}, Drivers: []string{"carol@corp.com"}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := testserver.New(t, testserver.Handlers(func(c *handlers.Config) {
		c.SSO = &sso.Proxy{Header: "X-Forwarded-Email", NameHeader: "X-Forwarded-User", Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
		c.Roles = roles
	}))
	ts := &testServer{Server: srv, m: srv.Manager}
	owner := ts.dial(t)
	uri := ahp.TerminalURI(ts.shell(t, owner, "pair", owner.ClientID()))
	ask := true
	p := startPty(t, ts, 80, 24, "attach", "--take", ts.URL+"/t/pair")
	waitFor(t, "attach --take to take the claim", func() bool {
		in, _ := ts.info(uri)
		return in.Claim.ClientID != owner.ClientID()
	})
	h := http.Header{"X-Forwarded-Email": {"carol@corp.com"}, "X-Forwarded-User": {"Carol Jones"}}
	carol := ahptest.MustDial(t, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", ahptest.Options{Header: h})
	carol.Initialize("1.0.0", "web-carol", uri)
	carol.MustCall(ext.MethodRequestControl, ext.RequestControlParams{Channel: ahp.RootURI, Terminal: uri, Ask: &ask})
	p.waitOutput("Carol Jones (driver) asks for control: Ctrl-\\ y grants")
	p.typeKeys("~.")
	if code := p.exit(); code != 0 {
		t.Errorf("attach exit after ~. = %d, want 0", code)
	}
}
