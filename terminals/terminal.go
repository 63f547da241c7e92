package terminals

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/shellint"
)

// Coalescing bounds for terminal/data (shell-integration spec §7.8).
const (
	coalesceWindow = 5 * time.Millisecond
	coalesceBytes  = 64 << 10
	readBuffer     = 32 << 10
	drainQuiet     = 50 * time.Millisecond // after exit: stop when the pty is quiet this long
	drainMax       = time.Second
	readyTimeout   = 3 * time.Second

	// Flow control (shell-integration spec §7.9): stop reading the pty while
	// the claim holder has more than highWater bytes unsent, until it is below
	// lowWater. Other subscribers never slow the shell; they are evicted.
	highWater = 2 << 20
	lowWater  = 256 << 10
)

// terminal is one shell in a pty. Its owner goroutine is the only reader of the
// pty master; a waiter goroutine reaps the child; a writer goroutine feeds
// keyboard input so a shell that does not read never blocks a client.
// Fields below "guarded by hub.mu" belong to the channel state.
type terminal struct {
	m    *Manager
	uri  string
	log  *slog.Logger
	cmd  *exec.Cmd
	pty  *os.File
	proc *shellint.Processor // owner goroutine only

	input  chan []byte
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// ready is closed by the owner once the shell is reading input: at its
	// first prompt with shell integration, else at its first output. Input
	// typed before then waits, because shells discard typeahead while they
	// set up the terminal.
	ready      chan struct{}
	integrated bool

	done     chan struct{} // closed by the waiter once the child is reaped
	exitCode *int          // set before done is closed

	deadlineMu sync.Mutex // orders the waiter's wake-up against the owner's deadlines
	exited     bool

	// guarded by hub.mu
	state       ahp.TerminalState // Content is kept in content
	content     *content
	queued      int  // bytes of input waiting for the writer
	titlePinned bool // a client renamed the terminal: ignore the shell's titles
	disposed    bool
}

// start spawns the shell and its goroutines.
func (t *terminal) start(argv, env []string, dir string, cols, rows int) error {
	t.cmd = exec.Command(argv[0], argv[1:]...)
	t.cmd.Env = env
	t.cmd.Dir = dir
	f, tty, err := pty.Open()
	if err != nil {
		return fmt.Errorf("open pty: %w", err)
	}
	// pty.Open calls Fd(), which leaves the master blocking; make it
	// non-blocking again so reads honour deadlines and Close unblocks them.
	if err := setNonblock(f); err != nil {
		_, _ = f.Close(), tty.Close()
		return fmt.Errorf("pty non-blocking: %w", err)
	}
	// Sized through the slave: pty.Setsize on the master would call Fd(), which
	// puts the master in blocking mode and breaks read deadlines.
	if err := pty.Setsize(tty, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		_, _ = f.Close(), tty.Close()
		return fmt.Errorf("size pty: %w", err)
	}
	t.cmd.Stdin, t.cmd.Stdout, t.cmd.Stderr = tty, tty, tty
	// Own session (and so process group) with the pty as controlling terminal.
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	err = t.cmd.Start()
	_ = tty.Close() // the child has it; our copy would keep the pty from reporting EIO at exit
	if err != nil {
		_ = f.Close()
		return err
	}
	t.pty = f
	t.done = make(chan struct{})
	t.ready = make(chan struct{})
	t.input = make(chan []byte, 1024)
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.wg.Add(3)
	go t.wait()
	go t.write()
	go t.own()
	return nil
}

// wait reaps the child and wakes the owner so it can drain and report the exit.
func (t *terminal) wait() {
	defer t.wg.Done()
	err := t.cmd.Wait()
	if st := t.cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Exited() {
			code := ws.ExitStatus()
			t.exitCode = &code
		}
	} else if err != nil {
		t.log.Debug("wait", "err", err)
	}
	t.deadlineMu.Lock()
	t.exited = true
	close(t.done)
	_ = t.pty.SetReadDeadline(time.Now()) // wake a blocked Read
	t.deadlineMu.Unlock()
}

// write copies queued input to the pty.
func (t *terminal) write() {
	defer t.wg.Done()
	timer := time.NewTimer(readyTimeout)
	select {
	case <-t.ready:
	case <-timer.C: // a shell that never prompts still gets its input
	case <-t.done:
	case <-t.ctx.Done():
		return
	}
	timer.Stop()
	for {
		select {
		case <-t.ctx.Done():
			return
		case b := <-t.input:
			_, err := t.pty.Write(b)
			t.m.hub.mu.Lock()
			t.queued -= len(b)
			t.m.hub.mu.Unlock()
			if err != nil {
				t.log.Debug("pty write", "err", err)
				return
			}
		}
	}
}

