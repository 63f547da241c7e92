package ahp_test

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPure keeps the protocol packages pure: the standard library and the
// listed protocol packages only, and no I/O, logging or OS packages, so any
// Go program can import them without pulling in dependencies.
func TestPure(t *testing.T) {
	const mod = "github.com/termhost/termhost/"
	pure := []struct {
		pkg     string
		allowed []string // the non-standard packages it may depend on (itself included)
	}{
		{mod + "ahp", []string{mod + "ahp"}},
		{mod + "ahp/ext", []string{mod + "ahp", mod + "ahp/ext"}},
	}
	forbidden := []string{"os", "os/exec", "os/signal", "net", "net/http", "io/fs", "io/ioutil", "log", "log/slog", "syscall", "unsafe"}
	goTool, err := exec.LookPath("go") // go test puts GOROOT/bin first in PATH
	if err != nil {
		t.Fatalf("go tool not found: %v", err)
	}
	list := func(t *testing.T, pkg, format string, deps bool) []string {
		t.Helper()
		args := []string{"list", "-f", format}
		if deps {
			args = append(args, "-deps")
		}
		cmd := exec.CommandContext(t.Context(), goTool, append(args, pkg)...)
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("go %s: %v\n%s", strings.Join(append(args, pkg), " "), err, stderr)
		}
		return strings.Fields(string(out))
	}
	for _, p := range pure {
		name := strings.TrimPrefix(p.pkg, mod)
		t.Run(name+"/deps", func(t *testing.T) {
			lines := list(t, p.pkg, "{{.ImportPath}}:{{.Standard}}", true)
			if len(lines) < 5 {
				t.Fatalf("go list -deps printed %q; expected the standard library packages %s uses", lines, name)
			}
			for _, l := range lines {
				path, std, _ := strings.Cut(l, ":")
				if std != "true" && !slices.Contains(p.allowed, path) {
					t.Errorf("%s depends on %s: only the standard library and %v are allowed", name, path, p.allowed)
				}
			}
		})
		t.Run(name+"/direct imports", func(t *testing.T) {
			for _, imp := range list(t, p.pkg, "{{range .Imports}}{{.}} {{end}}", false) {
				if slices.Contains(forbidden, imp) {
					t.Errorf("%s imports %s: it does no I/O and no logging", name, imp)
				}
			}
		})
	}
}
