package serve

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
)

// commandTerminal creates a terminal running bash --norc -c script,
// claimed by w's client, and subscribes w to it.
func commandTerminal(t *testing.T, w *watcher, channel, script string) {
	t.Helper()
	claim := ahp.ClientClaim(w.c.ClientID())
	meta := fmt.Sprintf(`{"termhost/command": ["/bin/bash", "--norc", "-c", %q]}`, script)
	if _, err := w.c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: channel, Claim: &claim, Meta: []byte(meta)}); err != nil {
		t.Fatalf("createTerminal: %v", err)
	}
	if _, err := w.c.Subscribe(t.Context(), channel); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
}

// upgradeNow installs the next binary and runs "termhost upgrade".
func upgradeNow(t *testing.T, s *upgradeServer) {
	t.Helper()
	next, err := nextBinary()
	if err != nil {
		t.Fatal(err)
	}
	s.install(t, next)
	if out, err := exec.Command(s.exe, "upgrade", "--state-dir", s.stateDir).CombinedOutput(); err != nil {
		t.Fatalf("termhost upgrade: %v, output %q", err, out)
	}
}

// joined is what a client joining now gets of channel: its snapshot's
// content, written in order (the history, then the screen's redraw).
func joined(t *testing.T, url, channel string) string {
	t.Helper()
	c, err := client.Dial(t.Context(), url, client.Options{Token: testToken, ClientID: "joiner", InitialSubscriptions: []string{channel}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	st, ok := c.Terminal(channel)
	if !ok {
		t.Fatalf("the joiner has no state of %s", channel)
	}
	return content(st)
}

// previews is what "termhost ls --preview" prints of the screens, and its
// standard error.
func previews(t *testing.T, url string) (string, string) {
	t.Helper()
	code, stdout, stderr := call(t, map[string]string{"TERMHOST_SERVER": url, "TERMHOST_TOKEN": testToken}, "ls", "--preview")
	if code != 0 {
		t.Fatalf("ls --preview: exit %d, %s", code, stderr)
	}
	_, screens, _ := strings.Cut(stdout, "\n── ")
	return screens, stderr
}

// TestUpgradeKeepsScreens: "termhost upgrade" carries the screen model
// over. A full-screen program's screen is after the upgrade what it was
// before, for x-termhost/screen, "termhost ls --preview" and a client
// joining (the exact screen's redraw in its snapshot).
func TestUpgradeKeepsScreens(t *testing.T) {
	t.Parallel()
	s := startUpgradable(t)
	channel := ahp.TerminalURI("full")
	a := watch(t, s.url, "screen-a")
	commandTerminal(t, a, channel, `printf '\e[?1049h\e[2J\e[H\e[1;33mfull-%s\e[0m\e[5;10Hcell\e[3;1H' screen; read x; exit 0`)
	var before ext.ScreenResult
	waitFor(t, "the full-screen program on the model's screen", func() bool {
		r, err := a.c.Screen(t.Context(), channel)
		before = r
		return err == nil && r.AltScreen && len(r.Lines) > 4 && r.Lines[4] == "         cell"
	})
	joinedBefore := joined(t, s.url, channel)
	if !strings.Contains(joinedBefore, "\x1b[?1049h") || !strings.Contains(joinedBefore, "full-screen") {
		t.Fatalf("a joiner's content before the upgrade = %q, want the screen's redraw", joinedBefore)
	}
	previewBefore, _ := previews(t, s.url)
	if !strings.Contains(previewBefore, "full-screen") {
		t.Fatalf("ls --preview before the upgrade: %q", previewBefore)
	}

	upgradeNow(t, s)
	waitFor(t, "the reconnect", func() bool { return a.saw(client.EventReconnected) })
	after, err := a.c.Screen(t.Context(), channel)
	if err != nil {
		t.Fatalf("x-termhost/screen after the upgrade: %v", err)
	}
	if strings.Join(after.Lines, "\n") != strings.Join(before.Lines, "\n") || after.AltScreen != before.AltScreen ||
		after.Cols != before.Cols || after.Rows != before.Rows {
		t.Fatalf("x-termhost/screen after the upgrade:\n%+v\nwant what it was before:\n%+v", after, before)
	}
	if got := joined(t, s.url, channel); got != joinedBefore {
		t.Fatalf("a joiner's content after the upgrade:\n%q\nwant what it was before:\n%q", got, joinedBefore)
	}
	if got, stderr := previews(t, s.url); got != previewBefore || stderr != "" {
		t.Fatalf("ls --preview after the upgrade: %q (stderr %q), want what it was before: %q", got, stderr, previewBefore)
	}
}
