package pty

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Adopt takes over a process started by another termhost (a hand-over):
// masterFD is its pty master, pidFD a pidfd of the process, opened by its
// parent while the process was alive, so the pid cannot have been reused.
//
// After an upgrade in place (the same process re-executed) the process is
// still this one's child: its exit is seen on the pidfd (by the shared
// watcher), then it is reaped with its exit code. Were it not a child, the
// exit code would be read from the pidfd (PIDFD_INFO_EXIT, Linux 6.15 and
// later) or reported as unknown, and whoever inherited the orphan would
// reap it.
func Adopt(masterFD, pidFD, pid int, log *slog.Logger) (*Process, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Non-blocking: the master, which Read and Write wait for through the
	// watcher; the pidfd so that the fallback without the watcher
	// (awaitExit) waits in the runtime poller.
	for _, fd := range []int{masterFD, pidFD} {
		if err := unix.SetNonblock(fd, true); err != nil {
			return nil, fmt.Errorf("adopt: non-blocking: %w", err)
		}
	}
	// The pidfd stays a bare descriptor (the watcher's epoll set has it),
	// closed by the waiter.
	p := newProcess(pid, pidFD, masterFD, log)
	p.reap = func() *int {
		if code, ok := reapChild(pid); ok {
			return code
		}
		return pidfdExitCode(pidFD)
	}
	p.startWaiter()
	return p, nil
}

// Finished is a process that had already exited when it was handed over:
// no pty, no pid, only its exit code.
func Finished(code *int) *Process {
	p := newProcess(0, -1, -1, nil)
	p.exitCode, p.done = code, make(chan struct{})
	p.exited = true
	p.closed.Store(true)
	close(p.done)
	return p
}

// pollExit returns once the pidfd's process has exited, parked in the
// runtime poller (awaitExit's fallback).
func pollExit(pidfd *os.File) {
	rc, err := pidfd.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		return err != nil || n > 0
	})
}

// reapChild reaps pid, which has exited, if it is this process's child. The
// pid cannot have been reused: a child's pid stays taken until it is reaped.
func reapChild(pid int) (code *int, ok bool) {
	var ws unix.WaitStatus
	for {
		got, err := unix.Wait4(pid, &ws, 0, nil) // a zombie by now: returns at once
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || got != pid {
			return nil, false // not our child (ECHILD)
		}
		if !ws.Exited() {
			return nil, true // killed by a signal
		}
		c := ws.ExitStatus()
		return &c, true
	}
}

// pidfdExitCode reads the exit code of an exited process through its pidfd,
// nil when the kernel cannot tell (before 6.15) or it died of a signal. The
// kernel records the code when the process is reaped, which its new parent
// does after the exit: at once for systemd (a subreaper), within seconds
// for some inits; the exit is reported once the code is known or after
// reapWait.
func pidfdExitCode(pidfd int) *int {
	deadline := time.Now().Add(reapWait)
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 200*time.Millisecond) {
		info := unix.PidfdInfo{Mask: unix.PIDFD_INFO_EXIT}
		if err := unix.IoctlPidfdInfo(pidfd, &info); err != nil {
			return nil // no PIDFD_GET_INFO
		}
		if info.Mask&unix.PIDFD_INFO_EXIT != 0 {
			ws := syscall.WaitStatus(info.Exit_code)
			if !ws.Exited() {
				return nil
			}
			code := ws.ExitStatus()
			return &code
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(pause)
	}
}

// reapWait is how long pidfdExitCode waits for the reaper.
const reapWait = 10 * time.Second
