package pty

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// exits watches the pidfds of all the package's processes: one goroutine,
// parked in the runtime poller, for all of them, and none at all while no
// process runs. An idle terminal so holds no goroutine for its exit.
var exits exitWatcher

// watcherGoroutines counts running exitWatcher.loop goroutines (for tests).
var watcherGoroutines atomic.Int32

// exitWatcher is an epoll set of pidfds (level-triggered), itself in the
// runtime poller.
type exitWatcher struct {
	mu      sync.Mutex
	ep      *os.File // nil until the first watch; then open for the life of the program
	epfd    int
	rc      syscall.RawConn
	onExit  map[int32]func() // by pidfd
	running bool             // a loop goroutine is (or is about to be) serving onExit
	broken  error            // the loop failed: watch refuses, callers fall back
}

// watch calls onExit once the process of pidfd has exited (or the watcher
// failed: onExit must then check). onExit runs on the watcher's goroutine
// and must not block. pidfd must stay open until then. An error means
// onExit will not be called.
func (w *exitWatcher) watch(pidfd int, onExit func()) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return w.broken
	}
	if w.ep == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(pidfd)}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, pidfd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	w.onExit[int32(pidfd)] = onExit
	// Decided under mu, as the loop decides to stop: either it sees this
	// pidfd or we start a new one.
	if !w.running {
		w.running = true
		watcherGoroutines.Add(1)
		go w.loop()
	}
	return nil
}

// open creates the epoll set. It is never closed: one descriptor for the
// program, and no race between a closing loop and a new watch.
func (w *exitWatcher) open() error {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("epoll_create1", err)
	}
	// Non-blocking before os.NewFile, so that it goes in the runtime poller.
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return err
	}
	f := os.NewFile(uintptr(fd), "exit-watcher")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return err
	}
	w.ep, w.epfd, w.rc, w.onExit = f, fd, rc, make(map[int32]func())
	return nil
}

// loop hands exited processes to their callbacks until none is watched.
func (w *exitWatcher) loop() {
	defer watcherGoroutines.Add(-1)
	events := make([]unix.EpollEvent, 16)
	for {
		var (
			n    int
			werr error
		)
		// Take what is ready without blocking; park in the poller otherwise.
		err := w.rc.Read(func(fd uintptr) bool {
			for {
				n, werr = unix.EpollWait(int(fd), events, 0)
				if !errors.Is(werr, unix.EINTR) {
					return n > 0 || werr != nil
				}
			}
		})
		if err == nil && werr != nil {
			err = os.NewSyscallError("epoll_wait", werr)
		}
		if err != nil {
			n = 0
		}
		var ready []func()
		w.mu.Lock()
		if err != nil {
			// Cannot happen short of a bug; hand every process back so that
			// none waits forever (their callbacks wait for the exit).
			w.broken = err
			for fd, fn := range w.onExit {
				_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
				ready = append(ready, fn)
			}
			clear(w.onExit)
		}
		for _, ev := range events[:n] {
			if fn, ok := w.onExit[ev.Fd]; ok {
				// Out of the set before the callback may close the pidfd.
				_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(ev.Fd), nil)
				delete(w.onExit, ev.Fd)
				ready = append(ready, fn)
			}
		}
		stop := len(w.onExit) == 0
		if stop {
			w.running = false
		}
		w.mu.Unlock()
		for _, fn := range ready {
			fn()
		}
		if stop {
			return
		}
	}
}

// awaitExit returns once the pidfd's process has exited: at once if it has,
// else parked in the runtime poller on a duplicate of pidfd (the fallback
// without the watcher: one goroutine per process).
func awaitExit(pidfd int) {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if n > 0 {
			return
		}
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	fd, err := unix.FcntlInt(uintptr(pidfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd") // shares pidfd's O_NONBLOCK: in the poller
	defer f.Close()
	pollExit(f)
}
