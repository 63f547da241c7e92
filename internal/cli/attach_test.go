package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/cmdtest"
	"github.com/termhost/termhost/internal/testserver"
)

// ptyRun is the termhost binary running with a pty as its controlling
// terminal, like a user's shell would start it.
type ptyRun struct {
	t    *testing.T
	cmd  *exec.Cmd
	pty  *os.File
	out  testserver.SyncBuffer
	done chan struct{} // the output reader has finished
	code int
	wait sync.Once
}

func startPty(t *testing.T, ts *testServer, cols, rows int, args ...string) *ptyRun {
	t.Helper()
	cmd := exec.Command(cmdtest.Binary(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERM=xterm-256color",
		"TERMHOST_SERVER=" + ts.URL, "TERMHOST_TOKEN=" + testToken}
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		t.Fatal(err)
	}
	p := &ptyRun{t: t, cmd: cmd, pty: f, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			_, _ = p.out.Write(buf[:n])
			if err != nil {
				return // EIO once the child has exited
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		p.exit()
		_ = f.Close()
		<-p.done
		if t.Failed() {
			t.Logf("pty output of termhost %s:\n%q", strings.Join(args, " "), p.out.String())
		}
	})
	return p
}

func (p *ptyRun) typeKeys(s string) {
	p.t.Helper()
	if _, err := p.pty.Write([]byte(s)); err != nil {
		p.t.Fatalf("type %q: %v", s, err)
	}
}

func (p *ptyRun) waitOutput(s string) {
	p.t.Helper()
	waitFor(p.t, "pty output "+strconvQuote(s), func() bool { return strings.Contains(p.out.String(), s) })
}

// exit waits for the process and returns its exit code.
func (p *ptyRun) exit() int {
	p.wait.Do(func() {
		errc := make(chan error, 1)
		go func() { errc <- p.cmd.Wait() }()
		select {
		case err := <-errc:
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				p.t.Errorf("wait: %v", err)
			}
			p.code = p.cmd.ProcessState.ExitCode()
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-errc
			p.t.Errorf("termhost did not exit")
			p.code = -1
		}
	})
	return p.code
}

func strconvQuote(s string) string { return `"` + strings.ReplaceAll(s, "\r", `\r`) + `"` }

func TestAttachThroughPty(t *testing.T) {
	ts := newTestServer(t)
	watcher := ts.dial(t)
	// Claimed by a client that is not connected: attach may take it over.
	id := ts.shell(t, watcher, "pty", "gone-client")
	uri := ahp.TerminalURI(id)
	if _, err := watcher.Subscribe(t.Context(), uri); err != nil {
		t.Fatal(err)
	}

	p := startPty(t, ts, 100, 30, "attach", id)
	// attach takes the claim (after raw mode is on), then sizes the terminal.
	waitFor(t, "attach to take the claim", func() bool {
		in, _ := ts.info(uri)
		return in.Claim.Kind == ahp.ClaimClient && in.Claim.ClientID != "gone-client"
	})
	p.typeKeys("echo hel''lo\r")
	p.waitOutput("hello\r\n")
	p.typeKeys("stty size\r")
	p.waitOutput("30 100\r\n")

	// The local window grows: SIGWINCH → terminal/resized → the remote pty.
	if err := pty.Setsize(p.pty, &pty.Winsize{Cols: 120, Rows: 40}); err != nil {
		t.Fatal(err)
	}
	nextUntil(t, watcher, "terminal/resized 120x40", func(ev client.Event) bool {
		a := ev.Envelope.Action
		return ev.Channel == uri && a.Type == ahp.TerminalResized && a.Cols == 120 && a.Rows == 40
	})
	p.typeKeys("stty size\r")
	p.waitOutput("40 120\r\n")

	// Ctrl-\ Ctrl-\ detaches: exit 0, and the shell lives on.
	p.typeKeys("\x1c\x1c")
	if code := p.exit(); code != 0 {
		t.Fatalf("attach exit after Ctrl-\\ Ctrl-\\ = %d, want 0", code)
	}
	p.waitOutput("detached from " + ts.URL + "/t/" + id)
	if in, ok := ts.info(uri); !ok || in.Lifecycle.Exited() {
		t.Fatalf("after detach the terminal is %+v, %v; want it running", in, ok)
	}
	// attach's claim stays for the grace period: the owner takes control to type.
	if _, err := watcher.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim(watcher.ClientID())}); err != nil {
		t.Fatal(err)
	}
	if _, err := watcher.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: "echo still-$((40+2))\r"}); err != nil {
		t.Fatal(err)
	}
	nextUntil(t, watcher, "the shell to answer after detach", func(ev client.Event) bool {
		return ev.Channel == uri && strings.Contains(ev.Envelope.Action.Data, "still-42")
	})
}

