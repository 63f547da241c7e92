package handlers_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/proctest"
)

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// fdBaseline is openFDs once a terminal has been created and disposed: the
// first terminal of the process opens the pty package's shared watcher
// (an epoll set and its eventfd, kept for the life of the program), which
// a test run alone must count in its baseline. Dispose closes a terminal's
// descriptors before it returns.
func fdBaseline(t *testing.T, ts *testServer) int {
	t.Helper()
	uri := ahp.TerminalURI("fd-baseline")
	claim := ahp.ClientClaim("fd-baseline")
	if err := ts.m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim}); err != nil {
		t.Fatal(err)
	}
	if err := ts.m.Dispose(uri); err != nil {
		t.Fatal(err)
	}
	return openFDs(t)
}

// TestCreateDispose100: after creating and disposing 100 terminals (some with
// background jobs, some already exited) no child process is left and the fd
// count is back to its baseline.
func TestCreateDispose100(t *testing.T) {
	ts := newServer(t, func(tc *terminalsConfig, _ *handlersConfig) { tc.MaxTerminals = 100 })
	c := ts.dial(t)
	c.Initialize("1.0.0", "churn")
	c.MustCall("ping", map[string]any{"channel": ahp.RootURI})
	baseFDs := fdBaseline(t, ts)
	if kids := proctest.Children(t); len(kids) != 0 {
		t.Fatalf("children before: %v", kids)
	}
	const n = 100
	// Jobs get durations unique to this run, so orphans (reparented away from
	// us) can be found by their command line.
	jobA, jobB := fmt.Sprint(40000+os.Getpid()%10000), fmt.Sprint(50000+os.Getpid()%10000)
	for i := range n {
		c.MustCall("createTerminal", map[string]any{"channel": ahp.TerminalURI(fmt.Sprint("t", i)),
			"claim": map[string]any{"kind": "client", "clientId": "churn"}})
	}
	// A third run background jobs that ignore SIGHUP; a third exit by themselves.
	for i := 0; i < n; i += 3 {
		c.Dispatch(ahp.TerminalURI(fmt.Sprint("t", i)), map[string]any{"type": "terminal/input", "data": fmt.Sprintf("(trap '' HUP; sleep %s) & sleep %s &\r", jobA, jobB)})
	}
	for i := 1; i < n; i += 3 {
		c.Dispatch(ahp.TerminalURI(fmt.Sprint("t", i)), map[string]any{"type": "terminal/input", "data": "exit 0\r"})
	}
	c.MustCall("ping", map[string]any{"channel": ahp.RootURI})
	withJobs := (n + 2) / 3
	poll.Until(t, 30*time.Second, "background jobs running", func() bool {
		return len(processesRunning("sleep", jobA)) == withJobs && len(processesRunning("sleep", jobB)) == withJobs
	})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := ts.m.Dispose(ahp.TerminalURI(fmt.Sprint("t", i))); err != nil {
				t.Errorf("dispose t%d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if kids := proctest.Children(t); len(kids) != 0 {
		t.Errorf("children left after dispose: %v", kids)
	}
	// Dispose has sent SIGKILL to every process of each session; a loaded
	// machine may take a moment to schedule their deaths.
	poll.Until(t, 10*time.Second, "the background jobs to end after dispose", func() bool {
		return len(processesRunning("sleep", jobA))+len(processesRunning("sleep", jobB)) == 0
	})
	if got := openFDs(t); got > baseFDs {
		t.Errorf("open fds: %d, baseline %d", got, baseFDs)
	}
	if len(ts.m.Terminals()) != 0 {
		t.Errorf("catalogue not empty")
	}
}

// TestBadInputIsolation: one client floods garbage, wrong params and input
// while another drives a terminal; the other sees exact output.
func TestBadInputIsolation(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	good := ts.dial(t)
	good.Initialize("1.0.0", "good")
	uri, _ := good.CreateTerminal("iso", "good", nil)

	bad := ts.dial(t)
	bad.Initialize("1.0.0", "bad")
	bad.Subscribe(uri)
	done := make(chan struct{})
	go func() {
		defer close(done)
		frames := []string{`{`, `[]`, `{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"channel":5}}`,
			`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"` + uri + `","clientSeq":1,"action":{"type":"terminal/resized","cols":-1,"rows":0}}}`,
			`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"` + uri + `","clientSeq":2,"action":{"type":"terminal/data","data":"FORGED"}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"createTerminal","params":{"channel":"` + uri + `","claim":{"kind":"client","clientId":"bad"}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"disposeTerminal","params":{"channel":"ahp-terminal:/other"}}`,
		}
		for i := 0; i < 300; i++ {
			for _, f := range frames {
				if bad.Conn().Write(t.Context(), 1, []byte(f)) != nil {
					return
				}
			}
		}
	}()
	for i := range 5 {
		good.Dispatch(uri, map[string]any{"type": "terminal/input", "data": fmt.Sprintf("echo good-$((%d*11))\r", i)})
		good.WaitOutput(uri, fmt.Sprintf("good-%d\r\n", i*11))
	}
	<-done
	bad.SetNextID(1000) // above the raw frames' ids
	bad.MustCall("ping", map[string]any{"channel": ahp.RootURI})
	out := good.Output(uri)
	if strings.Contains(out, "FORGED") {
		t.Error("forged data reached another client")
	}
	st := good.Subscribe(uri).State.(ahp.TerminalState)
	if st.Cols != 80 || st.Rows != 24 || st.Claim.ClientID != "good" || st.Lifecycle.Exited() {
		t.Errorf("state harmed by bad input: %+v", st)
	}
}

// processesRunning lists the processes whose argv is exactly argv.
func processesRunning(argv ...string) []int {
	want := strings.Join(argv, "\x00") + "\x00"
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == want {
			out = append(out, pid)
		}
	}
	return out
}
