// Package pty runs one process on a pseudo-terminal in its own session:
// start, read (through the runtime poller, honouring deadlines), write,
// resize, signal the session, wait. The exits of all its processes, and
// the output of those whose reader is idle, are watched by one shared
// goroutine (an epoll set), so a quiet process holds no goroutine of its
// own. It knows nothing of AHP.
package pty

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Spec is what to start.
type Spec struct {
	Argv       []string
	Env        []string
	Dir        string
	Cols, Rows int
	Logger     *slog.Logger // nil: discard
}

// Process is a child on a pty. Once it has exited, a waiter goroutine
// reaps it and closes Done.
type Process struct {
	pid    int
	pidfd  int         // -1: none (old kernel); closed by the waiter after reap
	reap   func() *int // reaps the child (waits for it without a pidfd) and returns the exit code (nil: signal or unknown)
	master *os.File
	rc     syscall.RawConn
	log    *slog.Logger

	done     chan struct{} // closed by the waiter once the child is reaped
	exitCode *int          // set before done is closed
	waiter   sync.WaitGroup

	deadlineMu  sync.Mutex // orders the waiter's wake-up against the reader's deadlines
	exited      bool
	paused      bool   // PauseReading: the read deadline stays in the past
	interrupted bool   // Interrupt: until the next SetReadDeadline, a reader is not parked
	wake        func() // a reader parked in the watcher (Read with wake), to call once

	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool // the master is closed: Resize is a no-op error
}

// ErrClosed is returned by Resize once the pty is closed (the terminal's
// process exited and its pty was released).
var ErrClosed = errors.New("pty closed")

// Start spawns the process with the pty as its controlling terminal.
func Start(spec Spec) (*Process, error) {
	if len(spec.Argv) == 0 {
		return nil, errors.New("pty: empty argv")
	}
	log := spec.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Env, cmd.Dir = spec.Env, spec.Dir
	f, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("open pty: %w", err)
	}
	// pty.Open calls Fd(), which leaves the master blocking; make it
	// non-blocking again so reads honour deadlines and Close unblocks them.
	if err := setNonblock(f); err != nil {
		_, _ = f.Close(), tty.Close()
		return nil, fmt.Errorf("pty non-blocking: %w", err)
	}
	// Sized through the slave: pty.Setsize on the master would call Fd(), which
	// puts the master in blocking mode and breaks read deadlines.
	if err := pty.Setsize(tty, &pty.Winsize{Cols: uint16(spec.Cols), Rows: uint16(spec.Rows)}); err != nil {
		_, _ = f.Close(), tty.Close()
		return nil, fmt.Errorf("size pty: %w", err)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		_, _ = f.Close(), tty.Close()
		return nil, fmt.Errorf("pty raw conn: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// Own session (and so process group) with the pty as controlling terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	err = cmd.Start()
	_ = tty.Close() // the child has it; our copy would keep the pty from reporting EIO at exit
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Argv[0], err)
	}
	p := &Process{pid: cmd.Process.Pid, pidfd: -1, master: f, rc: rc, log: log}
	// We are its parent: the pid cannot be reused before we reap it.
	if fd, err := unix.PidfdOpen(p.pid, unix.PIDFD_NONBLOCK); err == nil {
		p.pidfd = fd
	} // else (before Linux 5.10) cmd.Wait blocks a thread until the exit
	p.reap = func() *int {
		err := cmd.Wait() // returns at once when the pidfd reported the exit
		if cmd.ProcessState == nil {
			// Reaped by someone else in this process (a manager that adopted
			// it in a hand-over within one process, as tests do): the exit
			// code is theirs to report.
			p.log.Debug("wait", "err", err)
			return nil
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Exited() {
			code := ws.ExitStatus()
			return &code
		}
		if err != nil {
			p.log.Debug("wait", "err", err)
		}
		return nil
	}
	p.startWaiter()
	return p, nil
}

// startWaiter arranges for wait to run once the child has exited. Through
// the shared watcher, a running child holds no goroutine; without it (no
// pidfd, or epoll failed) a goroutine waits for the exit.
func (p *Process) startWaiter() {
	p.done = make(chan struct{})
	p.waiter.Add(1)
	if p.pidfd < 0 {
		go p.wait()
		return
	}
	finish := func() {
		awaitExit(p.pidfd) // at once after the watcher's report
		p.wait()
	}
	if watcher.watch(p.pidfd, func() { go finish() }) != nil {
		go finish()
	}
}

