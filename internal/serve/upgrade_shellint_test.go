package serve

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

// TestUpgradeClosesCommands: shell integration goes on
// across "termhost upgrade". A command finished before, one running during
// and one typed after the upgrade are, for a client that subscribes
// afterwards, each one complete command part with its own id, its line
// and its exit code; none is left "running".
func TestUpgradeClosesCommands(t *testing.T) {
	t.Parallel()
	s := startUpgradable(t, "--shell-integration", "on")
	channel := ahp.TerminalURI("si")
	a := watch(t, s.url, "si-a")
	claim := ahp.ClientClaim(a.c.ClientID())
	if _, err := a.c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: channel, Claim: &claim}); err != nil {
		t.Fatalf("createTerminal: %v", err)
	}
	if _, err := a.c.Subscribe(t.Context(), channel); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	typeLine := func(line string) {
		t.Helper()
		if _, err := a.c.Dispatch(t.Context(), channel, ahp.Action{Type: ahp.TerminalInput, Data: line + "\r"}); err != nil {
			t.Fatalf("input %q: %v", line, err)
		}
	}
	waitPart := func(c *client.Client, line string, complete bool) {
		t.Helper()
		waitFor(t, fmt.Sprintf("command %q complete=%v", line, complete), func() bool {
			st, _ := c.Terminal(channel)
			for _, p := range st.Content {
				if p.Type == ahp.PartCommand && p.CommandLine == line && p.IsComplete == complete {
					return true
				}
			}
			return false
		})
	}
	waitFor(t, "command detection", func() bool {
		st, _ := a.c.Terminal(channel)
		return st.SupportsCommandDetection != nil && *st.SupportsCommandDetection
	})
	typeLine("echo be''fore")
	waitPart(a.c, "echo be''fore", true)
	typeLine("read v; echo got-$v") // running while the server is upgraded
	waitPart(a.c, "read v; echo got-$v", false)

	if out, err := exec.Command(s.exe, "upgrade", "--state-dir", s.stateDir).CombinedOutput(); err != nil {
		t.Fatalf("termhost upgrade: %v, output %q", err, out)
	}
	waitFor(t, "the reconnect", func() bool { return a.saw(client.EventReconnected) })
	typeLine("z")
	waitPart(a.c, "read v; echo got-$v", true)
	typeLine("echo x")
	waitPart(a.c, "echo x", true)

	fresh := watch(t, s.url, "si-fresh", channel)
	st, ok := fresh.c.Terminal(channel)
	if !ok {
		t.Fatal("the fresh client has no state of the terminal")
	}
	var lines []string
	ids := map[string]bool{}
	for _, p := range st.Content {
		if p.Type != ahp.PartCommand {
			continue
		}
		lines = append(lines, p.CommandLine)
		if !p.IsComplete || p.ExitCode == nil || *p.ExitCode != 0 {
			t.Errorf("command %s %q: complete=%v exit=%v, want complete with exit code 0", p.CommandID, p.CommandLine, p.IsComplete, p.ExitCode)
		}
		if ids[p.CommandID] {
			t.Errorf("command id %s used twice", p.CommandID)
		}
		ids[p.CommandID] = true
	}
	if want := []string{"echo be''fore", "read v; echo got-$v", "echo x"}; strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("command parts after a fresh subscribe: %q, want %q", lines, want)
	}
}
