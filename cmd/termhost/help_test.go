package main

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/termhost/termhost/internal/cmdtest"
)

// TestHelpListsClientFlags: the top-level help shows every flag of the
// client commands it lists with their flags (ls --preview and share --label
// included), so that a user finds them without each --help; the connection
// flags are described once.
func TestHelpListsClientFlags(t *testing.T) {
	var top bytes.Buffer
	usage(&top)
	conn := map[string]bool{"--server": true, "--token-file": true, "--connect-timeout": true, "--help": true}
	for _, cmd := range []string{"ls", "share", "kill", "attach", "approvals", "approve", "deny"} {
		var code int
		got := cmdtest.CaptureStdio(t, func() { code = runCLI([]string{cmd, "--help"}) })
		if code != exitOK {
			t.Fatalf("%s --help: exit %d, %s", cmd, code, got.Stderr)
		}
		for _, m := range regexp.MustCompile(`(?m)^  (--[a-z-]+)`).FindAllStringSubmatch(got.Stdout+got.Stderr, -1) {
			if !conn[m[1]] && !regexp.MustCompile(`(?m)^  termhost `+cmd+` .*`+m[1]+`\b`).MatchString(top.String()) {
				t.Errorf("termhost --help does not show %s %s:\n%s", cmd, m[1], top.String())
			}
		}
	}
}
