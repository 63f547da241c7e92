package terminals

import (
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

func TestShellEnv(t *testing.T) {
	env := shellEnv([]string{"PATH=/bin", "TERMHOST_TOKEN=secret", "TERMHOST_SERVER=x", "TERM=dumb", "LANG=de_DE.UTF-8", "HOME=/h"})
	joined := strings.Join(env, "\n")
	for _, bad := range []string{"TERMHOST_", "TERM=dumb", "secret"} {
		if strings.Contains(joined, bad) {
			t.Errorf("env has %q:\n%s", bad, joined)
		}
	}
	for _, want := range []string{"TERM=xterm-256color", "COLORTERM=truecolor", "LANG=de_DE.UTF-8", "PATH=/bin", "HOME=/h"} {
		if !strings.Contains(joined, want) {
			t.Errorf("env lacks %q", want)
		}
	}
	if env := strings.Join(shellEnv([]string{"PATH=/bin"}), " "); !strings.Contains(env, "LANG=C.UTF-8") {
		t.Errorf("no LANG default: %s", env)
	}
}

func TestResolveCwd(t *testing.T) {
	root := t.TempDir()
	cfg := Config{Cwd: "/", Roots: []string{root}}
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"", true},
		{ahp.FileURI(root), true},
		{"file://localhost" + root, true},
		{"file:///etc", false},                  // outside the roots
		{ahp.FileURI(root) + "/../", false},     // escapes the root
		{ahp.FileURI(root + "/missing"), false}, // does not exist
		{root, false},                           // not a URI
		{"http://x" + root, false},              // not file:
		{"file://otherhost" + root, false},      // another host
	} {
		_, err := cfg.resolveCwd(tc.uri)
		if (err == nil) != tc.ok {
			t.Errorf("resolveCwd(%q): err %v, want ok=%v", tc.uri, err, tc.ok)
		}
	}
}
