package serve

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/internal/cmdtest"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
)

// TestMain builds the command for the tests that run the server as a
// process (and upgrade it), and checks that no test leaks a goroutine.
func TestMain(m *testing.M) { cmdtest.Main(m) }

const testToken = testserver.OwnerToken

// waitFor waits for cond as long as a loaded 2-core machine may need.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, 20*time.Second, what, cond)
}

// await receives from ch, or fails the test if nothing comes.
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

// call runs one client subcommand of the built command with exactly the
// given environment (and a HOME of its own unless given, so that no token
// file of this machine is read).
func call(t *testing.T, env map[string]string, cmd string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	c := exec.Command(cmdtest.Binary(t), append([]string{cmd}, args...)...)
	c.Env = []string{}
	if _, ok := env["HOME"]; !ok {
		c.Env = append(c.Env, "HOME="+t.TempDir())
	}
	for k, v := range env {
		c.Env = append(c.Env, k+"="+v)
	}
	var out, errOut strings.Builder
	c.Stdout, c.Stderr, c.Stdin = &out, &errOut, nil
	err := c.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("termhost %s: %v", cmd, err)
	}
	return c.ProcessState.ExitCode(), out.String(), errOut.String()
}

// refusal is a serve command line that must stop before anything starts.
type refusal struct {
	name string
	args []string
	want string // in the one line serve prints
}

// refusesToStart runs serve with each case's flags: each must exit 2 with
// one line saying what is wrong.
func refusesToStart(t *testing.T, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, cmdtest.Binary(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
			cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
			out, err := cmd.CombinedOutput()
			msg := strings.TrimSpace(string(out))
			if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("serve %v: err %v, output %q; want exit 2 and one line saying %q", tc.args, err, msg, tc.want)
			}
		})
	}
}
