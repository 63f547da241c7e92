package terminals

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/ahp"

	"github.com/termhost/termhost/internal/poll"
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("read /proc/self/fd: %v", err)
	}
	return len(entries)
}

// waitFDs waits until at most want descriptors are open.
func waitFDs(t *testing.T, want int) {
	t.Helper()
	if got, ok := poll.Last(poll.Short, func() (int, bool) { got := openFDs(t); return got, got <= want }); !ok {
		t.Fatalf("open fds = %d after the exit, want %d (as before the terminal started): the pty is still open", got, want)
	}
}

// TestExitReleasesPty: a terminal whose shell exits
// releases its pty master, its input writer and its goroutines at once;
// its content and lifecycle stay subscribable until it is disposed.
func TestExitReleasesPty(t *testing.T) {
	for _, tc := range []struct {
		name     string
		input    string
		exitCode *int // nil: killed by a signal
	}{
		{"exit 3", "echo by''e; exit 3\r", ptr(3)},
		{"killed", "echo by''e; kill -9 $$\r", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testManager(t, Config{DisposeGrace: 100 * time.Millisecond})
			defer m.Close()
			// A first terminal opens what the runtime keeps open for good (the
			// poller's descriptors), so the counts below see only a terminal's.
			warm := "ahp-terminal:/warm"
			claim := ahp.ClientClaim("me")
			if err := m.Create(ahp.CreateTerminalParams{Channel: warm, Claim: &claim}); err != nil {
				t.Fatal(err)
			}
			if err := m.Dispose(warm); err != nil {
				t.Fatal(err)
			}
			fdsBefore := openFDs(t)
			goroutinesBefore := goleak.IgnoreCurrent()

			uri := "ahp-terminal:/exits"
			rec := claimedTerminal(t, m, uri)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			if err := rec.waitFor(ctx, "$ "); err != nil {
				t.Fatal(err)
			}
			if got := openFDs(t); got <= fdsBefore {
				t.Fatalf("open fds while running = %d, want more than %d (the count does not see the pty)", got, fdsBefore)
			}
			m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, input(t, tc.input), Policy{})
			if err := rec.waitFor(ctx, `"terminal/exited"`); err != nil {
				t.Fatal(err)
			}

			waitFDs(t, fdsBefore)
			if err := goleak.Find(goroutinesBefore); err != nil {
				t.Errorf("goroutines left by the exited terminal (before its dispose): %v", err)
			}

			// The state stays: a new subscriber gets the content and the exit.
			snap, err := m.Subscribe(newRecorder("late"), uri)
			if err != nil {
				t.Fatalf("Subscribe after the exit: %v", err)
			}
			st := snap.State.(ahp.TerminalState)
			var out strings.Builder
			for _, p := range st.Content {
				out.WriteString(p.Text())
			}
			if !strings.Contains(out.String(), "bye") {
				t.Errorf("content after the exit = %q, want it to hold %q", out.String(), "bye")
			}
			if !st.Lifecycle.Exited() || !sameCode(st.Lifecycle.ExitCode, tc.exitCode) {
				t.Errorf("lifecycle after the exit = %+v, want exited with code %v", st.Lifecycle, fmtCode(tc.exitCode))
			}
			// A resize of the released pty is state only, not a failure.
			resize := ahp.Action{Type: ahp.TerminalResized, Cols: 100, Rows: 30}
			if got := m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 2}, uri, resize, Policy{}); got != Accepted {
				t.Errorf("resize after the exit = %v, want Accepted", got)
			}
			if err := m.Dispose(uri); err != nil {
				t.Errorf("Dispose after the exit: %v", err)
			}
			if m.Exists(uri) {
				t.Errorf("terminal still exists after Dispose")
			}
		})
	}
}

func sameCode(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// TestRunsCommandMeta: a terminal that runs a command
// instead of a shell says so in its catalogue _meta (the workbench then
// does not blame shell integration for listing no commands); a shell's
// terminal does not.
func TestRunsCommandMeta(t *testing.T) {
	m := testManager(t, Config{})
	defer m.Close()
	claim := ahp.ClientClaim("c")
	create := func(uri, meta string) {
		if err := m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim, Cols: 80, Rows: 24, Meta: json.RawMessage(meta)}); err != nil {
			t.Fatal(err)
		}
	}
	create("ahp-terminal:/cmd", `{"termhost/command": ["/bin/sleep", "60"]}`)
	create("ahp-terminal:/shell", "")
	for _, info := range m.hub.Terminals() {
		runs := strings.Contains(string(info.Meta), `"`+MetaRunsCommand+`":true`)
		if want := info.Resource == "ahp-terminal:/cmd"; runs != want {
			t.Errorf("%s _meta %s: runsCommand %v, want %v", info.Resource, info.Meta, runs, want)
		}
	}
}
