package serve

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/termhost/termhost/internal/ahptest"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/cmdtest"
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
	refusesToStart(t, []refusal{
		{"no trusted proxy", []string{"--auth", "proxy", "--identity-header", "X-Forwarded-Email", "--owners", "a@corp.com"}, "--auth proxy needs --trusted-proxy"},
		{"no identity header", []string{"--auth", "proxy", "--trusted-proxy", "127.0.0.1", "--owners", "a@corp.com"}, "--auth proxy needs --identity-header"},
		{"nobody with a role", proxy, "nobody would have a role"},
		{"underscore header", []string{"--auth", "proxy", "--trusted-proxy", "127.0.0.1", "--identity-header", "X_Email", "--owners", "a@corp.com"}, "must be header names"},
		{"roles without proxy", []string{"--owners", "a@corp.com"}, "need --auth proxy"},
		{"broken roles file", append(append([]string{}, proxy...), "--roles-file", bad), "unknown key"},
		{"missing roles file", append(append([]string{}, proxy...), "--roles-file", bad+".gone"), "--roles-file"},
	})
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

	out, err := exec.Command(cmdtest.Binary(t), "audit", "--audit-log", trail+".1", "--who", "alice@corp.com", "--event", "connect").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "connect") || strings.Contains(string(out), "bob@corp.com") {
		t.Errorf("termhost audit --who alice --event connect: %v\n%s", err, out)
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
