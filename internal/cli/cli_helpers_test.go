package cli

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/cmdtest"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// TestMain builds the command for the tests that run it under a pty or
// signal it, and checks that no test leaks a goroutine.
func TestMain(m *testing.M) { cmdtest.Main(m) }

const testToken = testserver.OwnerToken

// testServer is the shared in-process server (bash --norc as the shell).
type testServer struct {
	*testserver.Server
	m *terminals.Manager
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	s := testserver.New(t)
	return &testServer{Server: s, m: s.Manager}
}

// dial connects a watching client, closed at cleanup.
func (ts *testServer) dial(t *testing.T, subs ...string) *client.Client {
	t.Helper()
	c, err := client.Dial(t.Context(), ts.URL, client.Options{Token: testToken, InitialSubscriptions: subs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// shell creates a bash terminal claimed by claimant and returns its id
// once the shell has prompted: the test server's shell has no integration,
// so input is not held for it, and keys typed before bash reads them
// would be echoed twice (by the tty, then by readline).
func (ts *testServer) shell(t *testing.T, c *client.Client, id, claimant string) string {
	t.Helper()
	claim := ahp.ClientClaim(claimant)
	if _, err := c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: ahp.TerminalURI(id), Claim: &claim}); err != nil {
		t.Fatalf("createTerminal: %v", err)
	}
	waitFor(t, "the shell's prompt", func() bool {
		content, _ := ts.m.Content(ahp.TerminalURI(id))
		return strings.Contains(content, "$ ")
	})
	return id
}

// info is a terminal's catalogue entry on the server.
func (ts *testServer) info(uri string) (ahp.TerminalInfo, bool) {
	for _, in := range ts.m.Terminals() {
		if in.Resource == uri {
			return in, true
		}
	}
	return ahp.TerminalInfo{}, false
}

// waitFor waits for cond as long as a loaded 2-core machine may need.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, 20*time.Second, what, cond)
}

// testApp runs subcommands in process with the given environment, stdin
// from /dev/null, and captured stdout and stderr.
func testApp(t *testing.T, env map[string]string) (*app, *testserver.SyncBuffer, *testserver.SyncBuffer) {
	t.Helper()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = null.Close() })
	out, errOut := &testserver.SyncBuffer{}, &testserver.SyncBuffer{}
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["HOME"]; !ok {
		env["HOME"] = t.TempDir() // no stray local token file
	}
	return &app{stdin: null, stdout: out, stderr: errOut, getenv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}, out, errOut
}

// call runs one subcommand in process.
func call(t *testing.T, env map[string]string, cmd string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	a, out, errOut := testApp(t, env)
	fn := map[string]func([]string) int{"run": a.runCommand, "attach": a.attachCommand, "ls": a.lsCommand, "share": a.shareCommand, "kill": a.killCommand,
		"approvals": a.approvalsCommand, "approve": a.approveCommand, "deny": a.denyCommand}[cmd]
	code = fn(args)
	return code, out.String(), errOut.String()
}

func ownerEnv(ts *testServer) map[string]string {
	return map[string]string{"TERMHOST_SERVER": ts.URL, "TERMHOST_TOKEN": testToken}
}

// oneLine checks that stderr is exactly one line holding want.
func oneLine(t *testing.T, name, stderr, want string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.Contains(stderr, want) {
		t.Errorf("%s: stderr = %q, want one line containing %q", name, stderr, want)
	}
}

// nextUntil takes a client's events until match accepts one.
func nextUntil(t *testing.T, c *client.Client, what string, match func(client.Event) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		ev, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if match(ev) {
			return
		}
	}
}

// await receives from ch, failing the test after a generous deadline rather
// than hanging the package.
func await[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("timed out waiting for the command to return")
		panic("unreachable")
	}
}
