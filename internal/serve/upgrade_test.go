package serve

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/cmdtest"
	"github.com/termhost/termhost/internal/handover"
	"github.com/termhost/termhost/internal/poll"
)

// upgradeServer is a "termhost serve" child of the test, run from its own
// copy of the binary (so a test can replace or break it), logging to a
// file.
type upgradeServer struct {
	exe, stateDir, log string
	first              *exec.Cmd
	url                string
}

func startUpgradable(t *testing.T, extra ...string) *upgradeServer {
	t.Helper()
	dir := t.TempDir()
	s := &upgradeServer{exe: filepath.Join(dir, "termhost"), stateDir: filepath.Join(dir, "state"), log: filepath.Join(dir, "log")}
	copyFile(t, cmdtest.Binary(t), s.exe, 0o755)
	logFile, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	s.first = exec.Command(s.exe, "serve", "--listen", "127.0.0.1:0", "--shell", "/bin/bash", "--shell-integration", "off",
		"--token", testToken, "--state-dir", s.stateDir, "--log-level", "info")
	s.first.Args = append(s.first.Args, extra...) // the last of a repeated flag wins
	s.first.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, "xdg")}
	s.first.Stdout, s.first.Stderr = logFile, logFile
	if err := s.first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(t) })
	waitFor(t, "the login URL", func() bool {
		m := regexpLoginURL.FindStringSubmatch(s.logText())
		if m != nil {
			s.url = m[1]
		}
		return m != nil
	})
	return s
}

func (s *upgradeServer) logText() string { b, _ := os.ReadFile(s.log); return string(b) }

// pid is the process serving now, from its pid file.
func (s *upgradeServer) pid() int {
	pid, _ := readPid(filepath.Join(s.stateDir, pidFileName))
	return pid
}

// stop ends the server (SIGTERM: it ends its shells) and reaps it.
func (s *upgradeServer) stop(t *testing.T) {
	if s.first.ProcessState == nil {
		_ = s.first.Process.Signal(syscall.SIGTERM)
		_ = s.first.Wait()
	}
	if t.Failed() {
		t.Logf("server log:\n%s", s.logText())
	}
}

// install replaces the binary the way an install does (a new file at the
// same path, the running one's inode left alone).
func (s *upgradeServer) install(t *testing.T, from string) {
	t.Helper()
	if err := os.Remove(s.exe); err != nil {
		t.Fatal(err)
	}
	copyFile(t, from, s.exe, 0o755)
}

// nextBinary is termhost built as version "upgrade-next": the binary an
// upgrade installs.
var nextBinary = sync.OnceValues(func() (string, error) {
	return cmdtest.Build("termhost-next", "-ldflags", "-X main.version=upgrade-next")
})

// regexpLoginURL finds the server's URL in its login link.
var regexpLoginURL = regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/#token=`)

// parentOf is the parent pid of pid, from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	ppid, err := ppidOf(pid)
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}

func ppidOf(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid …: comm may hold spaces, so cut after the last ')'.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return strconv.Atoi(fields[1])
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, to, b, mode)
}

// writeExecutable writes a file the test will run. It holds
// syscall.ForkLock while the file is open for writing: a process another
// test forks in that window would inherit the write descriptor until it
// execs, and running the file then fails with "text file busy".
func writeExecutable(t *testing.T, path string, b []byte, mode os.FileMode) {
	t.Helper()
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, b, mode)
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
}

// watcher is a Go client subscribed to one terminal, recording every event.
type watcher struct {
	c    *client.Client
	mu   sync.Mutex
	evs  []client.Event
	done chan struct{}
}

func watch(t *testing.T, url, clientID string, subs ...string) *watcher {
	t.Helper()
	c, err := client.Dial(t.Context(), url, client.Options{Token: testToken, ClientID: clientID, InitialSubscriptions: subs})
	if err != nil {
		t.Fatalf("dial %s: %v", clientID, err)
	}
	w := &watcher{c: c, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			ev, err := c.Next(context.Background())
			if err != nil {
				return
			}
			w.mu.Lock()
			w.evs = append(w.evs, ev)
			w.mu.Unlock()
		}
	}()
	t.Cleanup(func() { _ = c.Close(); <-w.done })
	return w
}

func (w *watcher) events() []client.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]client.Event(nil), w.evs...)
}

