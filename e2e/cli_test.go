//go:build e2e

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRunURLInBrowser: `termhost run` prints the terminal's URL; opened in
// Chromium it shows the command's output live and its exit code, and the
// command line tool exits with that code.
func TestRunURLInBrowser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bin := buildTermhost(t)
	cmd := exec.Command(bin, "run", "--server", e.URL, "--", "sh", "-c", "for i in 1 2 3; do echo line-$i; sleep 1; done; exit 4")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderrW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stderrW.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	// The URL comes first on stderr.
	urlRE := regexp.MustCompile(`https?://\S+/t/([A-Za-z0-9_-]+)`)
	buf := make([]byte, 4096)
	var id, path string
	deadline := time.Now().Add(20 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		n, err := stderrR.Read(buf)
		stderr.Write(buf[:n])
		if m := urlRE.FindStringSubmatch(stderr.String()); m != nil {
			id, path = m[1], strings.TrimPrefix(m[0], e.URL)
		}
		if err != nil {
			break
		}
	}
	if id == "" {
		t.Fatalf("no terminal URL on stderr: %q", stderr.String())
	}
	p := e.newPage("teammate")
	p.open(path)
	for _, want := range []string{"line-1", "line-2", "line-3"} {
		p.waitLine(id, want, 15*time.Second)
	}
	p.waitJS("the exit code in the side bar", fmt.Sprintf(`document.querySelector('.terminal-item[data-terminal=%q] .terminal-state')?.textContent === 'exited (4)'`, id), 15*time.Second)
	p.shot("run-url-exited")

	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 4 {
		t.Fatalf("termhost run: %v, want exit status 4 (stderr %q)", err, stderr.String())
	}
	for _, want := range []string{"line-1", "line-2", "line-3"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout %q lacks %s", stdout.String(), want)
		}
	}
	// The exited terminal stays on the server for teammates.
	if !e.m.Exists("ahp-terminal:/" + id) {
		t.Error("the exited terminal was disposed")
	}
}
