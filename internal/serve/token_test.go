package serve

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/cmdtest"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
)

// serveOnce runs the built binary's serve command with the state directory
// dir until it listens, signs in as the owner when signIn is set (a session
// the state directory keeps), stops it and returns what it logged.
func serveOnce(t *testing.T, dir string, signIn bool, args ...string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(cmdtest.Binary(t), append([]string{"serve", "--listen", "127.0.0.1:0", "--shell", "/bin/bash",
		"--shell-integration", "off", "--log-level", "info", "--state-dir", dir}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	var stdout, stderr testserver.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	login := regexp.MustCompile(`https?://\S+#token=\S+`)
	poll.Until(t, 30*time.Second, "serve to print its login URL", func() bool { return login.MatchString(stdout.String()) })
	if signIn {
		base, token, _ := strings.Cut(login.FindString(stdout.String()), "/#token=")
		resp, err := http.Post(base+"/auth/login", "application/json", strings.NewReader(`{"token":"`+token+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("owner sign-in: HTTP %d", resp.StatusCode)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	return stderr.String()
}

// The first start of a fresh install signs nobody out and says nothing of
// the kind; a new token that does end sessions from before says so.
func TestServeFreshStartSignsNobodyOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	log := serveOnce(t, dir, true)
	if strings.Contains(log, "signed out") {
		t.Errorf("the first start with an empty state directory speaks of signing out:\n%s", log)
	}
	if !strings.Contains(log, "a new owner token was made and saved") {
		t.Errorf("the first start does not say it made the owner token:\n%s", log)
	}
	// Signed in above: a new token signs that session out, and says so.
	log = serveOnce(t, dir, false, "--new-token")
	if !strings.Contains(log, "a new owner token replaced the saved one") || !strings.Contains(log, "owner sessions and share links from before are signed out") {
		t.Errorf("--new-token over a signed-in session: the log does not say it replaced the token and signed the session out:\n%s", log)
	}
	// A new token again, with no session since: nobody to sign out.
	if log = serveOnce(t, dir, false, "--new-token"); strings.Contains(log, "signed out") {
		t.Errorf("--new-token with no session from before speaks of signing out:\n%s", log)
	}
}