// stream is the terminal's output as the client received it, action by
// action, and the serverSeqs of those actions.
func (w *watcher) stream(channel string) (string, []int64) {
	var b strings.Builder
	var seqs []int64
	for _, ev := range w.events() {
		if ev.Kind == client.EventAction && ev.Channel == channel {
			seqs = append(seqs, ev.Envelope.ServerSeq)
			if ev.Envelope.Action.Type == ahp.TerminalData {
				b.WriteString(ev.Envelope.Action.Data)
			}
		}
	}
	return b.String(), seqs
}

func (w *watcher) saw(kind client.EventKind) bool {
	for _, ev := range w.events() {
		if ev.Kind == kind {
			return true
		}
	}
	return false
}

// processWith is the pid of the shell whose command line contains marker:
// the topmost such process, since a child bash forks for each command
// carries the same command line until it execs.
func processWith(marker string) int {
	has := func(pid int) bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		return err == nil && strings.Contains(string(b), marker) && pid != os.Getpid()
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !has(pid) {
			continue
		}
		if ppid, err := ppidOf(pid); err == nil && !has(ppid) {
			return pid
		}
	}
	return 0
}

// loopTerminal creates a terminal whose bash waits for a line of input,
// then prints line-1 … line-n, then waits for a line of input and exits 7;
// w subscribes to it.
func loopTerminal(t *testing.T, w *watcher, channel, marker string, n int) {
	t.Helper()
	c := w.c
	script := fmt.Sprintf("read x; for i in $(seq 1 %d); do echo line-$i; sleep 0.01; done; echo loop-done; read x; exit 7 # %s", n, marker)
	claim := ahp.ClientClaim(c.ClientID())
	meta := fmt.Sprintf(`{"termhost/command": ["/bin/bash", "--norc", "-c", %q]}`, script)
	if _, err := c.Call(t.Context(), ahp.MethodCreateTerminal, ahp.CreateTerminalParams{Channel: channel, Claim: &claim, Meta: []byte(meta)}); err != nil {
		t.Fatalf("createTerminal: %v", err)
	}
	if snap, err := c.Subscribe(t.Context(), channel); err != nil {
		t.Fatalf("subscribe: %v", err)
	} else if st, ok := snap.State.(ahp.TerminalState); !ok || content(st) != "" {
		t.Fatalf("snapshot %+v, want an empty terminal", snap.State)
	}
}

// start sends the line that starts the loop.
func (w *watcher) start(t *testing.T, channel string) {
	t.Helper()
	if _, err := w.c.Dispatch(t.Context(), channel, ahp.Action{Type: ahp.TerminalInput, Data: "\r"}); err != nil {
		t.Fatalf("input: %v", err)
	}
}

var lineRE = regexp.MustCompile(`line-(\d+)\r?\n`)

// checkLines fails unless out holds line-1 … line-n exactly once each, in order.
func checkLines(t *testing.T, who, out string, n int) {
	t.Helper()
	got := lineRE.FindAllStringSubmatch(out, -1)
	for i, m := range got {
		if m[1] != strconv.Itoa(i+1) {
			t.Fatalf("%s: line %d is line-%s, want line-%d (a byte lost or repeated)", who, i+1, m[1], i+1)
		}
	}
	if len(got) != n {
		t.Fatalf("%s: %d lines, want %d", who, len(got), n)
	}
}

func increasing(seqs []int64) bool {
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			return false
		}
	}
	return true
}

func content(st ahp.TerminalState) string {
	var b strings.Builder
	for _, p := range st.Content {
		b.WriteString(p.Text())
	}
	return b.String()
}

// TestUpgradeKeepsShells: SIGUSR2 or
// "termhost upgrade" in the middle of a loop makes the server run the
// newly installed binary in place: the same process, still the test's
// child; the same shell pid; every line exactly once and in order for both
// subscribers (replayed, not resynced); serverSeq goes on; the new program
// takes input, reports the shell's exit code, and SIGINT (Ctrl-C) still
// stops it cleanly.
func TestUpgradeKeepsShells(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		trigger func(t *testing.T, s *upgradeServer)
	}{
		{"SIGUSR2", func(t *testing.T, s *upgradeServer) {
			if err := s.first.Process.Signal(syscall.SIGUSR2); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the upgrade in the log", func() bool { return strings.Contains(s.logText(), "termhost upgraded in place") })
		}},
		{"termhost upgrade", func(t *testing.T, s *upgradeServer) {
			out, err := exec.Command(s.exe, "upgrade", "--state-dir", s.stateDir).CombinedOutput()
			if err != nil {
				t.Fatalf("termhost upgrade: %v, output %q", err, out)
			}
			checkUpgradeMessage(t, string(out), s.first.Process.Pid)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			upgradeKeepsShells(t, tc.trigger)
		})
	}
}

