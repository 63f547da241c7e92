package bench

import (
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/poll"
)

// TestRawShellReadDeadline: a read of the baseline's pty (and so of the
// relay's, which reads it the same way), resized as the relay's clients do,
// ends at its deadline while the shell prints nothing, as a read through
// the runtime poller does. (The resize left the master blocking: the read
// sat in read(2) until the shell's next output, and a relay told to stop
// waited for it, 15 s, until killed.)
func TestRawShellReadDeadline(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sh, err := startRaw(shellSpec{argv: []string{bash, "--norc", "--noprofile"}, dir: dir,
		env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "PS1=$ ", "TERM=xterm-256color"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.close()
	// A resize first, as the relay's clients send: it must not leave the
	// master blocking.
	if err := sh.resize(100, 30); err != nil {
		t.Fatal(err)
	}
	if err := sh.sync(poll.Long); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_ = sh.f.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		for {
			if _, err := sh.f.Read(sh.buf); err != nil {
				read <- err
				return
			}
		}
	}()
	select {
	case err := <-read:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read of an idle shell's pty: %v, want the deadline's error", err)
		}
	case <-time.After(poll.Long):
		t.Fatalf("a read of an idle shell's pty did not end at its deadline within %v", poll.Long)
	}
}
