package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/testserver"
)

// attachRun is "termhost attach" running in this process with stdin from a
// pipe the test types into.
type attachRun struct {
	keys           *os.File
	stdout, stderr *testserver.SyncBuffer
	code           chan int
}

// startAttach attaches to id and waits until attach holds the claim: by
// then its signal handler and stdin pump run.
func startAttach(t *testing.T, ts *testServer, id string) *attachRun {
	t.Helper()
	a, out, errOut := testApp(t, ownerEnv(ts))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	a.stdin = r
	run := &attachRun{keys: w, stdout: out, stderr: errOut, code: make(chan int, 1)}
	go func() { run.code <- a.attachCommand([]string{id}) }()
	owner := ""
	waitFor(t, "attach to take the claim", func() bool {
		info, ok := ts.info(ahp.TerminalURI(id))
		owner = info.Claim.ClientID
		return ok && owner != "" && owner != "creator"
	})
	return run
}

func (r *attachRun) typeKeys(t *testing.T, s string) {
	t.Helper()
	if _, err := r.keys.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestAttachInProcess: the ways an attach session ends, each with its exit
// code and its one note on stderr, while typed keys reach the shell.
func TestAttachInProcess(t *testing.T) {
	ts := newTestServer(t)
	tests := []struct {
		name     string
		end      func(t *testing.T, r *attachRun, id string)
		wantCode int
		wantNote string // the last line on stderr, %s: the terminal's URL
	}{
		{"Ctrl-\\ Ctrl-\\ detaches", func(t *testing.T, r *attachRun, _ string) { r.typeKeys(t, "\x1c\x1c") },
			exitOK, "termhost: detached from %s; it keeps running"},
		{"~. after Enter detaches", func(t *testing.T, r *attachRun, _ string) { r.typeKeys(t, "\r~.") },
			exitOK, "termhost: detached from %s; it keeps running"},
		{"end of input detaches", func(t *testing.T, r *attachRun, _ string) { _ = r.keys.Close() },
			exitOK, "termhost: detached from %s; it keeps running"},
		{"remote exit code", func(t *testing.T, r *attachRun, _ string) { r.typeKeys(t, "exit 3\r") },
			3, "termhost: the terminal exited with code 3"},
		{"closed on the server", func(t *testing.T, _ *attachRun, id string) {
			if code, _, stderr := call(t, ownerEnv(ts), "kill", id); code != exitOK {
				t.Fatalf("kill %s: exit %d, %q", id, code, stderr)
			}
		}, exitFail, "termhost: the terminal was closed on the server"},
		{"SIGTERM leaves it running", func(t *testing.T, _ *attachRun, _ string) {
			if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}, 128 + int(syscall.SIGTERM), "termhost: terminated; the terminal keeps running at %s"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ts.dial(t)
			id := ts.shell(t, c, fmt.Sprintf("att%d", i), "creator")
			r := startAttach(t, ts, id)
			r.typeKeys(t, "echo typed-$((6*7))\r")
			waitFor(t, "the typed command's output", func() bool { return strings.Contains(r.stdout.String(), "typed-42") })
			tt.end(t, r, id)
			if code := await(t, r.code); code != tt.wantCode {
				t.Errorf("attach %s: exit %d, want %d (stderr %q)", id, code, tt.wantCode, r.stderr.String())
			}
			want := tt.wantNote
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, ts.URL+"/t/"+id)
			}
			if lines := strings.Split(strings.TrimSuffix(r.stderr.String(), "\n"), "\n"); lines[len(lines)-1] != want {
				t.Errorf("attach %s: stderr %q, want it to end with %q", id, r.stderr.String(), want)
			}
		})
	}
}

