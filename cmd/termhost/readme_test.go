package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/termhost/termhost/internal/cmdtest"
)

// The README's command table against the real commands: every flag it
// shows exists in that command's --help, and every flag of a command's own
// (not serve's or bench's, whose rows send the reader to --help, nor the
// connection flags every client command has) is in its row.
func TestReadmeCommandTable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "| command | what it does |")
	if start < 0 {
		t.Fatal("README.md has no command table")
	}
	table := readme[start:]
	table = table[:strings.Index(table, "\n\n")]
	rows := map[string]string{}
	cmdRe := regexp.MustCompile("`termhost ([a-z]+)")
	for _, line := range strings.Split(table, "\n") {
		if m := cmdRe.FindStringSubmatch(line); m != nil {
			rows[m[1]] += line
		}
	}
	flagRe := regexp.MustCompile(`(?m)(?:^|[\s\[(` + "`" + `])--?([a-z][a-z-]+)`)
	defRe := regexp.MustCompile(`(?m)^\s+--?([a-z][a-z-]+)`)
	common := []string{"server", "token-file", "connect-timeout", "help"}
	for _, cmd := range []string{"serve", "run", "attach", "ls", "share", "kill", "mcp", "audit", "upgrade", "bench"} {
		row, ok := rows[cmd]
		if !ok {
			t.Errorf("the README's command table has no row for termhost %s", cmd)
			continue
		}
		help := exec.Command(cmdtest.Binary(t), cmd, "--help")
		help.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		out, err := help.CombinedOutput()
		if err != nil {
			t.Fatalf("termhost %s --help: %v\n%s", cmd, err, out)
		}
		var real []string
		for _, m := range defRe.FindAllStringSubmatch(string(out), -1) { // its flag list, not its examples
			real = append(real, m[1])
		}
		var shown []string
		for _, m := range flagRe.FindAllStringSubmatch(row, -1) {
			shown = append(shown, m[1])
			if !slices.Contains(real, m[1]) && !slices.Contains(common, m[1]) {
				t.Errorf("the README's row for termhost %s shows --%s, which termhost %s --help does not have", cmd, m[1], cmd)
			}
		}
		if cmd == "serve" || cmd == "bench" {
			continue
		}
		for _, f := range real {
			if !slices.Contains(shown, f) && !slices.Contains(common, f) {
				t.Errorf("the README's row for termhost %s lacks its flag --%s", cmd, f)
			}
		}
	}
}
