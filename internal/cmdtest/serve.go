package cmdtest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// loginURL is the line serve prints for its owner: the base URL and the
// token in the fragment.
var loginURL = regexp.MustCompile(`https?://\S+#token=\S+`)

// StartServe runs the built command's serve on a free loopback port with
// bash, shell integration off and a HOME and state directory of its own,
// and returns it with the login URL it printed (…/#token=…). env is added
// to its environment; its log goes to t's output and to log when not nil.
// When t ends it is stopped gracefully first, so a failed test leaves no
// shells behind.
func StartServe(t *testing.T, env []string, log io.Writer, args ...string) (*exec.Cmd, string) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(Binary(t), append([]string{"serve", "--listen", "127.0.0.1:0", "--shell", "/bin/bash",
		"--shell-integration", "off", "--log-level", "warn"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state")}, env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = t.Output()
	if log != nil {
		cmd.Stderr = io.MultiWriter(t.Output(), log)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u := loginURL.FindString(sc.Text()); u != "" {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return cmd, u
	case <-time.After(20 * time.Second):
		t.Fatal("serve printed no login URL")
		return nil, ""
	}
}