// Pid is the process id (and session id) of the child.
func (p *Process) Pid() int { return p.pid }

// Done is closed once the child has been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitCode is the child's exit status once Done is closed (nil if it was
// killed by a signal or reaped by someone else).
func (p *Process) ExitCode() *int { return p.exitCode }

// wait reaps the child and wakes a blocked reader so it can drain.
func (p *Process) wait() {
	defer p.waiter.Done()
	p.exitCode = p.reap()
	if p.pidfd >= 0 {
		_ = unix.Close(p.pidfd)
	}
	p.deadlineMu.Lock()
	p.exited = true
	close(p.done)
	_ = p.master.SetReadDeadline(time.Now()) // wake a blocked Read
	p.unparkLocked()
	p.deadlineMu.Unlock()
}

// ErrParked is Read's error when the pty had nothing to read and the wait
// went to the shared watcher: wake will be called.
var ErrParked = errors.New("pty: reader parked until output")

// park hands the wait for output to the watcher, which calls wake once the
// master is readable; so does anything that would end a blocked Read
// (exit, PauseReading, Interrupt). False: wait in Read as usual.
func (p *Process) park(wake func()) bool {
	p.deadlineMu.Lock()
	defer p.deadlineMu.Unlock()
	if p.exited || p.paused || p.interrupted || p.closed.Load() {
		return false // Read returns at once: its deadline is past
	}
	fd, ok := p.masterFD()
	if !ok {
		return false
	}
	p.wake = wake
	if watcher.watch(fd, p.unpark) != nil {
		p.wake = nil
		return false
	}
	return true
}

// masterFD is the master's descriptor; false once it is closed.
func (p *Process) masterFD() (int, bool) {
	fd := -1
	err := p.rc.Control(func(f uintptr) { fd = int(f) })
	return fd, err == nil
}

// unpark is the watcher's callback: the master is readable.
func (p *Process) unpark() {
	p.deadlineMu.Lock()
	wake := p.wake
	p.wake = nil
	p.deadlineMu.Unlock()
	if wake != nil {
		wake()
	}
}

// unparkLocked wakes a parked reader now, unless the watcher is about to
// (it took the master out of its set first); deadlineMu held.
func (p *Process) unparkLocked() {
	if p.wake == nil {
		return
	}
	if fd, ok := p.masterFD(); ok && !watcher.unwatch(fd) {
		return // the watcher's unpark is on its way
	}
	wake := p.wake
	p.wake = nil
	wake()
}

// Read reads once into buf() as soon as the master is readable. buf is
// called for each attempt, so the caller can take a buffer from a pool only
// when there is something to read; idle is called each time the pty has
// nothing to read, before the goroutine parks (send small output, give the
// buffer back). It returns io.EOF once every slave fd is closed (the
// child-exit EIO) and os.ErrDeadlineExceeded past the read deadline.
//
// With a wake (the caller has no read deadline to keep), a pty with nothing
// to read is not waited for: Read returns ErrParked and wake runs, once, on
// another goroutine when there is output, the child has exited, or
// PauseReading or Interrupt is called; the caller's goroutine can end
// meanwhile, and the reader's next goroutine calls Read again. wake must
// not block.
func (p *Process) Read(buf func() []byte, idle func(), wake func()) (int, error) {
	var (
		n      int
		rerr   error
		parked bool
	)
	err := p.rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Read(int(fd), buf())
			if !errors.Is(rerr, syscall.EINTR) {
				break
			}
		}
		if errors.Is(rerr, syscall.EAGAIN) {
			n, rerr = 0, nil
			idle()
			parked = wake != nil && p.park(wake)
			return parked
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	if parked {
		return 0, ErrParked
	}
	if n <= 0 {
		if rerr == nil || errors.Is(rerr, syscall.EIO) {
			rerr = io.EOF
		}
		return 0, rerr
	}
	return n, nil
}

// SetReadDeadline sets the read deadline that choose picks, knowing whether
// the child has exited; the waiter cannot wake the reader between the two
// (set is false to leave the deadline as it is). It returns exited.
func (p *Process) SetReadDeadline(choose func(exited bool) (d time.Time, set bool)) bool {
	p.deadlineMu.Lock()
	defer p.deadlineMu.Unlock()
	p.interrupted = false
	if d, set := choose(p.exited); set && !p.paused {
		_ = p.master.SetReadDeadline(d)
	}
	return p.exited
}