// TestAttachInProcessClaimAndInterrupt: Ctrl-C as SIGINT is sent on to the
// remote program; when another client takes the claim attach says so and
// stops typing, and says so again when the claim comes back.
func TestAttachInProcessClaimAndInterrupt(t *testing.T) {
	ts := newTestServer(t)
	c := ts.dial(t)
	id := ts.shell(t, c, "claimed", "creator")
	uri := ahp.TerminalURI(id)
	r := startAttach(t, ts, id)
	attacher, _ := ts.info(uri)

	// sleep outlives every wait below: only the forwarded Ctrl-C ends it. Its
	// odd duration names its process: the Ctrl-C goes once it runs, not while
	// the shell is still starting it.
	r.typeKeys(t, "sleep 601.25; echo slept\r")
	waitFor(t, "sleep to start", func() bool { return processRunning("sleep\x00601.25\x00") })
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// Typing before the pty has taken the Ctrl-C would be flushed with it.
	waitFor(t, "the pty to echo ^C", func() bool { return strings.Contains(r.stdout.String(), "^C") })
	r.typeKeys(t, "echo after-$((4*5))\r")
	waitFor(t, "the shell to run a command after Ctrl-C", func() bool { return strings.Contains(r.stdout.String(), "after-20") })
	if strings.Count(r.stdout.String(), "slept") != 1 { // once: the echo of the typed line
		t.Errorf("the list went on after Ctrl-C: %q", r.stdout.String())
	}

	ctx := context.Background()
	if _, err := c.Dispatch(ctx, uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim(c.ClientID())}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the read-only note", func() bool {
		return strings.Contains(r.stderr.String(), "termhost: a client that is not here has control now; watching read-only (attach --take takes control)\n")
	})
	if _, err := c.Dispatch(ctx, uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: attacher.Claim}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the claim-back note", func() bool {
		return strings.Contains(r.stderr.String(), "termhost: you have control; typing goes to the terminal\n")
	})
	r.typeKeys(t, "echo again-$((5*5))\r")
	waitFor(t, "typing to work again", func() bool { return strings.Contains(r.stdout.String(), "again-25") })
	r.typeKeys(t, "\x1c\x1c")
	if code := await(t, r.code); code != exitOK {
		t.Errorf("detach: exit %d, stderr %q", code, r.stderr.String())
	}
}

// TestExplainError: each kind of client error becomes a sentence that says
// what to do.
func TestExplainError(t *testing.T) {
	server := &url.URL{Scheme: "http", Host: "h:1"}
	dnsErr := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nohost"}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"unsupported method", &ahp.Error{Code: ahp.CodeMethodNotFound, Message: "Method not found: x"},
			"the server does not support this: Method not found: x (AHP error -32601)"},
		{"other AHP error", fmt.Errorf("call: %w", &ahp.Error{Code: ahp.CodeNotFound, Message: "no such terminal"}),
			fmt.Sprintf("no such terminal (AHP error %d)", ahp.CodeNotFound)},
		{"connection lost", fmt.Errorf("subscribe: %w", client.ErrConnectionLost), "lost the connection to http://h:1: subscribe: connection lost"},
		{"timeout", fmt.Errorf("dial: %w", context.DeadlineExceeded), "the server at http://h:1 did not answer in time"},
		{"refused", fmt.Errorf("dial: %w", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}),
			"cannot reach the termhost server at http://h:1: connection refused (is it running? see --server)"},
		{"other network error", fmt.Errorf("dial: %w", dnsErr), "cannot reach the termhost server at http://h:1: lookup nohost: no such host"},
		{"unauthorized without status", fmt.Errorf("x: %w", client.ErrUnauthorized),
			"the server at http://h:1 refused the token (unauthorized); pass --token-file or set TERMHOST_TOKEN"},
		{"anything else", errors.New("boom"), "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := explainError(server, tt.err); got != tt.want {
				t.Errorf("explainError(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

// processRunning reports whether a process of this machine has exactly the
// command line cmdline (arguments NUL-terminated, as in /proc/<pid>/cmdline).
func processRunning(cmdline string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		if b, err := os.ReadFile(d); err == nil && string(b) == cmdline {
			return true
		}
	}
	return false
}
