package terminals

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
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
	// Keystroke echo: when the pty has nothing more to read and a keystroke
	// (an input of at most keystrokeBytes) was written in the last
	// echoWindow, pending output up to echoBytes (its echo) is sent at once
	// instead of waiting out the coalescing window. Once per keystroke, so
	// what a command prints after Enter is batched as before.
	keystrokeBytes = 8
	echoWindow     = 50 * time.Millisecond
	echoBytes      = 1 << 10
	// keepPending: a coalescing list longer than this is let go once the
	// output pauses, so idle terminals do not keep a burst's.
	keepPending  = 64
	inputSlots   = 256
	drainQuiet   = 50 * time.Millisecond // after exit: stop when the pty is quiet this long
	drainMax     = time.Second
	readyTimeout = 3 * time.Second

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

	started   chan struct{} // closed by Create once the terminal is live
	keystroke atomic.Int64  // unix ns of the last keystroke-sized input written, 0 once echoed

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
	t.started = make(chan struct{})
	t.ready = make(chan struct{})
	// Slots for input chunks while the shell does not read (the byte bound is
	// Config.InputQueue); each slot costs 24 bytes in every terminal.
	t.input = make(chan []byte, inputSlots)
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
	waitExit(t.cmd.Process.Pid)
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

// waitExit returns once the process has exited, without reaping it. It
// parks in the runtime poller on a pidfd, so a terminal waiting for its
// shell holds no OS thread (cmd.Wait alone blocks one in waitid for the
// shell's whole life). Without pidfds it returns at once and cmd.Wait
// blocks as before.
func waitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		// A pidfd polls readable once its process has exited.
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, 0)
		return err != nil || n > 0
	})
}

// write copies queued input to the pty. Input dispatched before the shell
// is ready is taken off the channel and held here, so the channel's slots
// only ever fill when the shell has stopped reading.
func (t *terminal) write() {
	defer t.wg.Done()
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	var early [][]byte
wait:
	for {
		select {
		case <-t.ready:
			break wait
		case <-timer.C: // a shell that never prompts still gets its input
			break wait
		case <-t.done:
			break wait
		case <-t.ctx.Done():
			return
		case b := <-t.input:
			early = append(early, b)
		}
	}
	for _, b := range early {
		if !t.writeInput(b) {
			return
		}
	}
	early = nil
	for {
		select {
		case <-t.ctx.Done():
			return
		case b := <-t.input:
			if !t.writeInput(b) {
				return
			}
		}
	}
}

func (t *terminal) writeInput(b []byte) bool {
	if len(b) <= keystrokeBytes {
		t.keystroke.Store(time.Now().UnixNano())
	}
	_, err := t.pty.Write(b)
	t.m.hub.mu.Lock()
	t.queued -= len(b)
	t.m.hub.mu.Unlock()
	if err != nil {
		t.log.Debug("pty write", "err", err)
		return false
	}
	return true
}

// echoDue reports, once, whether a keystroke was written recently (its echo
// is what the pty just gave).
func (t *terminal) echoDue() bool {
	k := t.keystroke.Load()
	return k != 0 && time.Now().UnixNano()-k < int64(echoWindow) && t.keystroke.CompareAndSwap(k, 0)
}

// readBuffers holds pty read buffers, so that a terminal waiting for output
// (most of them, most of the time) holds none.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, readBuffer); return &b }}