func TestAttachAsViewerAndRemoteExit(t *testing.T) {
	ts := newTestServer(t)
	holder := ts.dial(t)
	id := ts.shell(t, holder, "held", holder.ClientID()) // the holder stays connected
	uri := ahp.TerminalURI(id)

	// Through a driver link, attach cannot take the claim from a connected
	// client: it watches read-only and says so; "~." at the start of a line
	// detaches.
	link, err := createShare(t.Context(), holder, id, "driver", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p := startPty(t, ts, 80, 24, "attach", link.URL)
	p.waitOutput("a client that is not here has control; watching read-only (attach --take asks for control)")
	p.typeKeys("~.")
	if code := p.exit(); code != 0 {
		t.Fatalf("attach exit after ~. = %d, want 0", code)
	}
	if in, _ := ts.info(uri); in.Claim.ClientID != holder.ClientID() {
		t.Fatalf("the claim moved to %q through a driver link, want it with the holder", in.Claim.ClientID)
	}

	// The owner's attach without --take watches too, and does not size the
	// terminal to its window: only whoever has control sizes it.
	before := termSizeOf(t, holder, uri)
	p = startPty(t, ts, before[0]+17, before[1]+7, "attach", ts.URL+"/t/"+id)
	p.waitOutput(cliText() + " has control; watching read-only (attach --take takes control)")
	p.typeKeys("echo not-$((2*3))\r")
	if _, err := holder.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: "echo holder-$((3*3))\r"}); err != nil {
		t.Fatal(err)
	}
	p.waitOutput("holder-9")
	if in, _ := ts.info(uri); in.Claim.ClientID != holder.ClientID() {
		t.Fatalf("the owner's attach without --take took the claim: %+v", in.Claim)
	}
	if got := termSizeOf(t, holder, uri); got != before {
		t.Errorf("the owner's attach without --take resized the terminal from %v to %v", before, got)
	}
	if strings.Contains(p.out.String(), "not-6") {
		t.Error("keys typed without control reached the shell")
	}
	p.typeKeys("\x1c\x1c")
	if code := p.exit(); code != 0 {
		t.Fatalf("attach exit after Ctrl-\\ Ctrl-\\ = %d, want 0", code)
	}

	// With --take the owner always takes the claim. When the remote shell
	// exits, attach exits with its code.
	p = startPty(t, ts, 80, 24, "attach", "--take", ts.URL+"/t/"+id)
	waitFor(t, "the owner's attach to take the claim", func() bool {
		in, _ := ts.info(uri)
		return in.Claim.ClientID != holder.ClientID()
	})
	p.typeKeys("exit 5\r")
	if code := p.exit(); code != 5 {
		t.Errorf("attach exit after the remote exit 5 = %d, want 5", code)
	}
	p.waitOutput("the terminal exited with code 5")
}

// termSizeOf is a terminal's size in a fresh snapshot.
func termSizeOf(t *testing.T, c *client.Client, uri string) [2]int {
	t.Helper()
	snap, err := c.Subscribe(t.Context(), uri)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := snap.State.(ahp.TerminalState)
	return [2]int{st.Cols, st.Rows}
}

