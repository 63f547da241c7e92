// Package pty runs one process on a pseudo-terminal in its own session:
// start, read and write (honouring deadlines), resize, signal the session,
// wait. The exits of all its processes, and the masters of those whose
// reader or writer waits, are watched by one shared goroutine (an epoll
// set), so a quiet process holds no goroutine of its own. It knows nothing
// of AHP.
package pty

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

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
	master int         // the pty master's descriptor, non-blocking, out of the runtime poller (see await); -1: none
	log    *slog.Logger

	done     chan struct{} // closed by the waiter once the child is reaped
	exitCode *int          // set before done is closed
	waiter   sync.WaitGroup

	deadlineMu    sync.Mutex // orders the waiter's wake-up against the reader's deadlines
	readDeadline  time.Time  // zero: none
	writeDeadline time.Time
	deadlineMoved chan struct{} // closed, and replaced, when a deadline is set: wakes a waiting reader or writer
	exited        bool
	paused        bool   // PauseReading: the read deadline stays in the past
	interrupted   bool   // Interrupt: until the next SetReadDeadline, a reader is not parked
	wake          func() // a reader parked in the watcher (Read with wake), to call once

	// While keystrokes come (Typed), the reader waits for output on a
	// duplicate of the master in the runtime poller (readHot), as any Go
	// program reading a descriptor does, instead of through the shared
	// watcher: a keystroke's echo then wakes the reader's goroutine itself,
	// not the watcher's, which then woke the reader's. typedUntil ends the
	// spell (unix ns); hot and hotRC are the duplicate, the reader's own,
	// open only during a spell; hotWaiting (deadlineMu) says the reader
	// waits on it, so that setting a deadline wakes it.
	typedUntil atomic.Int64
	hot        *os.File
	hotRC      syscall.RawConn
	hotWaiting bool

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
	// The master as a bare descriptor, out of the runtime poller (see
	// await): a duplicate, made non-blocking; closing pty.Open's file takes
	// the original out of the poller.
	master, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	_ = f.Close()
	if err == nil {
		err = unix.SetNonblock(master, true)
		if err != nil {
			_ = unix.Close(master)
		}
	}
	if err != nil {
		_ = tty.Close()
		return nil, fmt.Errorf("pty master: %w", err)
	}
	if err := pty.Setsize(tty, &pty.Winsize{Cols: uint16(spec.Cols), Rows: uint16(spec.Rows)}); err != nil {
		_, _ = unix.Close(master), tty.Close()
		return nil, fmt.Errorf("size pty: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// Own session (and so process group) with the pty as controlling terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	err = cmd.Start()
	_ = tty.Close() // the child has it; our copy would keep the pty from reporting EIO at exit
	if err != nil {
		_ = unix.Close(master)
		return nil, fmt.Errorf("start %s: %w", spec.Argv[0], err)
	}
	p := newProcess(cmd.Process.Pid, -1, master, log)
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

// newProcess is a process on the pty master (-1: none).
func newProcess(pid, pidfd, master int, log *slog.Logger) *Process {
	return &Process{pid: pid, pidfd: pidfd, master: master, log: log, deadlineMoved: make(chan struct{})}
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
	if watcher.watch(p.pidfd, unix.EPOLLIN, func() { go finish() }) != nil {
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
	p.setDeadlinesLocked(time.Now(), p.writeDeadline) // wake a waiting Read
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
	if p.exited || p.paused || p.interrupted {
		return false // Read returns at once: its deadline is past
	}
	if p.closed.Load() {
		return false
	}
	p.wake = wake
	if watcher.watch(p.master, unix.EPOLLIN, p.unpark) != nil {
		p.wake = nil
		return false
	}
	return true
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
	if !watcher.unwatch(p.master) {
		return // the watcher's unpark is on its way
	}
	wake := p.wake
	p.wake = nil
	wake()
}

// Read reads once into buf() as soon as the master is readable. buf is
// called for each attempt, so the caller can take a buffer from a pool only
// when there is something to read; idle is called each time the pty has
// nothing to read, before the goroutine waits (send small output, give the
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
	for {
		if err := p.pastDeadline(&p.readDeadline); err != nil {
			if p.hot != nil && p.isPaused() {
				p.endHot() // handed over: nothing of the master stays open here
			}
			return 0, err
		}
		if p.closed.Load() { // a parked reader woken by Close: its descriptor may be another's by now
			return 0, os.ErrClosed
		}
		b := buf()
		n, err := rawRead(p.master, b)
		switch {
		case errors.Is(err, syscall.EINTR):
		case errors.Is(err, syscall.EAGAIN):
			idle()
			if n, err, ok := p.readHot(buf, idle); ok {
				if n > 0 || err != nil {
					return n, err
				}
				continue // woken by a deadline
			}
			if wake != nil && p.park(wake) {
				return 0, ErrParked
			}
			if err := p.await(p.master, unix.EPOLLIN, &p.readDeadline); err != nil {
				return 0, err
			}
		case n > 0:
			if n == len(b) && p.hot != nil {
				p.endHot() // a flood, not an echo (see readHot)
			}
			return n, nil
		case err == nil || errors.Is(err, syscall.EIO):
			return 0, io.EOF
		default:
			return 0, os.NewSyscallError("read", err)
		}
	}
}

// pastDeadline is os.ErrDeadlineExceeded once *deadline has passed.
func (p *Process) pastDeadline(deadline *time.Time) error {
	p.deadlineMu.Lock()
	d := *deadline
	p.deadlineMu.Unlock()
	if !d.IsZero() && !time.Now().Before(d) {
		return os.ErrDeadlineExceeded
	}
	return nil
}

// await waits until fd reports events (through the shared watcher),
// *deadline passes, or a deadline is set; the caller then tries
// again (and checks the deadline). The master stays out of the runtime
// poller, which watches a descriptor edge-triggered for its whole life and
// so woke an idle scheduler thread for each chunk the tty pushed during a
// flood while the reader was busy reading (docs/BENCHMARKS.md, "The pty master
// out of the runtime poller"); the watcher watches it only while a reader
// or writer waits for it.
func (p *Process) await(fd int, events uint32, deadline *time.Time) error {
	p.deadlineMu.Lock()
	d, moved := *deadline, p.deadlineMoved
	p.deadlineMu.Unlock()
	var expired <-chan time.Time
	if !d.IsZero() {
		wait := time.Until(d)
		if wait <= 0 {
			return nil
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		expired = t.C
	}
	ready := make(chan struct{}, 1) // the watcher's one report: it never blocks
	if err := watcher.watch(fd, events, func() {
		if trace.IsEnabled() {
			trace.Log(context.Background(), "termhost", "pty ready")
		}
		ready <- struct{}{}
	}); err != nil {
		return err
	}
	select {
	case <-ready:
	case <-moved:
		watcher.unwatch(fd)
	case <-expired:
		watcher.unwatch(fd)
	}
	return nil
}

// setDeadlinesLocked sets both deadlines and wakes a waiting reader and
// writer to look at them; deadlineMu held.
func (p *Process) setDeadlinesLocked(read, write time.Time) {
	p.readDeadline, p.writeDeadline = read, write
	close(p.deadlineMoved)
	p.deadlineMoved = make(chan struct{})
	if p.hotWaiting {
		_ = p.hot.SetReadDeadline(time.Now()) // wakes readHot
	}
}

// typedFor is how long after a keystroke the reader waits for output in
// the runtime poller (readHot): longer than the pause between keystrokes
// of someone typing, shorter than parkAfter in package terminals (an idle
// terminal holds no duplicate and no goroutine).
const typedFor = time.Second

// Typed tells the reader that a keystroke was written at now: for a while
// it waits for the echo on a descriptor of its own in the runtime poller
// (readHot) rather than through the shared watcher.
func (p *Process) Typed(now time.Time) {
	p.typedUntil.Store(now.Add(typedFor).UnixNano())
}

// readHot is Read's wait while keystrokes come (Typed): on the master's
// duplicate in the runtime poller, reading as soon as it is readable. ok is
// false when no keystroke came lately (the duplicate is then closed), or
// the reader must not wait there (the child exited, reading is paused or
// interrupted): the caller waits as usual. With ok, n and err are a read's
// result; neither set: woken by a deadline, the caller checks it.
func (p *Process) readHot(buf func() []byte, idle func()) (n int, err error, ok bool) {
	until := p.typedUntil.Load()
	if until == 0 || time.Now().UnixNano() >= until {
		p.endHot()
		return 0, nil, false
	}
	p.deadlineMu.Lock()
	if p.exited || p.paused || p.interrupted || p.closed.Load() {
		p.deadlineMu.Unlock()
		p.endHot()
		return 0, nil, false
	}
	if p.hot == nil {
		fd, err := unix.FcntlInt(uintptr(p.master), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			p.deadlineMu.Unlock()
			return 0, nil, false
		}
		f := os.NewFile(uintptr(fd), "pty-typed") // shares the master's O_NONBLOCK: in the runtime poller
		rc, err := f.SyscallConn()
		if err != nil {
			p.deadlineMu.Unlock()
			_ = f.Close()
			return 0, nil, false
		}
		p.hot, p.hotRC = f, rc
	}
	wait := time.Unix(0, until)
	if d := p.readDeadline; !d.IsZero() && d.Before(wait) {
		wait = d
	}
	_ = p.hot.SetReadDeadline(wait)
	p.hotWaiting = true
	rc := p.hotRC
	p.deadlineMu.Unlock()
	defer func() {
		p.deadlineMu.Lock()
		p.hotWaiting = false
		p.deadlineMu.Unlock()
	}()
	// The first try reads at once: the poller forgets readiness it saw
	// before this wait, so output that came since Read's last try is read
	// here, not waited for.
	first, size := true, 0
	werr := rc.Read(func(fd uintptr) bool {
		if !first && trace.IsEnabled() {
			trace.Log(context.Background(), "termhost", "pty ready")
		}
		for {
			b := buf()
			size = len(b)
			n, err = rawRead(int(fd), b)
			if !errors.Is(err, syscall.EINTR) {
				break
			}
		}
		if errors.Is(err, syscall.EAGAIN) {
			if !first {
				idle() // woken for nothing: as Read does before each wait
			}
			first = false
			n, err = 0, nil
			return false
		}
		return true
	})
	switch {
	case werr != nil: // a deadline (the spell's end, the reader's, or one set meanwhile)
		return 0, nil, true
	case n > 0:
		if n == size {
			p.endHot() // a flood, not an echo: no edge from the poller for each chunk of it
		}
		return n, nil, true
	case err == nil || errors.Is(err, syscall.EIO):
		return 0, io.EOF, true
	default:
		return 0, os.NewSyscallError("read", err), true
	}
}

// isPaused reports PauseReading in force.
func (p *Process) isPaused() bool {
	p.deadlineMu.Lock()
	defer p.deadlineMu.Unlock()
	return p.paused
}

// endHot closes the reader's duplicate of the master, if open (the reader
// calls it, or Close once the reader has returned).
func (p *Process) endHot() {
	p.deadlineMu.Lock()
	f := p.hot
	p.hot, p.hotRC = nil, nil
	p.deadlineMu.Unlock()
	if f != nil {
		_ = f.Close()
	}
}

// SetReadDeadline sets the read deadline that choose picks, knowing whether
// the child has exited; the waiter cannot wake the reader between the two
// (set is false to leave the deadline as it is). It returns exited.
func (p *Process) SetReadDeadline(choose func(exited bool) (d time.Time, set bool)) bool {
	p.deadlineMu.Lock()
	defer p.deadlineMu.Unlock()
	p.interrupted = false
	if d, set := choose(p.exited); set && !p.paused {
		p.setDeadlinesLocked(d, p.writeDeadline)
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
	now := time.Now()
	p.setDeadlinesLocked(now, now) // and a writer waiting on a full pty
	p.unparkLocked()
}

// ResumeReading undoes PauseReading (a hand-over that failed).
func (p *Process) ResumeReading() {
	p.deadlineMu.Lock()
	defer p.deadlineMu.Unlock()
	p.paused = false
	p.setDeadlinesLocked(time.Time{}, time.Time{})
}

// Control runs fn with the pty master's descriptor (to pass it to another
// process); it fails once the pty is closed.
func (p *Process) Control(fn func(fd uintptr)) error {
	if p.closed.Load() {
		return ErrClosed
	}
	fn(uintptr(p.master))
	return nil
}

// Write writes all of b to the pty, waiting for room while it is full. It
// fails at once after Interrupt.
func (p *Process) Write(b []byte) (int, error) {
	written := 0
	for written < len(b) {
		n, err := p.WriteSome(b[written:])
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// WriteSome writes what the pty takes of b, waiting for room while it
// takes nothing: it returns after at least one byte is written (unless b
// is empty), or fails, at once after Interrupt. A writer that needs to
// know how a slow program's reading goes calls it in a loop.
func (p *Process) WriteSome(b []byte) (int, error) {
	for {
		n, err := p.TryWrite(b)
		if err != nil || n > 0 || len(b) == 0 {
			return n, err
		}
		if err := p.awaitRoom(); err != nil {
			return 0, err
		}
	}
}

// awaitRoom waits until the pty takes input again, or a write deadline is
// set or passes. It watches a duplicate of the master: a reader may be
// waiting in the watcher's set for the master itself (Write is rare: a
// paste into a program that does not read).
func (p *Process) awaitRoom() error {
	fd, err := unix.FcntlInt(uintptr(p.master), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("dup", err)
	}
	defer unix.Close(fd)
	return p.await(fd, unix.EPOLLOUT, &p.writeDeadline)
}

// TryWrite writes what the pty takes of b at once, without waiting for
// room: 0 when its buffer is full. It fails after Interrupt.
func (p *Process) TryWrite(b []byte) (int, error) {
	if err := p.pastDeadline(&p.writeDeadline); err != nil {
		return 0, err
	}
	if p.closed.Load() {
		return 0, os.ErrClosed
	}
	for {
		n, err := unix.Write(p.master, b)
		switch {
		case errors.Is(err, syscall.EINTR):
		case errors.Is(err, syscall.EAGAIN):
			return 0, nil
		case err != nil:
			return 0, os.NewSyscallError("write", err)
		default:
			return n, nil
		}
	}
}

// Resize sets the pty's window size without switching the master to
// blocking mode (see Start).
func (p *Process) Resize(cols, rows int) error {
	if p.closed.Load() {
		return ErrClosed
	}
	ws := &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}
	if err := unix.IoctlSetWinsize(p.master, unix.TIOCSWINSZ, ws); err != nil {
		return fmt.Errorf("resize pty: %w", err)
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
	if p.master < 0 { // Finished
		return
	}
	now := time.Now()
	p.setDeadlinesLocked(now, now)
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
		p.endHot()        // the reader has returned: its duplicate would keep the pty open
		if p.master < 0 { // Finished
			return
		}
		if err := unix.Close(p.master); err != nil {
			p.closeErr = fmt.Errorf("close pty: %w", err)
		}
	})
	return p.closeErr
}

// rawRead is read(2) without telling the scheduler: the master is
// non-blocking, so the call returns within microseconds (at most the tty's
// wait for its flip-buffer worker), and the runtime's bookkeeping for a
// syscall that might block cost more than the read: during a flood sysmon
// kept waking to check the reader's syscall and hand its P to another
// thread (docs/BENCHMARKS.md, "The pty master out of the runtime poller").
func rawRead(fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return int(r), e
	}
	return int(r), nil
}
