package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

// ptyRun is the termhost binary running with a pty as its controlling
// terminal, like a user's shell would start it.
type ptyRun struct {
	t    *testing.T
	cmd  *exec.Cmd
	pty  *os.File
	out  syncBuffer
	done chan struct{} // the output reader has finished
	code int
	wait sync.Once
}

func startPty(t *testing.T, ts *testServer, cols, rows int, args ...string) *ptyRun {
	t.Helper()
	cmd := exec.Command(needBinary(t), args...)
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

	// A second client cannot take the claim: attach watches read-only and
	// says so; "~." at the start of a line detaches.
	p := startPty(t, ts, 80, 24, "attach", "ahp-terminal:/"+id)
	p.waitOutput("terminal is claimed by another client; watching read-only")
	p.typeKeys("~.")
	if code := p.exit(); code != 0 {
		t.Fatalf("attach exit after ~. = %d, want 0", code)
	}

	// When the remote shell exits, attach exits with its code.
	p = startPty(t, ts, 80, 24, "attach", ts.URL+"/t/"+id)
	p.waitOutput("watching read-only")
	if _, err := holder.Dispatch(t.Context(), uri, ahp.Action{Type: ahp.TerminalInput, Data: "exit 5\r"}); err != nil {
		t.Fatal(err)
	}
	if code := p.exit(); code != 5 {
		t.Errorf("attach exit after the remote exit 5 = %d, want 5", code)
	}
	p.waitOutput("the terminal exited with code 5")
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
