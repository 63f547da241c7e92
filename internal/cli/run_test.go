package cli

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/cmdtest"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

func TestRunStreamsOutputAndExitCode(t *testing.T) {
	ts := newTestServer(t)
	watcher := ts.dial(t, ahp.RootURI)

	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := call(t, ownerEnv(ts), "run", "--name", "hi-test", "--", "sh", "-c", "echo hi; exit 3")
		done <- result{code, stdout, stderr}
	}()

	// The watcher sees the terminal appear in the catalogue, then its output
	// and its exit, either live or in its subscription snapshot.
	var uri string
	nextUntil(t, watcher, "the run terminal in the catalogue", func(ev client.Event) bool {
		root, _ := ev.State.(ahp.RootState)
		for _, in := range root.Terminals {
			if in.Title == "hi-test" {
				uri = in.Resource
			}
		}
		return uri != ""
	})
	snap, err := watcher.Subscribe(t.Context(), uri)
	if err != nil {
		t.Fatal(err)
	}
	st := snap.State.(ahp.TerminalState)
	if !st.Lifecycle.Exited() {
		nextUntil(t, watcher, "terminal/exited", func(ev client.Event) bool {
			return ev.Channel == uri && ev.Envelope.Action.Type == ahp.TerminalExited
		})
		st, _ = watcher.Terminal(uri)
	}
	if code := st.Lifecycle.ExitCode; code == nil || *code != 3 {
		t.Errorf("watcher: lifecycle %+v, want exited with 3", st.Lifecycle)
	}
	// The terminal's content holds the line.
	fresh := ts.dial(t)
	snap, err = fresh.Subscribe(t.Context(), uri)
	if err != nil {
		t.Fatal(err)
	}
	if out := contentText(snap.State.(ahp.TerminalState)); !strings.Contains(out, "hi\r\n") {
		t.Errorf("the terminal's content %q lacks hi", out)
	}

	r := await(t, done)
	if r.code != 3 {
		t.Errorf("run exit = %d, want 3 (stderr %q)", r.code, r.stderr)
	}
	if r.stdout != "hi\r\n" {
		t.Errorf("run stdout = %q, want the command's output %q", r.stdout, "hi\r\n")
	}
	id, _ := ahp.TerminalID(uri)
	if want := "termhost: terminal " + ts.URL + "/t/" + id + "\n"; r.stderr != want {
		t.Errorf("run stderr = %q, want %q", r.stderr, want)
	}
	// The exited terminal stays on the server.
	if in, ok := ts.info(uri); !ok || !in.Lifecycle.Exited() {
		t.Errorf("after run the terminal is %+v, %v; want it kept, exited", in, ok)
	}
}

func TestRunRequest(t *testing.T) {
	dir := t.TempDir()
	p, err := createParams("ahp-terminal:/x", "me", "build", dir, []string{"sh", "-c", "echo 'a b' \"$HOME\""}, &testserver.SyncBuffer{})
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string][]string
	if err := json.Unmarshal(p.Meta, &meta); err != nil {
		t.Fatal(err)
	}
	if got := meta[terminals.MetaCommand]; len(got) != 3 || got[2] != "echo 'a b' \"$HOME\"" {
		t.Errorf("_meta command = %q, want the argv unchanged", got)
	}
	if p.Cols != 80 || p.Rows != 24 || *p.Name != "build" || p.Cwd != "file://"+dir || p.Claim.ClientID != "me" {
		t.Errorf("createTerminal params = %+v", p)
	}
}

func TestRunShare(t *testing.T) {
	ts := newTestServer(t)
	_, gate, open := newGate(t)
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := call(t, ownerEnv(ts), "run", "--name", "shared", "--share", "driver", "--ttl", "7d", "--", "sh", "-c", gate)
		done <- result{code, stdout, stderr}
	}()
	waitFor(t, "the terminal", func() bool { return len(ts.m.Terminals()) == 1 })
	open()
	r := await(t, done)
	if r.code != 0 {
		t.Fatalf("run --share: exit %d, %s", r.code, r.stderr)
	}
	m := regexp.MustCompile(`(?m)^termhost: terminal (\S+)/t/(\w+)\ntermhost: share link \(driver, expires [^)]+\): (\S+)\n$`).FindStringSubmatch(r.stderr)
	if m == nil || m[1] != ts.URL || !strings.HasPrefix(m[3], ts.URL+"/t/"+m[2]+"#share=") {
		t.Errorf("stderr = %q, want the terminal URL then a driver share link to it", r.stderr)
	}
}

// newGate returns a file, a shell script that waits until it exists, and the
// function that creates it: a command exits only once the test has seen its
// terminal on the server.
func newGate(t *testing.T) (file, script string, open func()) {
	path := filepath.Join(t.TempDir(), "gate")
	return path, "while [ ! -e " + path + " ]; do sleep 0.01; done", func() {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// runBinary starts the built termhost with stdin from /dev/null and stdout
// in a buffer the test can watch.
func runBinary(t *testing.T, ts *testServer, args ...string) (*exec.Cmd, *testserver.SyncBuffer, *testserver.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(cmdtest.Binary(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERMHOST_SERVER=" + ts.URL, "TERMHOST_TOKEN=" + testToken}
	out, errOut := &testserver.SyncBuffer{}, &testserver.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("termhost %q: stdout %q, stderr %q", args, out.String(), errOut.String())
		}
	})
	return cmd, out, errOut
}

func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	var ee *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &ee) {
		t.Fatalf("wait: %v", err)
	}
	return cmd.ProcessState.ExitCode()
}

