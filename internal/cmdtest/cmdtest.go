// Package cmdtest builds the termhost command for the tests that run it as
// a process (under a pty, with signals, or as the server an upgrade
// replaces), and captures what a command writes on os.Stdout and os.Stderr
// for those that run it in process.
package cmdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// Package is the termhost command's import path, to build it.
const Package = "github.com/termhost/termhost/cmd/termhost"

// dir holds the builds; binary is the termhost command built once for the
// tests that run it, and binErr says why it is missing.
var dir, binary, binErr = "", "", error(nil)

// Main is a test package's TestMain: it builds the command (see Binary),
// runs the tests, checks that they leaked no goroutine, and removes the
// build.
func Main(m *testing.M) {
	var err error
	dir, err = os.MkdirTemp("", "termhost-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary, binErr = Build("termhost")
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// Binary is the command Main built; the test fails if the build did.
func Binary(t *testing.T) string {
	t.Helper()
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binary
}

// Build builds the command as name, next to Binary's, with more go build
// flags (e.g. -ldflags "-X main.version=…"); Main removes it at the end.
func Build(name string, flags ...string) (string, error) {
	path := filepath.Join(dir, name)
	args := append(append([]string{"build"}, flags...), "-o", path, Package)
	if out, err := exec.Command(GoTool(), args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return path, nil
}

// GoTool is the go command.
func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "/usr/local/go/bin/go" // where the Makefile puts Go on PATH
}

// Stdio is what a function wrote on os.Stdout and os.Stderr.
type Stdio struct{ Stdout, Stderr string }

// CaptureStdio runs fn with os.Stdout and os.Stderr sent to files. No test
// that uses it may be parallel: nothing else may write meanwhile.
func CaptureStdio(t *testing.T, fn func()) Stdio {
	t.Helper()
	dir := t.TempDir()
	files := make([]*os.File, 2)
	for i, name := range []string{"stdout", "stderr"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[i] = f
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = files[0], files[1]
	func() {
		defer func() { os.Stdout, os.Stderr = oldOut, oldErr }()
		fn()
	}()
	var out [2]string
	for i, f := range files {
		_ = f.Close()
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return Stdio{out[0], out[1]}
}