func upgradeKeepsShells(t *testing.T, trigger func(t *testing.T, s *upgradeServer)) {
	const n = 400
	next, err := nextBinary()
	if err != nil {
		t.Fatal(err)
	}
	s := startUpgradable(t)
	channel := ahp.TerminalURI("loop")
	a := watch(t, s.url, "upgrade-a")
	// Unique per run: a shell of an earlier subtest may not be reaped yet.
	marker := fmt.Sprintf("upgrade-marker-%d", time.Now().UnixNano())
	loopTerminal(t, a, channel, marker, n)
	b := watch(t, s.url, "upgrade-b", channel)
	a.start(t, channel)
	waitFor(t, "line-50", func() bool { out, _ := a.stream(channel); return strings.Contains(out, "line-50\r\n") })
	shell := processWith(marker)
	if shell == 0 {
		t.Fatal("no shell process found")
	}
	_, before := a.stream(channel)
	// A viewer link made before the upgrade lives as long as its terminal.
	link, err := a.c.CreateShare(t.Context(), ext.ShareCreateParams{Terminal: channel, Role: ext.RoleViewer})
	if err != nil {
		t.Fatalf("share: %v", err)
	}
	_, shareToken, _ := strings.Cut(link.URL, "#share=")

	s.install(t, next)
	trigger(t, s)
	pid := s.first.Process.Pid
	if got := s.pid(); got != pid {
		t.Fatalf("pid file after the upgrade names %d, want the same process %d", got, pid)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the server process %d is gone after the upgrade: %v", pid, err)
	}
	if got := parentOf(t, pid); got != os.Getpid() {
		t.Fatalf("parent of the server after the upgrade = %d, want the test %d", got, os.Getpid())
	}
	if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe != s.exe {
		t.Fatalf("the server runs %q after the upgrade, want the new file %q", exe, s.exe)
	}
	if got := processWith(marker); got != shell {
		t.Fatalf("shell pid after the upgrade = %d, want %d", got, shell)
	}
	for _, w := range []*watcher{a, b} {
		// The loop forks a sleep per line: on a loaded machine it outlasts waitFor's 20 s.
		poll.Until(t, time.Minute, "loop-done on "+w.c.ClientID(), func() bool { out, _ := w.stream(channel); return strings.Contains(out, "loop-done") })
	}
	viewer, err := client.Dial(t.Context(), s.url, client.Options{Token: shareToken, ClientID: "upgrade-viewer", InitialSubscriptions: []string{channel}})
	if err != nil {
		t.Fatalf("the viewer link made before the upgrade no longer works: %v", err)
	}
	if _, ok := viewer.Terminal(channel); !ok {
		t.Fatalf("the viewer link made before the upgrade does not show its terminal")
	}
	viewer.Close()
	var sums [2][32]byte
	for i, w := range []*watcher{a, b} {
		out, seqs := w.stream(channel)
		checkLines(t, w.c.ClientID(), out, n)
		if !increasing(seqs) || seqs[len(seqs)-1] <= before[len(before)-1] {
			t.Fatalf("%s: serverSeqs not increasing across the upgrade: %v", w.c.ClientID(), seqs)
		}
		if !w.saw(client.EventDisconnected) || !w.saw(client.EventReconnected) || w.saw(client.EventResync) {
			t.Fatalf("%s: want a disconnect and a reconnect with replay (no resync)", w.c.ClientID())
		}
		st, _ := w.c.Terminal(channel)
		if got := content(st); got != out {
			t.Fatalf("%s: mirror content (%d bytes) differs from the stream (%d bytes)", w.c.ClientID(), len(got), len(out))
		}
		sums[i] = sha256.Sum256([]byte(out))
	}
	if sums[0] != sums[1] {
		t.Fatal("the two subscribers' streams differ")
	}
	// The new program drives the shell and learns its exit code.
	if _, err := a.c.Dispatch(t.Context(), channel, ahp.Action{Type: ahp.TerminalInput, Data: "\r"}); err != nil {
		t.Fatalf("input after the upgrade: %v", err)
	}
	waitFor(t, "the exit", func() bool {
		st, _ := a.c.Terminal(channel)
		return st.Lifecycle.Exited()
	})
	st, _ := a.c.Terminal(channel)
	if code := st.Lifecycle.ExitCode; code == nil || *code != 7 {
		t.Fatalf("exit code after the upgrade = %v, want 7", code)
	}
	// Ctrl-C in the server's terminal still stops it, cleanly.
	if err := s.first.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := s.first.Wait(); err != nil {
		t.Fatalf("server after SIGINT: %v, want exit 0", err)
	}
	if !strings.Contains(s.logText(), "shutting down") {
		t.Fatal("no \"shutting down\" in the log after SIGINT")
	}
}

