package cli

import (
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

func TestKill(t *testing.T) {
	ts := newTestServer(t)
	c := ts.dial(t)
	id := ts.shell(t, c, "doomed", c.ClientID())
	code, stdout, stderr := call(t, ownerEnv(ts), "kill", id)
	if code != 0 || stdout != "" || stderr != "termhost: closed terminal doomed\n" {
		t.Fatalf("kill: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, ok := ts.info(ahp.TerminalURI(id)); ok {
		t.Errorf("the terminal is still there after kill")
	}
	code, _, stderr = call(t, ownerEnv(ts), "kill", id)
	if code != exitUsage || !strings.Contains(stderr, `no terminal "doomed"`) {
		t.Errorf("second kill: exit %d, %q", code, stderr)
	}
}
