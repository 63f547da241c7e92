package serve

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/cmdtest"
)

// TestServeRefusesCwdOutsideRoot: the default cwd of new terminals must lie
// under --root; serve says so in one line and exits 2 instead of starting.
func TestServeRefusesCwdOutsideRoot(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cmdtest.Binary(t), "serve", "--listen", "127.0.0.1:0", "--root", root, "--cwd", outside)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
		t.Fatalf("serve --root %s --cwd %s: %v (stderr %q); want exit 2", root, outside, err, stderr.String())
	}
	want := "termhost serve: invalid configuration: default cwd: " + outside + " is outside the allowed roots (" + root + ")\n"
	if stderr.String() != want {
		t.Errorf("serve --root %s --cwd %s: stderr %q, want %q", root, outside, stderr.String(), want)
	}
}