// PauseReading makes the reader's next Read fail with
// os.ErrDeadlineExceeded, and every one after it until ResumeReading,
// leaving unread output in the pty (a hand-over: the next reader gets it).
func (p *Process) PauseReading() {
	p.deadlineMu.Lock()
	defer p.deadlineMu.Unlock()
	p.paused = true
	_ = p.master.SetReadDeadline(time.Now())
	_ = p.master.SetWriteDeadline(time.Now()) // a writer parked on a full pty
	p.unparkLocked()
}

// ResumeReading undoes PauseReading (a hand-over that failed).
func (p *Process) ResumeReading() {
	p.deadlineMu.Lock()
	defer p.deadlineMu.Unlock()
	p.paused = false
	_ = p.master.SetReadDeadline(time.Time{})
	_ = p.master.SetWriteDeadline(time.Time{})
}

// Control runs fn with the pty master's descriptor (to pass it to another
// process) without switching it to blocking mode as File.Fd would.
func (p *Process) Control(fn func(fd uintptr)) error { return p.rc.Control(fn) }

// Write writes input to the pty. It fails at once after Interrupt.
func (p *Process) Write(b []byte) (int, error) { return p.master.Write(b) }

// TryWrite writes what the pty takes of b at once, without waiting for
// room: 0 when its buffer is full. It fails after Interrupt.
func (p *Process) TryWrite(b []byte) (int, error) {
	var (
		n    int
		werr error
	)
	err := p.rc.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), b)
			if !errors.Is(werr, syscall.EINTR) {
				return true // done either way: never park for room
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errors.Is(werr, syscall.EAGAIN):
		return 0, nil
	case werr != nil:
		return 0, werr
	}
	return n, nil
}

// Resize sets the pty's window size without switching the master to
// blocking mode (see Start).
func (p *Process) Resize(cols, rows int) error {
	if p.closed.Load() {
		return ErrClosed
	}
	ws := &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}
	var ioctlErr error
	if err := p.rc.Control(func(fd uintptr) { ioctlErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws) }); err != nil {
		return fmt.Errorf("resize pty: %w", err)
	}
	if ioctlErr != nil {
		return fmt.Errorf("resize pty: %w", ioctlErr)
	}
	return nil
}

// Signal sends sig to the child's whole session (never to pid 0: our own group).
func (p *Process) Signal(sig syscall.Signal) {
	if p.pid > 0 {
		signalSession(p.pid, sig)
	}
}

// Kill ends the child: SIGHUP to its session, SIGKILL after grace, then
// SIGKILL to any job it left in its session. It returns once the child is
// reaped.
func (p *Process) Kill(grace time.Duration) {
	select {
	case <-p.done:
	default:
		p.Signal(syscall.SIGHUP)
		timer := time.NewTimer(grace)
		select {
		case <-p.done:
			timer.Stop()
		case <-timer.C:
			p.Signal(syscall.SIGKILL)
			<-p.done
		}
	}
	p.Signal(syscall.SIGKILL)
}

// Interrupt wakes a reader and a writer blocked on the pty (a writer may
// be parked in write(2) on a full pty whose program does not read); they
// fail with os.ErrDeadlineExceeded. A reader parked in the watcher is
// woken too, and is not parked again before its next SetReadDeadline.
func (p *Process) Interrupt() {
	p.deadlineMu.Lock()
	defer p.deadlineMu.Unlock()
	p.interrupted = true
	if p.master == nil { // Finished
		return
	}
	_ = p.master.SetReadDeadline(time.Now())
	_ = p.master.SetWriteDeadline(time.Now())
	p.unparkLocked()
}

// Close closes the master once the child is reaped. Call it after the
// child has exited (or Kill) and after the reader and writer have returned.
// Later calls return the first call's result.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		p.waiter.Wait()
		p.deadlineMu.Lock()
		p.closed.Store(true)
		p.unparkLocked() // never left in the watcher's set once closed
		p.deadlineMu.Unlock()
		if p.master == nil { // Finished
			return
		}
		if err := p.master.Close(); err != nil {
			p.closeErr = fmt.Errorf("close pty: %w", err)
		}
	})
	return p.closeErr
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
