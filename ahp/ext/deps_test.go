package ext_test

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPure keeps ext as pure as ahp: the standard library and ahp only, and
// no I/O, logging or OS packages.
func TestPure(t *testing.T) {
	goTool, err := exec.LookPath("go") // go test puts GOROOT/bin first in PATH
	if err != nil {
		t.Fatalf("go tool not found: %v", err)
	}
	list := func(t *testing.T, format string, deps bool) []string {
		t.Helper()
		args := []string{"list", "-f", format}
		if deps {
			args = append(args, "-deps")
		}
		cmd := exec.CommandContext(t.Context(), goTool, append(args, ".")...)
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return strings.Fields(string(out))
	}

	t.Run("deps", func(t *testing.T) {
		lines := list(t, "{{.ImportPath}}:{{.Standard}}", true)
		if len(lines) < 5 {
			t.Fatalf("go list -deps printed %q; expected the standard library packages ext uses", lines)
		}
		allowed := []string{"github.com/termhost/termhost/ahp", "github.com/termhost/termhost/ahp/ext"}
		for _, l := range lines {
			path, std, _ := strings.Cut(l, ":")
			if std != "true" && !slices.Contains(allowed, path) {
				t.Errorf("ext depends on %s: only the standard library and ahp are allowed", path)
			}
		}
	})
	t.Run("direct imports", func(t *testing.T) {
		forbidden := []string{"os", "os/exec", "os/signal", "net", "net/http", "io/fs", "io/ioutil", "log", "log/slog", "syscall", "unsafe"}
		for _, imp := range list(t, "{{range .Imports}}{{.}} {{end}}", false) {
			if slices.Contains(forbidden, imp) {
				t.Errorf("ext imports %s: it does no I/O and no logging", imp)
			}
		}
	})
}