func TestRunForwardsInterrupt(t *testing.T) {
	ts := newTestServer(t)
	// Output keeps coming, so that run is seen streaming (its signal
	// handlers installed) whenever it starts.
	script := `trap 'exit 7' INT; while :; do echo tick; sleep 0.05; done`
	cmd, out, errOut := runBinary(t, ts, "run", "--", "sh", "-c", script)
	waitFor(t, "tick", func() bool { return strings.Contains(out.String(), "tick") })
	// SIGINT (Ctrl-C when stdin is not a terminal) reaches the command as
	// Ctrl-C input: its trap exits 7, which run passes on.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != 7 {
		t.Errorf("run exit after SIGINT = %d, want 7 (stderr %q)", code, errOut.String())
	}
}

func TestRunSIGTERMLeavesCommandRunning(t *testing.T) {
	ts := newTestServer(t)
	cmd, out, errOut := runBinary(t, ts, "run", "--name", "stays", "--", "sh", "-c", "while :; do echo up; sleep 0.05; done")
	waitFor(t, "up", func() bool { return strings.Contains(out.String(), "up") })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != 128+int(syscall.SIGTERM) {
		t.Errorf("run exit after SIGTERM = %d, want %d", code, 128+int(syscall.SIGTERM))
	}
	if !strings.Contains(errOut.String(), "keeps running at "+ts.URL+"/t/") {
		t.Errorf("stderr %q does not say where the command keeps running", errOut.String())
	}
	list := ts.m.Terminals()
	if len(list) != 1 || list[0].Title != "stays" || list[0].Lifecycle.Exited() {
		t.Errorf("terminals after SIGTERM: %+v, want the command still running", list)
	}
}

func TestRunDefaultCwd(t *testing.T) {
	ts := newTestServer(t)
	dir := t.TempDir()
	cmd := exec.Command(cmdtest.Binary(t), "run", "--name", "where", "--", "sleep", "60")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERMHOST_SERVER=" + ts.URL, "TERMHOST_TOKEN=" + testToken}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitFor(t, "the terminal", func() bool { return len(ts.m.Terminals()) == 1 })
	// With the server on loopback, the command runs in the current directory.
	snap, err := ts.dial(t).Subscribe(t.Context(), ts.m.Terminals()[0].Resource)
	if err != nil {
		t.Fatal(err)
	}
	if cwd := snap.State.(ahp.TerminalState).Cwd; cwd != ahp.FileURI(dir) {
		t.Errorf("terminal cwd = %q, want %q", cwd, ahp.FileURI(dir))
	}
}

func TestRunSurvivesConnectionDrop(t *testing.T) {
	ts := newTestServer(t)
	p := testserver.NewProxy(t, ts.Listener.Addr().String())
	file, _, open := newGate(t)
	script := `i=0; while [ ! -e ` + file + ` ]; do i=$((i+1)); echo line-$i; sleep 0.02; done; exit 6`
	env := map[string]string{"TERMHOST_SERVER": p.URL(), "TERMHOST_TOKEN": testToken}
	a, out, errOut := testApp(t, env)
	done := make(chan int, 1)
	go func() { done <- a.runCommand([]string{"--", "sh", "-c", script}) }()

	waitFor(t, "line-3", func() bool { return strings.Contains(out.String(), "line-3\r\n") })
	p.Cut()
	waitFor(t, "the reconnect", func() bool { return strings.Contains(errOut.String(), "termhost: reconnected\n") })
	before := strings.Count(out.String(), "\n")
	waitFor(t, "more output", func() bool { return strings.Count(out.String(), "\n") > before+3 })
	open()
	if code := await(t, done); code != 6 {
		t.Errorf("run exit = %d, want 6 (stderr %q)", code, errOut.String())
	}
	// Every line exactly once, in order: the missed output was replayed.
	lines := strings.Split(strings.TrimSuffix(out.String(), "\r\n"), "\r\n")
	for i, l := range lines {
		if want := "line-" + strconv.Itoa(i+1); l != want {
			t.Fatalf("stdout line %d = %q, want %q (a gap or a repeat):\n%q", i+1, l, want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "lost the connection to "+p.URL()) {
		t.Errorf("stderr %q does not report the drop", errOut.String())
	}
}

// TestRunPassesItsOwnQueriesOn: the output of a command run just now is not
// old history, even when it comes in the first snapshot: a query in it is
// written out for this terminal to answer (the program may wait for it).
func TestRunPassesItsOwnQueriesOn(t *testing.T) {
	ts := newTestServer(t)
	// The output is usually on the server before run subscribes, so it
	// comes in the snapshot.
	code, stdout, stderr := call(t, ownerEnv(ts), "run", "--", "printf", `a\033[6nb\033]11;?\007c`)
	if code != 0 {
		t.Fatalf("run: exit %d, %s", code, stderr)
	}
	if want := "a\x1b[6nb\x1b]11;?\x07c"; stdout != want {
		t.Errorf("run stdout = %q, want %q", stdout, want)
	}
}
