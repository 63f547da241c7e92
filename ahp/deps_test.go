package ahp_test

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestStandardLibraryOnly keeps ahp on the standard library and off I/O,
// logging and OS packages: it is the pure protocol, which any Go program can
// import without pulling in dependencies.
func TestStandardLibraryOnly(t *testing.T) {
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
			t.Fatalf("go list -deps printed %q; expected the standard library packages ahp uses", lines)
		}
		for _, l := range lines {
			path, std, _ := strings.Cut(l, ":")
			if std != "true" && path != "github.com/termhost/termhost/ahp" {
				t.Errorf("ahp depends on non-standard package %s", path)
			}
		}
	})
	t.Run("direct imports", func(t *testing.T) {
		forbidden := []string{"os", "os/exec", "os/signal", "net", "net/http", "io/fs", "io/ioutil", "log", "log/slog", "syscall", "unsafe"}
		for _, imp := range list(t, "{{range .Imports}}{{.}} {{end}}", false) {
			if slices.Contains(forbidden, imp) {
				t.Errorf("ahp imports %s: it does no I/O and no logging", imp)
			}
		}
	})
}
