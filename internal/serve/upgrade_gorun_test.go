package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/cmdtest"
	"github.com/termhost/termhost/internal/poll"
)

// TestUpgradeGoRun: a server started with "go run" runs
// Go's own build, so there is no new binary to hand over to: termhost
// upgrade says so plainly, and the server, sent SIGUSR2 anyway, refuses
// with the same words and serves on.
func TestUpgradeGoRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stateDir, logPath := filepath.Join(dir, "state"), filepath.Join(dir, "log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(cmdtest.GoTool(), "run", cmdtest.Package, "serve", "--listen", "127.0.0.1:0", "--token", testToken,
		"--state-dir", stateDir, "--shell", "/bin/bash")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "xdg"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go and the server: stopped together
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logText := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
		// go may exit before the server it ran has finished shutting down
		// (writing the state directory): wait for the whole group, or the
		// temporary directory's removal races its last writes.
		if !poll.Eventually(poll.Long, func() bool { return syscall.Kill(-cmd.Process.Pid, 0) == syscall.ESRCH }) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Errorf("the go run server's processes still run %v after SIGTERM", poll.Long)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logText())
		}
	})
	// go run builds first: allow for a slow, shared machine.
	pid, ok := poll.Last(3*time.Minute, func() (int, bool) {
		pid, _ := readPid(filepath.Join(stateDir, pidFileName))
		return pid, pid != 0 && strings.Contains(logText(), "#token=")
	})
	if !ok {
		t.Fatal("the go run server did not start")
	}
	const plain = "there is no new binary to hand over to"

	out, err := exec.Command(cmdtest.Binary(t), "upgrade", "--state-dir", stateDir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "go run") || !strings.Contains(string(out), plain) {
		t.Fatalf("termhost upgrade of a go run server: %v, output %q, want an error saying %q", err, out, plain)
	}
	if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the refusal in the log", func() bool {
		l := logText()
		return strings.Contains(l, "upgrade refused, serving on") && strings.Contains(l, plain)
	})
	url := strings.TrimSuffix(regexpLoginURL.FindString(logText()), "/#token=")
	c, err := client.Dial(t.Context(), url, client.Options{Token: testToken})
	if err != nil {
		t.Fatalf("the go run server no longer serves after the refused upgrade: %v", err)
	}
	_ = c.Close()
}