// own reads the pty, runs shell integration, coalesces output and publishes.
func (t *terminal) own() {
	defer t.wg.Done()
	select { // output and the exit are published only once Create is done
	case <-t.started:
	case <-t.ctx.Done():
	}
	var (
		buf       *[]byte  // from readBuffers while reading, nil while waiting
		pending   []string // output texts to coalesce, in order
		pendLen   int      // their bytes
		lastFlush time.Time
		drainFrom time.Time
		deadline  time.Time // the pty's read deadline as the owner last set it
		isReady   bool
	)
	markReady := func() {
		if !isReady {
			isReady = true
			close(t.ready)
		}
	}
	backlog := 0
	// flush publishes the pending output. lastFlush is when output was last
	// sent: a command or prompt boundary with nothing pending is not output,
	// so the first prompt after the integration's markers still goes at once.
	flush := func() {
		if pendLen > 0 {
			// One read's text goes out as it is; several are joined once.
			data := pending[0]
			if len(pending) > 1 {
				data = strings.Join(pending, "")
			}
			backlog = t.m.publishOutput(t, ahp.Action{Type: ahp.TerminalData, Data: data})
			clear(pending)
			pending, pendLen = pending[:0], 0
			lastFlush = time.Now()
		}
	}
	emit := func(ev shellint.Event) {
		if ev.Kind == shellint.DetectionAvailable || (ev.Kind == shellint.Data && !t.integrated) {
			markReady()
		}
		if ev.Kind == shellint.Data {
			if ev.Text != "" {
				pending = append(pending, ev.Text)
				pendLen += len(ev.Text)
			}
			if pendLen >= coalesceBytes {
				flush()
			}
			return
		}
		flush() // never merge data across a command, cwd or title boundary
		backlog = t.m.publishOutput(t, eventAction(ev))
	}
	// read is one non-blocking read of the master (through the runtime
	// poller, which honours the read deadline). When the pty is drained it
	// sends small pending output at once (keystroke echo) and returns the
	// buffer before the goroutine parks.
	var (
		n    int
		rerr error
	)
	read := func(fd uintptr) bool {
		if buf == nil {
			buf = readBuffers.Get().(*[]byte)
		}
		for {
			n, rerr = syscall.Read(int(fd), *buf)
			if !errors.Is(rerr, syscall.EINTR) {
				break
			}
		}
		if errors.Is(rerr, syscall.EAGAIN) {
			n, rerr = 0, nil
			if pendLen > 0 && pendLen <= echoBytes && t.echoDue() {
				flush()
			}
			if pendLen == 0 && cap(pending) > keepPending {
				pending = nil
			}
			readBuffers.Put(buf)
			buf = nil
			return false
		}
		if n <= 0 {
			n = 0
			if rerr == nil {
				rerr = io.EOF
			}
		}
		return true
	}
	rc, err := t.pty.SyscallConn()
	if err != nil {
		t.log.Warn("pty", "err", err)
		goto finish
	}
	for {
		if backlog > highWater {
			flush()
			backlog = t.waitForHolder()
		}
		n, rerr = 0, nil
		err := rc.Read(read)
		if err == nil {
			err = rerr
		}
		if n > 0 {
			if tap := t.m.cfg.Tap; tap != nil {
				tap(t.uri, (*buf)[:n])
			}
			t.proc.Write((*buf)[:n], emit)
			// The first output after a quiet spell goes out at once (echo latency);
			// a busy stream is batched for up to coalesceWindow.
			if pendLen > 0 && time.Since(lastFlush) >= coalesceWindow {
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
			first := drainFrom.IsZero()
			if first {
				drainFrom = time.Now()
			}
			if (!first && timedOut && n == 0) || time.Since(drainFrom) > drainMax {
				t.deadlineMu.Unlock()
				goto finish
			}
			deadline = time.Now().Add(drainQuiet)
			_ = t.pty.SetReadDeadline(deadline)
		case pendLen > 0:
			// Setting a deadline costs a timer update: only when it changes.
			if d := lastFlush.Add(coalesceWindow); !d.Equal(deadline) {
				deadline = d
				_ = t.pty.SetReadDeadline(d)
			}
		case !deadline.IsZero():
			deadline = time.Time{}
			_ = t.pty.SetReadDeadline(deadline)
		}
		t.deadlineMu.Unlock()
	}
finish:
	if buf != nil {
		readBuffers.Put(buf)
		buf = nil
	}
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
	// The writer may be parked in write(2) on a full pty (a program that
	// does not read its input): the deadline wakes it, it does not retry.
	_ = t.pty.SetWriteDeadline(time.Now())
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
