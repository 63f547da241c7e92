package terminals

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"golang.org/x/sys/unix"
)

// rootsTree builds base/{root/{sub,in-link → sub,out-link → outside},
// rootx, outside, link-to-root → root} and returns base.
func rootsTree(t *testing.T) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"root/sub", "rootx", "outside"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"root/in-link": "sub", "root/out-link": "../outside", "link-to-root": "root"} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

func TestResolveCwdRoots(t *testing.T) {
	base := rootsTree(t)
	p := func(rel string) string { return filepath.Join(base, rel) }
	tests := []struct {
		name   string
		roots  []string
		cwd    string // a path, sent as a file URI
		want   string // the directory, "" when refused
		reason string // part of the error when refused
	}{
		{"root / allows /", []string{"/"}, "/", "/", ""},
		{"root / allows /etc", []string{"/"}, "/etc", "/etc", ""},
		{"root / allows a deep directory", []string{"/"}, p("root/sub"), p("root/sub"), ""},
		{"the root itself", []string{p("root")}, p("root"), p("root"), ""},
		{"under the root", []string{p("root")}, p("root/sub"), p("root/sub"), ""},
		{"root with a trailing slash", []string{p("root") + "/"}, p("root/sub"), p("root/sub"), ""},
		{"sibling sharing the prefix", []string{p("root")}, p("rootx"), "", "outside the allowed roots"},
		{"parent of the root", []string{p("root")}, base, "", "outside the allowed roots"},
		{"dot-dot out of the root", []string{p("root")}, p("root") + "/../outside", "", "outside the allowed roots"},
		{"symlink inside pointing inside", []string{p("root")}, p("root/in-link"), p("root/in-link"), ""},
		{"symlink inside pointing outside", []string{p("root")}, p("root/out-link"), "", "outside the allowed roots"},
		{"symlink outside pointing inside", []string{p("root")}, p("link-to-root/sub"), p("link-to-root/sub"), ""},
		{"root given through a symlink", []string{p("link-to-root")}, p("root/sub"), p("root/sub"), ""},
		{"second of two roots", []string{p("rootx"), p("root")}, p("root/sub"), p("root/sub"), ""},
		{"missing directory", []string{p("root")}, p("root/missing"), "", "not an existing directory"},
		{"no roots allow anything", nil, p("outside"), p("outside"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Cwd: "/", Roots: tc.roots}
			got, err := cfg.resolveCwd(ahp.FileURI(tc.cwd))
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("roots %q, cwd %s: got %q, %v; want %q, nil", tc.roots, tc.cwd, got, err, tc.want)
				}
				return
			}
			if err == nil || !errors.Is(err, errBadCwd) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("roots %q, cwd %s: got %q, %v; want an errBadCwd error containing %q", tc.roots, tc.cwd, got, err, tc.reason)
			}
		})
	}
}

func TestNewManagerChecksDefaultCwd(t *testing.T) {
	base := rootsTree(t)
	p := func(rel string) string { return filepath.Join(base, rel) }
	tests := []struct {
		name   string
		roots  []string
		cwd    string
		reason string // part of the error, "" when NewManager succeeds
	}{
		{"no roots", nil, p("outside"), ""},
		{"root /", []string{"/"}, p("outside"), ""},
		{"cwd is the root", []string{p("root")}, p("root"), ""},
		{"cwd under the root", []string{p("root")}, p("root/sub"), ""},
		{"cwd outside the root", []string{p("root")}, p("outside"), "default cwd: " + p("outside") + " is outside the allowed roots (" + p("root") + ")"},
		{"cwd sharing the root's prefix", []string{p("root")}, p("rootx"), "is outside the allowed roots"},
		{"cwd symlink resolving outside", []string{p("root")}, p("root/out-link"), "is outside the allowed roots"},
		{"missing cwd", []string{p("root")}, p("root/missing"), "no such file or directory"},
		{"missing root", []string{p("nope")}, p("root"), "root " + p("nope") + " is not an existing directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewManager(Config{Shell: "/bin/sh", Cwd: tc.cwd, Roots: tc.roots})
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("NewManager(roots %q, cwd %s): %v; want it to start", tc.roots, tc.cwd, err)
				}
				m.Close()
				return
			}
			if err == nil {
				m.Close()
				t.Fatalf("NewManager(roots %q, cwd %s) started; want an error containing %q", tc.roots, tc.cwd, tc.reason)
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("NewManager(roots %q, cwd %s): %v; want an ErrConfig error containing %q", tc.roots, tc.cwd, err, tc.reason)
			}
		})
	}
}

// TestRuntimeDir: shell-integration files go where $TMPDIR says when it is
// set, else to a RAM-backed directory ($XDG_RUNTIME_DIR first), so that a
// nonce never reaches a disk.
func TestRuntimeDir(t *testing.T) {
	tmp, xdg := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	if got := runtimeDir(); got != tmp {
		t.Errorf("with TMPDIR: %q, want %q", got, tmp)
	}
	t.Setenv("TMPDIR", "")
	if got := runtimeDir(); got != xdg {
		t.Errorf("with XDG_RUNTIME_DIR: %q, want %q", got, xdg)
	}
	t.Setenv("XDG_RUNTIME_DIR", "relative/dir")
	want := os.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && unix.Access("/dev/shm", unix.W_OK|unix.X_OK) == nil {
		want = "/dev/shm"
	}
	if got := runtimeDir(); got != want {
		t.Errorf("without both: %q, want %q", got, want)
	}
	m, err := NewManager(Config{Shell: "/bin/bash"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if filepath.Dir(m.scripts) != want {
		t.Errorf("the manager's directory %s is not in %s", m.scripts, want)
	}
}