func TestAttachRestoresTerminalOnSignal(t *testing.T) {
	ts := newTestServer(t)
	c := ts.dial(t)
	id := ts.shell(t, c, "sig", "nobody")
	p := startPty(t, ts, 80, 24, "attach", id)
	waitFor(t, "attach to take the claim", func() bool {
		in, _ := ts.info(ahp.TerminalURI(id))
		return in.Claim.ClientID != "nobody"
	})
	// Raw mode is on: no echo, no ICANON.
	if st, err := getTermios(p.pty); err != nil || st.Lflag&(unix.ECHO|unix.ICANON) != 0 {
		t.Fatalf("termios while attached: lflag %#x, %v; want raw", st.Lflag, err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exit(); code != 128+int(syscall.SIGTERM) {
		t.Errorf("attach exit after SIGTERM = %d", code)
	}
	if st, err := getTermios(p.pty); err != nil || st.Lflag&(unix.ECHO|unix.ICANON) != unix.ECHO|unix.ICANON {
		t.Errorf("termios after SIGTERM: lflag %#x, %v; want it restored (echo, canonical)", st.Lflag, err)
	}
}

// getTermios reads the pty's terminal settings (shared by master and slave).
func getTermios(f *os.File) (*unix.Termios, error) {
	fd, ok := fdOf(f)
	if !ok {
		return &unix.Termios{}, errors.New("no fd")
	}
	return unix.IoctlGetTermios(fd, unix.TCGETS)
}

// tmuxServer runs commands in a private tmux server (its own socket, no
// configuration file), as a user's real terminal would: tmux answers the
// queries it parses on the pane's input.
type tmuxServer struct {
	t    *testing.T
	bin  string
	sock string
	env  []string
}

func newTmux(t *testing.T, env ...string) *tmuxServer {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux is not installed (apt-get install -y tmux); this test runs termhost attach inside it as a terminal that answers queries: %v", err)
	}
	tm := &tmuxServer{t: t, bin: bin, sock: filepath.Join(t.TempDir(), "tmux.sock"),
		env: append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERM=xterm-256color", "SHELL=/bin/sh"}, env...)}
	// One server for the whole test: each attach's session ends with it,
	// and a server exiting with its last session would race the next one.
	tm.must("start-server", ";", "set-option", "-g", "exit-empty", "off")
	t.Cleanup(func() { _, _ = tm.run("kill-server") })
	return tm
}

func (tm *tmuxServer) run(args ...string) (string, error) {
	cmd := exec.Command(tm.bin, append([]string{"-S", tm.sock, "-f", "/dev/null"}, args...)...)
	cmd.Env = tm.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (tm *tmuxServer) must(args ...string) string {
	tm.t.Helper()
	out, err := tm.run(args...)
	if err != nil {
		tm.t.Fatalf("tmux %q: %v: %s", args, err, out)
	}
	return out
}

// TestAttachReplayIsNotAnswered: the terminal's history holds queries (DA,
// DSR); attaching three times from tmux must not type tmux's answers to them
// into the shell: its input line stays empty (answers to a replay would
// be typed as if by the person in control).
func TestAttachReplayIsNotAnswered(t *testing.T) {
	ts := newTestServer(t)
	tm := newTmux(t, "TERMHOST_SERVER="+ts.URL, "TERMHOST_TOKEN="+testToken)
	watcher := ts.dial(t)
	id := ts.shell(t, watcher, "queries", "nobody")
	uri := ahp.TerminalURI(id)
	if _, err := watcher.Subscribe(t.Context(), uri); err != nil {
		t.Fatal(err)
	}
	if _, err := watcher.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: `printf '\033[c\033[6n'; echo print''ed` + "\r"}); err != nil {
		t.Fatal(err)
	}
	output := func() string {
		st, _ := watcher.Terminal(uri)
		return contentText(st)
	}
	// afterPrinted is the output since the printf's line ended.
	afterPrinted := func() string {
		out := output()
		if i := strings.Index(out, "printed\r\n"); i >= 0 {
			return out[i+len("printed\r\n"):]
		}
		return ""
	}
	waitFor(t, "the printf to finish", func() bool { return strings.Contains(afterPrinted(), "$ ") })

	holder := "nobody"
	for i := range 3 {
		name := fmt.Sprintf("attach%d", i)
		tm.must("new-session", "-d", "-s", name, "-x", "120", "-y", "40", cmdtest.Binary(t)+" attach --take "+id)
		// The replayed history is on tmux's screen and attach drives: what
		// tmux answered (if anything) is on attach's stdin before the
		// detach keys.
		waitFor(t, name+": the history on the tmux screen", func() bool {
			out, err := tm.run("capture-pane", "-p", "-t", name)
			return err == nil && strings.Contains(out, "printed")
		})
		waitFor(t, name+": attach to take the claim", func() bool {
			in, _ := ts.info(uri)
			return in.Claim.Kind == ahp.ClaimClient && in.Claim.ClientID != holder
		})
		in, _ := ts.info(uri)
		holder = in.Claim.ClientID
		tm.must("send-keys", "-t", name, "-H", "1c", "1c") // Ctrl-\ Ctrl-\: detach
		waitFor(t, name+": attach to detach", func() bool {
			_, err := tm.run("has-session", "-t", name)
			return err != nil
		})
	}

	// The last attach's claim stays for the grace period: the owner takes control to type.
	if _, err := watcher.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim(watcher.ClientID())}); err != nil {
		t.Fatal(err)
	}
	if _, err := watcher.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: "echo END\r"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the shell to run the line and prompt again", func() bool {
		out := afterPrinted()
		i := strings.LastIndex(out, "END")
		return i >= 0 && strings.Contains(out[i:], "$ ")
	})
	// The input line, from its last prompt (attach's resizes redraw it),
	// holds exactly what was typed. Bash brackets its prompt with the
	// bracketed-paste mode switches.
	out := strings.NewReplacer("\x1b[?2004h", "", "\x1b[?2004l\r", "", "\x1b[?2004l", "").Replace(afterPrinted())
	line := out
	if i := strings.Index(out, "echo END"); i >= 0 {
		line = out[strings.LastIndex(out[:i], "$ ")+1:]
	}
	if want := " echo END\r\nEND\r\n$ "; line != want {
		t.Fatalf("after three attaches from tmux and typing \"echo END\", the shell shows %q, want the line %q: "+
			"tmux's answers to the replayed queries reached the shell (all output since the printf: %q)", line, want, out)
	}
}