// installScript replaces exe by a bash script.
func installScript(t *testing.T, exe, body string) {
	t.Helper()
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, exe, []byte("#!/bin/bash\n"+body+"\n"), 0o755)
}

// TestUpgradeFailureKeepsServing: when the new binary cannot run or fails
// the check of its flags (refused: clients notice nothing), or fails that
// of the state after the terminals were paused (they resume, clients
// reconnect), the old program serves on with its shells, and "termhost
// upgrade" says why.
func TestUpgradeFailureKeepsServing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		breakIt func(t *testing.T, exe string)
		want    string // in the log and in termhost upgrade's error
	}{
		{"binary not executable", func(t *testing.T, exe string) {
			if err := os.Chmod(exe, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "upgrade refused"},
		{"not a termhost", func(t *testing.T, exe string) {
			installScript(t, exe, "echo 'this is not termhost' >&2; exit 2")
		}, "upgrade refused"},
		// Passes the check of its flags, fails that of the state: the
		// terminals were paused and resume.
		{"cannot read the state", func(t *testing.T, exe string) {
			installScript(t, exe, `if [ -n "$`+handover.EnvFD+`" ]; then echo 'cannot read this state' >&2; exit 1; fi; echo '`+handoverCheckOK+`'`)
		}, "upgrade failed, serving on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startUpgradable(t)
			channel := ahp.TerminalURI("loop")
			a := watch(t, s.url, "fail-a")
			// Unique: other runs of this test may share the machine.
			marker := fmt.Sprintf("fail-marker-%s-%d", strings.ReplaceAll(tc.name, " ", "-"), time.Now().UnixNano())
			loopTerminal(t, a, channel, marker, 100)
			a.start(t, channel)
			waitFor(t, "line-20", func() bool { out, _ := a.stream(channel); return strings.Contains(out, "line-20\r\n") })
			shell := processWith(marker)
			tc.breakIt(t, s.exe)

			out, err := exec.Command(cmdtest.Binary(t), "upgrade", "--state-dir", s.stateDir).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "serves on without upgrading") {
				t.Fatalf("termhost upgrade: %v, output %q, want a failure saying the server serves on", err, out)
			}
			waitFor(t, tc.want+" in the log", func() bool { return strings.Contains(s.logText(), tc.want) })
			waitFor(t, "loop-done", func() bool { out, _ := a.stream(channel); return strings.Contains(out, "loop-done") })
			got, _ := a.stream(channel)
			checkLines(t, "client", got, 100)
			if refused := strings.HasPrefix(tc.want, "upgrade refused"); refused == a.saw(client.EventDisconnected) {
				t.Fatalf("client disconnected = %v; want a disconnect only when the upgrade failed after stopping", !refused)
			}
			if got := processWith(marker); got != shell {
				t.Fatalf("shell pid = %d, want %d", got, shell)
			}
			if _, err := a.c.Dispatch(t.Context(), channel, ahp.Action{Type: ahp.TerminalInput, Data: "\r"}); err != nil {
				t.Fatalf("input after the failed upgrade: %v", err)
			}
			waitFor(t, "the exit", func() bool { st, _ := a.c.Terminal(channel); return st.Lifecycle.Exited() })
			if st, _ := a.c.Terminal(channel); st.Lifecycle.ExitCode == nil || *st.Lifecycle.ExitCode != 7 {
				t.Fatalf("exit code after the failed upgrade = %v, want 7", st.Lifecycle.ExitCode)
			}
		})
	}
}