// own reads the pty, runs shell integration, coalesces output and publishes.
func (t *terminal) own() {
	defer t.wg.Done()
	var (
		buf       = make([]byte, readBuffer)
		pending   []byte
		lastFlush time.Time
		drainFrom time.Time
		isReady   bool
	)
	markReady := func() {
		if !isReady {
			isReady = true
			close(t.ready)
		}
	}
	backlog := 0
	flush := func() {
		if len(pending) > 0 {
			backlog = t.m.publishOutput(t, ahp.Action{Type: ahp.TerminalData, Data: string(pending)})
			pending = pending[:0]
		}
		lastFlush = time.Now()
	}
	emit := func(ev shellint.Event) {
		if ev.Kind == shellint.DetectionAvailable || (ev.Kind == shellint.Data && !t.integrated) {
			markReady()
		}
		if ev.Kind == shellint.Data {
			pending = append(pending, ev.Text...)
			if len(pending) >= coalesceBytes {
				flush()
			}
			return
		}
		flush() // never merge data across a command, cwd or title boundary
		backlog = t.m.publishOutput(t, eventAction(ev))
	}
	for {
		if backlog > highWater {
			flush()
			backlog = t.waitForHolder()
		}
		n, err := t.pty.Read(buf)
		if n > 0 {
			if tap := t.m.cfg.Tap; tap != nil {
				tap(t.uri, buf[:n])
			}
			t.proc.Write(buf[:n], emit)
			// The first output after a quiet spell goes out at once (echo latency);
			// a busy stream is batched for up to coalesceWindow.
			if len(pending) > 0 && time.Since(lastFlush) >= coalesceWindow {
				flush()
			}
		}
		timedOut := errors.Is(err, os.ErrDeadlineExceeded)
		if err != nil && !timedOut {
			break // EIO: every slave fd is closed; or the master was closed
		}
		if timedOut {
			flush()
		}
		t.deadlineMu.Lock()
		exited := t.exited
		switch {
		case exited:
			// Drain what the shell wrote before exiting, but do not wait for a
			// background process that still holds the pty.
			if drainFrom.IsZero() {
				drainFrom = time.Now()
			}
			if (timedOut && n == 0) || time.Since(drainFrom) > drainMax {
				t.deadlineMu.Unlock()
				goto finish
			}
			_ = t.pty.SetReadDeadline(time.Now().Add(drainQuiet))
		case len(pending) > 0:
			_ = t.pty.SetReadDeadline(lastFlush.Add(coalesceWindow))
		default:
			_ = t.pty.SetReadDeadline(time.Time{})
		}
		t.deadlineMu.Unlock()
	}
finish:
	select {
	case <-t.done:
	case <-t.ctx.Done(): // disposed: the killer waits for the child itself
		<-t.done
	}
	t.proc.Close(emit)
	flush()
	t.m.terminalExited(t, t.exitCode)
}

// waitForHolder pauses until the claim holder's backlog drops below lowWater
// (the kernel buffer fills and the program blocks on write, so Ctrl-C stays
// responsive), or the terminal ends.
func (t *terminal) waitForHolder() int {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		b := t.m.holderBacklog(t)
		if b < lowWater {
			return b
		}
		select {
		case <-tick.C:
		case <-t.done:
			return 0
		case <-t.ctx.Done():
			return 0
		}
	}
}

func eventAction(ev shellint.Event) ahp.Action {
	switch ev.Kind {
	case shellint.DetectionAvailable:
		return ahp.Action{Type: ahp.TerminalCommandDetectionAvailable}
	case shellint.CommandExecuted:
		return ahp.Action{Type: ahp.TerminalCommandExecuted, CommandID: ev.ID, CommandLine: ev.CommandLine, Timestamp: ev.Timestamp}
	case shellint.CommandFinished:
		d := ev.DurationMs
		return ahp.Action{Type: ahp.TerminalCommandFinished, CommandID: ev.ID, ExitCode: ev.ExitCode, DurationMs: &d}
	case shellint.CwdChanged:
		return ahp.Action{Type: ahp.TerminalCwdChanged, Cwd: ev.Cwd}
	case shellint.TitleChanged:
		return ahp.Action{Type: ahp.TerminalTitleChanged, Title: ev.Title}
	}
	return ahp.Action{Type: ahp.TerminalData, Data: ev.Text}
}

// kill ends the shell: SIGHUP to its session, SIGKILL after the grace period,
// then waits for every goroutine and closes the pty.
func (t *terminal) kill(grace time.Duration) {
	select {
	case <-t.done:
	default:
		signalSession(t.cmd.Process.Pid, syscall.SIGHUP)
		timer := time.NewTimer(grace)
		select {
		case <-t.done:
			timer.Stop()
		case <-timer.C:
			signalSession(t.cmd.Process.Pid, syscall.SIGKILL)
			<-t.done
		}
	}
	// Jobs the shell left behind in its session get the same treatment.
	signalSession(t.cmd.Process.Pid, syscall.SIGKILL)
	t.cancel()
	_ = t.pty.SetReadDeadline(time.Now())
	t.wg.Wait()
	_ = t.pty.Close()
}

// resize sets the pty's window size without switching the master to blocking
// mode (see start).
func (t *terminal) resize(cols, rows int) error {
	rc, err := t.pty.SyscallConn()
	if err != nil {
		return err
	}
	ws := &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}
	var ioctlErr error
	if err := rc.Control(func(fd uintptr) { ioctlErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws) }); err != nil {
		return err
	}
	return ioctlErr
}

func setNonblock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var nbErr error
	if err := rc.Control(func(fd uintptr) { nbErr = syscall.SetNonblock(int(fd), true) }); err != nil {
		return err
	}
	return nbErr
}
