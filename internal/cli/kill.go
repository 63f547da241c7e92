package cli

import (
	"context"
	"fmt"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

const killAbout = `Close a terminal on the server: its program gets SIGHUP (then SIGKILL after a
grace period) and the terminal is removed, for every viewer. An exited
terminal is simply removed.`

const killExamples = `  termhost kill 3f2c9a1b0d4e
  termhost ls --json | jq -r '.[] | select(.state == "exited") | .id' | xargs -n1 termhost kill`

// killCommand is "termhost kill".
func (a *app) killCommand(args []string) int {
	f := newCmdFlags("kill", "kill [flags] <id|url>", killAbout, killExamples)
	pos, code, ok := f.parse(a, args, false)
	if !ok {
		return code
	}
	t, code, ok := a.oneTarget(f, pos)
	if !ok {
		return code
	}
	ctx := context.Background()
	c, base, code := a.connect(ctx, "kill", f.conn, client.Options{})
	if c == nil {
		return code
	}
	defer func() { _ = c.Close() }()
	if code, ok := a.checkPublic("kill", f.conn, c, t); !ok {
		return code
	}
	cctx, cancel := context.WithTimeout(ctx, f.conn.timeout)
	defer cancel()
	if _, err := c.Call(cctx, ahp.MethodDisposeTerminal, ahp.ChannelParams{Channel: ahp.TerminalURIOf(t.id)}); err != nil {
		if client.IsNotFound(err) {
			return a.failf("kill", "no terminal %q on %s (see termhost ls)", t.id, base)
		}
		return a.fail("kill", base, err)
	}
	// On stderr, like share's note: stdout stays empty for scripts.
	fmt.Fprintf(a.stderr, "termhost: closed terminal %s\n", t.id)
	return exitOK
}
