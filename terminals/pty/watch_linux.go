package pty

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// watcher watches the pidfds of all the package's processes, and the pty
// masters of waiting and idle readers and writers: one goroutine, parked
// in the runtime poller, for all of them, and none at all while nothing is
// watched. An idle terminal so holds no goroutine for its exit or its
// output.
var watcher fdWatcher

// watcherGoroutines counts running fdWatcher.loop goroutines (for tests).
var watcherGoroutines atomic.Int32

// fdWatcher is an epoll set of descriptors (level-triggered), each watched
// once, itself in the runtime poller.
type fdWatcher struct {
	mu      sync.Mutex
	ep      *os.File // nil until the first watch; then open for the life of the program
	epfd    int
	rc      syscall.RawConn
	wakefd  int              // an eventfd in the set: unwatch wakes the loop to let it stop
	onReady map[int32]func() // by descriptor
	running bool             // a loop goroutine is (or is about to be) serving onReady
	broken  error            // the loop failed: watch refuses, callers fall back
}

// watch calls onReady once fd reports events (EPOLLIN: readable, or for a
// pidfd its process has exited; EPOLLOUT: writable) or hangs up, or the
// watcher failed (onReady must then check), unless unwatch takes it back
// first. onReady runs on the watcher's goroutine and must not block. fd
// must stay open until then. An error means onReady will not be called.
func (w *fdWatcher) watch(fd int, events uint32, onReady func()) error {
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
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	w.onReady[int32(fd)] = onReady
	// Decided under mu, as the loop decides to stop: either it sees this
	// descriptor or we start a new one.
	if !w.running {
		w.running = true
		watcherGoroutines.Add(1)
		go w.loop()
	}
	return nil
}

// unwatch takes fd out of the set; false if it was not in it (onReady has
// run or is about to).
func (w *fdWatcher) unwatch(fd int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.onReady[int32(fd)]; !ok {
		return false
	}
	_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	delete(w.onReady, int32(fd))
	if len(w.onReady) == 0 {
		// The loop stops only once it wakes: make it.
		_, _ = unix.Write(w.wakefd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	}
	return true
}

// open creates the epoll set. It is never closed: one descriptor for the
// program, and no race between a closing loop and a new watch.
func (w *fdWatcher) open() error {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("epoll_create1", err)
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		_ = unix.Close(fd)
		return os.NewSyscallError("eventfd", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wakefd)}
	if err := unix.EpollCtl(fd, unix.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
		_, _ = unix.Close(fd), unix.Close(wakefd)
		return os.NewSyscallError("epoll_ctl", err)
	}
	// Non-blocking before os.NewFile, so that it goes in the runtime poller.
	if err := unix.SetNonblock(fd, true); err != nil {
		_, _ = unix.Close(fd), unix.Close(wakefd)
		return err
	}
	f := os.NewFile(uintptr(fd), "fd-watcher")
	rc, err := f.SyscallConn()
	if err != nil {
		_, _ = f.Close(), unix.Close(wakefd)
		return err
	}
	w.ep, w.epfd, w.rc, w.wakefd, w.onReady = f, fd, rc, wakefd, make(map[int32]func())
	return nil
}

// loop hands ready descriptors to their callbacks until none is watched.
func (w *fdWatcher) loop() {
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
			// Cannot happen short of a bug; hand every descriptor back so that
			// none waits forever (their callbacks check for themselves).
			w.broken = err
			for fd, fn := range w.onReady {
				_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
				ready = append(ready, fn)
			}
			clear(w.onReady)
		}
		for _, ev := range events[:n] {
			if ev.Fd == int32(w.wakefd) {
				var b [8]byte
				_, _ = unix.Read(w.wakefd, b[:]) // reset: unwatch emptied the set
				continue
			}
			if fn, ok := w.onReady[ev.Fd]; ok {
				// Out of the set before the callback may close the descriptor.
				_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(ev.Fd), nil)
				delete(w.onReady, ev.Fd)
				ready = append(ready, fn)
			}
		}
		stop := len(w.onReady) == 0
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
